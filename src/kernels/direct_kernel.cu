// The direct kernels: collectives read and written in place in the peers' symmetric windows
// or plain buffers, each block with the same block of every peer (kernels/direct.h says
// what each collective reads and writes). One kernel per
// arithmetic type (every operator), and one for data movement only; a translation unit of
// its own, so it builds in parallel with the others.
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "kernels/dev_reduce.cuh"
#include "kernels/dev_sync.cuh"
#include "kernels/direct.h"
#include "kernels/direct_launch.h"
#include "kernels/driver_launch.h"
#include "kernels/grid_dep.cuh"
#include "kernels/launch.h"
#include "kernels/ll_line.cuh"
#include "nccl.h"

namespace mccl {
namespace {

struct NoArith {};

// Spins until this rank's flag from peer reaches want (acquire: what the peer did before
// its flag is visible after it). False when aborted or past MCCL_TIMEOUT.
__device__ __forceinline__ bool waitFlag(const DevComm& comm, const uint64_t* p, uint64_t want, int peer) {
  uint64_t start = 0;
  for (uint32_t spins = 0;; ++spins) {
    if (ldAcquireSys(p) >= want) return true;
    if (spins == kSpinsPerCheck) {
      spins = 0;
      if (waitShouldStop(comm, &start, peer)) return false;
    }
  }
}

// The block's barrier with the same block of every rank: thread p signals rank p and
// waits for rank p's signal. release: the block's stores before it (ordered by the
// caller's __syncthreads) are visible to every peer before its flag. False when aborted.
template <typename Args>
__device__ __forceinline__ bool barrier(const Args& a, int ch, uint64_t target, bool release) {
  bool stop = false;
  const int p = threadIdx.x;
  if (p < a.nranks) {
    if (release) fenceSys(a.comm.fence);
    stVolatile(a.flags[p] + ch * kDirectMaxRanks + a.rank, target);
    if (p != a.rank) stop = !waitFlag(a.comm, a.flags[a.rank] + ch * kDirectMaxRanks + p, target, p);
  }
  return __syncthreads_or(stop) == 0;
}

// Peers' memory is read through the cache as volatile (fetched again, never a stale line).
__device__ __forceinline__ uint4 ld16(const uint8_t* p, bool peer) {
  return peer ? __ldcv(reinterpret_cast<const uint4*>(p)) : *reinterpret_cast<const uint4*>(p);
}
template <typename S>
__device__ __forceinline__ S ldElem(const uint8_t* p, bool peer) {
  S s;
  if constexpr (sizeof(S) == 1) {
    unsigned char b = peer ? static_cast<unsigned char>(__ldcv(reinterpret_cast<const char*>(p))) : *p;
    memcpy(&s, &b, 1);
  } else if constexpr (sizeof(S) == 2) {
    unsigned short b = peer ? __ldcv(reinterpret_cast<const unsigned short*>(p)) : *reinterpret_cast<const unsigned short*>(p);
    memcpy(&s, &b, 2);
  } else if constexpr (sizeof(S) == 4) {
    unsigned int b = peer ? __ldcv(reinterpret_cast<const unsigned int*>(p)) : *reinterpret_cast<const unsigned int*>(p);
    memcpy(&s, &b, 4);
  } else {
    unsigned long long b =
        peer ? __ldcv(reinterpret_cast<const unsigned long long*>(p)) : *reinterpret_cast<const unsigned long long*>(p);
    memcpy(&s, &b, 8);
  }
  return s;
}

// [lo, hi) of total for block ch of nch, in units of align, a power of two (the last block
// takes the rest).
__device__ __forceinline__ void blockRange(uint64_t total, int nch, int ch, uint64_t align, uint64_t* lo, uint64_t* hi) {
  uint64_t per = (total + nch - 1) / nch;
  per = (per + align - 1) & ~(align - 1);
  *lo = min(total, per * ch);
  *hi = min(total, *lo + per);
}

// Bytes [lo, hi) of src (this rank's) to the same place of every output dst[p] + dstOff,
// p < n, but those whose bit is set in skip.
template <typename Args>
__device__ __forceinline__ void copyOut(const Args& a, const uint8_t* src, uint8_t* const* dst, uint64_t dstOff,
                                        uint32_t skip, uint64_t lo, uint64_t hi) {
  const int n = a.nranks, tid = threadIdx.x, nt = blockDim.x;
  uintptr_t align = reinterpret_cast<uintptr_t>(src + lo);
#pragma unroll
  for (int p = 0; p < kDirectMaxRanks; ++p)
    if (p < n) align |= reinterpret_cast<uintptr_t>(dst[p] + dstOff + lo);
  const uint64_t nvec = (align & 15) == 0 ? (hi - lo) / 16 : 0;
  constexpr int U = 4;
  for (uint64_t base = tid; base < nvec; base += static_cast<uint64_t>(nt) * U) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t i = base + static_cast<uint64_t>(u) * nt;
      if (i < nvec) v[u] = ld16(src + lo + 16 * i, false);
    }
#pragma unroll
    for (int p = 0; p < kDirectMaxRanks; ++p) {
      if (p >= n || (skip >> p & 1)) continue;
      uint8_t* d = dst[p] + dstOff + lo;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const uint64_t i = base + static_cast<uint64_t>(u) * nt;
        if (i < nvec) *reinterpret_cast<uint4*>(d + 16 * i) = v[u];
      }
    }
  }
  for (uint64_t b = lo + nvec * 16 + tid; b < hi; b += nt) {
    const uint8_t x = src[b];
#pragma unroll
    for (int p = 0; p < kDirectMaxRanks; ++p)
      if (p < n && !(skip >> p & 1)) dst[p][dstOff + b] = x;
  }
}

// Elements [lo, hi) at srcOff of every rank's input, reduced in rank order (each input
// pre-multiplied for float ncclAvg, the sum divided for integer ncclAvg), into the same
// place of out[p] + dstOff for every p < nout (nout 1: this rank's only, out[me]).
template <typename S, typename Op, bool toAll, typename Args>
__device__ __forceinline__ void reduceOut(const Args& a, const DirectWork& w, uint64_t srcOff, uint64_t dstOff,
                                          uint64_t lo, uint64_t hi) {
  using T = DevT<S>;
  using A = typename T::A;
  constexpr int E = 16 / sizeof(S);
  constexpr uint64_t es = sizeof(S);
  const int n = a.nranks, me = a.rank, tid = threadIdx.x, nt = blockDim.x;
  const bool premul = w.premul != 0;
  const int postDiv = w.postDiv;
  S scalarS;
  memcpy(&scalarS, &w.scalarBits, sizeof scalarS);
  if (premul && w.scalarPtr) scalarS = *static_cast<const S*>(w.scalarPtr);
  const A scalar = premul ? T::load(scalarS) : A(0);
  uintptr_t align = 0;
#pragma unroll
  for (int p = 0; p < kDirectMaxRanks; ++p)
    if (p < n) {
      align |= reinterpret_cast<uintptr_t>(w.in[p] + (srcOff + lo) * es);
      if (toAll || p == me) align |= reinterpret_cast<uintptr_t>(w.out[p] + (dstOff + lo) * es);
    }
  const uint64_t nvec = (align & 15) == 0 ? (hi - lo) / E : 0;
  // Vectors in flight per thread and input: reads of a peer's memory wait a round trip
  // over NVLink, so each thread keeps several outstanding.
  constexpr int U = 4;
  for (uint64_t base = tid; base < nvec; base += static_cast<uint64_t>(nt) * U) {
    uint4 acc[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t i = base + static_cast<uint64_t>(u) * nt;
      if (i < nvec) {
        acc[u] = ld16(w.in[0] + (srcOff + lo) * es + 16 * i, me != 0);
        if (premul) acc[u] = vecScale<S>(acc[u], scalar);
      }
    }
#pragma unroll
    for (int p = 1; p < kDirectMaxRanks; ++p) {
      if (p >= n) break;
      uint4 x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const uint64_t i = base + static_cast<uint64_t>(u) * nt;
        if (i < nvec) x[u] = ld16(w.in[p] + (srcOff + lo) * es + 16 * i, me != p);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) acc[u] = vecOp<S, Op>(acc[u], premul ? vecScale<S>(x[u], scalar) : x[u]);
    }
    if (postDiv > 1) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        S x[E];
        memcpy(x, &acc[u], 16);
#pragma unroll
        for (int j = 0; j < E; ++j) x[j] = T::store(divideBy(T::load(x[j]), postDiv));
        memcpy(&acc[u], x, 16);
      }
    }
#pragma unroll
    for (int p = 0; p < kDirectMaxRanks; ++p) {
      if (p >= n || (!toAll && p != me)) continue;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const uint64_t i = base + static_cast<uint64_t>(u) * nt;
        if (i < nvec) *reinterpret_cast<uint4*>(w.out[p] + (dstOff + lo) * es + 16 * i) = acc[u];
      }
    }
  }
  for (uint64_t i = lo + nvec * E + tid; i < hi; i += nt) {
    A acc = T::load(ldElem<S>(w.in[0] + (srcOff + i) * es, me != 0));
    if (premul) acc = T::load(T::store(OpProd::f(acc, scalar)));
    for (int p = 1; p < n; ++p) {
      A x = T::load(ldElem<S>(w.in[p] + (srcOff + i) * es, me != p));
      if (premul) x = T::load(T::store(OpProd::f(x, scalar)));
      acc = T::load(T::store(Op::f(acc, x)));
    }
    if (postDiv > 1) acc = divideBy(acc, postDiv);
    const S v = T::store(acc);
    for (int p = 0; p < n; ++p)
      if (toAll || p == me) memcpy(w.out[p] + (dstOff + i) * es, &v, sizeof v);
  }
}

// The part of a reducing work that block ch runs: where it reads and writes. False where
// the block has nothing to do (a Reduce's non-root ranks). The collectives share two
// reduceOut calls per operator (into this rank's output, into every rank's: a two-shot
// AllReduce): one each took the build 16 inlined copies of the loops; one for both made
// the into-every-output choice a run-time one, and AllReduce and ReduceScatter of 256 KiB -
// 2 MiB in a graph 3-4 % slower (one shared H200, bench/results/gpu-1xH200-2026-12-02 call 1).
struct ReducePart {
  uint64_t srcOff = 0, dstOff = 0, lo = 0, hi = 0;
  bool toAll = false;
};
// Rank me's part of n ranks (a plain work's stager asks for each peer's); in elements, on
// 16-byte bounds of the type (E of them).
__device__ __forceinline__ bool reducePart(int n, int me, const DirectWork& w, int ch, ReducePart* r) {
  const uint64_t E = 16u / static_cast<uint32_t>(w.esize);
  switch (static_cast<Coll>(w.coll)) {
    case Coll::AllReduce:
      if (w.algo == kDirectOneShot) {
        blockRange(w.count, w.nchannels, ch, E, &r->lo, &r->hi);
      } else {
        // Part me of n (aligned), this block's share of it, into every rank's output.
        uint64_t plo, phi;
        blockRange(w.count, n, me, E, &plo, &phi);
        blockRange(phi - plo, w.nchannels, ch, E, &r->lo, &r->hi);
        r->srcOff = r->dstOff = plo;
        r->toAll = true;
      }
      return true;
    case Coll::ReduceScatter:
      blockRange(w.count, w.nchannels, ch, E, &r->lo, &r->hi);
      r->srcOff = static_cast<uint64_t>(me) * w.count;
      return true;
    default:  // Reduce: the root reads
      if (me != w.root) return false;
      blockRange(w.count, w.nchannels, ch, E, &r->lo, &r->hi);
      return true;
  }
}
template <typename S, typename Op, typename Args>
__device__ __forceinline__ void reduceWork(const Args& a, const DirectWork& w, const ReducePart& r) {
  if (r.toAll) reduceOut<S, Op, true>(a, w, r.srcOff, r.dstOff, r.lo, r.hi);
  else reduceOut<S, Op, false>(a, w, r.srcOff, r.dstOff, r.lo, r.hi);
}

template <typename S, typename Args>
__device__ __forceinline__ void runWork(const Args& a, const DirectWork& w, int ch) {
  const Coll coll = static_cast<Coll>(w.coll);
  if (coll == Coll::AllGather || coll == Coll::Broadcast) {
    const uint64_t es = w.esize;
    const int me = a.rank;
    uint64_t lo, hi;
    blockRange(w.count * es, w.nchannels, ch, 16, &lo, &hi);
    if (coll == Coll::AllGather) {
      const uint64_t at = static_cast<uint64_t>(me) * w.count * es;
      copyOut(a, w.in[me], w.out, at, w.in[me] == w.out[me] + at ? 1u << me : 0u, lo, hi);
    } else if (me == w.root) {
      copyOut(a, w.in[me], w.out, 0, w.in[me] == w.out[me] ? 1u << me : 0u, lo, hi);
    }
    return;
  }
  if constexpr (std::is_same<S, NoArith>::value) {
    __trap();  // the host launches reducing works only in the kernel of their type
  } else {
    ReducePart r;
    if (!reducePart(a.nranks, a.rank, w, ch, &r)) return;
    switch (w.red) {
      case kRedSum: reduceWork<S, OpSum>(a, w, r); break;
      case kRedProd: reduceWork<S, OpProd>(a, w, r); break;
      case kRedMax: reduceWork<S, OpMax>(a, w, r); break;
      default: reduceWork<S, OpMin>(a, w, r); break;
    }
  }
}

// MCCL_PROFILE's marks of the direct kernels, compiled in only where MCCL_DIRECT_PROFILE is
// 1 (a measurement build: scripts/direct-profile.sh). Compiled in but off, they cost the
// default path 0.4-0.55 us a call (one shared H200, AllReduce and ReduceScatter 1-4 MiB;
// bench/results/gpu-1xH200-2026-12-03b call 2). Thread 0 of each block adds the nanoseconds
// since its last mark to a phase's sum (dev_work.h, kProfDirect*), added to the counters at
// the block's end; a plain work's entry is split by the stamps of its first peer's thread
// (kProfDirectEntry*: the block's first barrier, the connection words loaded, the offers
// stored and both received; the rest is the staged inputs and the closing barrier).
#ifndef MCCL_DIRECT_PROFILE
#define MCCL_DIRECT_PROFILE 0
#endif
constexpr bool kDirectProfile = MCCL_DIRECT_PROFILE != 0;
struct DirectProf {
  unsigned long long last;
  unsigned long long sum[kProfDirectBlocks - kProfDirectWorks + 1];
  unsigned long long stamp[3];  // a plain entry's: after its first barrier, connections, offers
};
__device__ __noinline__ void directMark(DirectProf& dp, int word) {
  const unsigned long long now = globalTimer();
  if (word >= 0) dp.sum[word - kProfDirectWorks] += now - dp.last;
  dp.last = now;
}
// A plain entry's split, after it returned: from the stamps of its first peer's thread.
__device__ __noinline__ void directMarkEntry(DirectProf& dp) {
  const unsigned long long now = globalTimer();
  dp.sum[kProfDirectEntrySync - kProfDirectWorks] += dp.stamp[0] - dp.last;
  dp.sum[kProfDirectEntryConn - kProfDirectWorks] += dp.stamp[1] - dp.stamp[0];
  dp.sum[kProfDirectEntryOffer - kProfDirectWorks] += dp.stamp[2] - dp.stamp[1];
  dp.sum[kProfDirectEntry - kProfDirectWorks] += now - dp.last;
  dp.last = now;
}
__device__ __noinline__ void directFlush(DirectProf& dp, unsigned long long* out) {
  dp.sum[kProfDirectBlocks - kProfDirectWorks] = 1;
  for (int k = 0; k <= kProfDirectBlocks - kProfDirectWorks; ++k) atomicAdd(out + kProfDirectWorks + k, dp.sum[k]);
}
// The time once every value of vals is loaded (an empty asm that takes them waits for them).
template <typename T>
__device__ __forceinline__ uint64_t bitsOf(T v) {
  if constexpr (std::is_pointer<T>::value) return reinterpret_cast<uint64_t>(v);
  else return static_cast<uint64_t>(v);
}
template <typename... T>
__device__ __forceinline__ unsigned long long stampAfter(T... vals) {
  const uint64_t all = (bitsOf(vals) ^ ...);
  asm volatile("" ::"l"(all));
  return globalTimer();
}

// ---- Plain buffers (direct.h) --------------------------------------------------------------
// A plain work runs in three parts: plainEntry (the offers out and in, the staged parts the
// peers read of this rank's input), the collective (the kernel's own runWork where no part
// is staged, as on windows; plainGatherStaged or plainReduceStaged where some is), and
// plainExit (the done lines, the staged parts the peers wrote for this rank's output, the
// step counts). Entry and exit know no type (they move bytes), so they are compiled once;
// the staged reduction once a type.

// The ranks a work's loops need, for loops outside a launch's kernel (the staged ones).
struct RankView {
  int32_t rank;
  int32_t nranks;
};

// One peer's LL connection on a block's channel as a plain work uses it (shared memory).
struct PlainPeer {
  uint4* sendRegion;        // the peer's region that my lines go to (header, then slots)
  const uint4* recvRegion;  // mine, that the peer's lines come to
  uint64_t* sendCtrl;       // my persistent counts of steps sent and received
  uint64_t* recvCtrl;
  const uint64_t* sendHead; // steps of mine the peer has consumed (my memory)
  uint64_t* recvHead;       // the peer's word: steps of its I have consumed
  uint64_t sendStep, recvStep;
};
struct PlainShared {
  PlainPeer peer[kDirectMaxRanks];
  // The work the block runs: a window work's copy, or a plain one with every rank's
  // buffers as reached here (a peer's from its entry lines, null where it did not offer
  // them: its part then comes staged).
  DirectWork w;
  uint32_t staged;  // peers whose part this rank reads or writes staged
  uint32_t mineNull;  // peers this rank offered no input (bit p) or no output (bit 8 + p)
  int stop;
};

__device__ __forceinline__ uint4* regionLine(uint4* region, uint64_t off) { return region + off / 16; }
__device__ __forceinline__ const uint4* regionLine(const uint4* region, uint64_t off) { return region + off / 16; }
// Line j of a staged part whose first line is in the slot of step `step`, and its flag.
__device__ __forceinline__ uint64_t stagedIndex(uint64_t step, uint64_t j, uint32_t* flag) {
  const uint64_t st = step + j / kLlLines;
  *flag = static_cast<uint32_t>(st + 1);
  return ConnRegion::kDataOff / 16 + (st % kLlSlots) * kLlLines + j % kLlLines;
}
__device__ __forceinline__ int tailBytes(uint64_t nbytes, uint64_t j) {
  return nbytes - 8 * j >= 8 ? 8 : static_cast<int>(nbytes - 8 * j);
}

// Bytes [0, nbytes) of src, staged into a peer's slots from step's.
__device__ __forceinline__ void stageOut(uint4* region, uint64_t step, const uint8_t* src, uint64_t nbytes) {
  constexpr int U = 4;
  const uint64_t lines = (nbytes + 7) / 8, nt = blockDim.x;
  for (uint64_t j0 = threadIdx.x; j0 < lines; j0 += nt * U) {
    uint64_t v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t j = j0 + u * nt;
      v[u] = j < lines ? load8(src + 8 * j, tailBytes(nbytes, j)) : 0;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t j = j0 + u * nt;
      if (j >= lines) continue;
      uint32_t flag;
      const uint64_t at = stagedIndex(step, j, &flag);
      llStore(region + at, v[u], flag);
    }
  }
}

// A peer's staged bytes [0, nbytes) from my slots (from step's) into dst. False when stopped.
__device__ __forceinline__ bool unstageIn(uint8_t* dst, const uint4* region, uint64_t step, uint64_t nbytes,
                                          const DevComm& comm, int* stop, int peer) {
  constexpr int U = 4;
  const uint64_t lines = (nbytes + 7) / 8, nt = blockDim.x;
  for (uint64_t j0 = threadIdx.x; j0 < lines; j0 += nt * U) {
    const uint4* at[U];
    uint32_t flag[U], live = 0;
    uint64_t v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t j = j0 + u * nt;
      at[u] = region + stagedIndex(step, j, &flag[u]);
      if (j < lines) live |= 1u << u;
    }
    if (!llPollLines<U>(v, at, flag, live, &comm, stop, peer)) return false;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t j = j0 + u * nt;
      if (j < lines) store8(dst + 8 * j, v[u], tailBytes(nbytes, j));
    }
  }
  return true;
}

// An AllGather's bytes of block ch: [lo, hi) of a rank's.
__device__ __forceinline__ void gatherRange(const DirectWork& w, int ch, uint64_t* lo, uint64_t* hi) {
  blockRange(w.count * w.esize, w.nchannels, ch, 16, lo, hi);
}

// The entry of a plain work's block: its connections with each peer, the offers out and
// in (into sh.w), then the parts of this rank's input its peers read that it did not offer
// them, staged into their slots. False when stopped.
__device__ __noinline__ bool plainEntry(const DevComm& comm, int me, int n, int ch, PlainShared& sh,
                                        unsigned long long* stamp) {
  const int p = threadIdx.x;
  const DirectWork& w = sh.w;  // this rank's offers until thread p puts peer p's in their place
  const Coll coll = static_cast<Coll>(w.coll);
  const bool gather = coll == Coll::AllGather;
  const bool twoShot = coll == Coll::AllReduce && w.algo == kDirectTwoShot;
  int* const stop = &sh.stop;
  const bool stamps = kDirectProfile && stamp != nullptr && p == (me == 0 ? 1 : 0);  // MCCL_PROFILE
  if (stamps) stamp[0] = globalTimer();
  if (p < n && p != me) {
    // The connections' words and the step counts, all loaded at once into registers (a
    // store into shared memory between two of them would order them: a round trip each).
    const int sidx = connIndex(comm, ConnClass::Ll, ch, true), ridx = connIndex(comm, ConnClass::Ll, ch, false);
    const DevConn* const sc = devConn(comm, p, sidx);
    const DevConn* const rc = devConn(comm, p, ridx);
    uint64_t* const sendCtrl = devCtrl(comm, p, sidx) + kCtrlStep;
    uint64_t* const recvCtrl = devCtrl(comm, p, ridx) + kCtrlStep;
    uint8_t* const stail = reinterpret_cast<uint8_t*>(sc->tail);
    const uint8_t* const rtail = reinterpret_cast<const uint8_t*>(rc->tail);
    const uint64_t* const sendHead = sc->head;
    uint64_t* const recvHead = rc->head;
    const uint64_t sendStep = *sendCtrl, recvStep = *recvCtrl;
    uint4* const sendRegion = reinterpret_cast<uint4*>(stail - ConnRegion::kFlagOff);
    const uint4* const recvRegion = reinterpret_cast<const uint4*>(rtail - ConnRegion::kFlagOff);
    const uint32_t flag = static_cast<uint32_t>(sendStep + 1), rflag = static_cast<uint32_t>(recvStep + 1);
    if (stamps) stamp[1] = stampAfter(stail, rtail, sendHead, recvHead, sendStep, recvStep);
    uint8_t* const myIn = w.in[p];
    uint8_t* const myOut = w.out[p];
    llStore(regionLine(sendRegion, kPlainLineIn), reinterpret_cast<uint64_t>(myIn), flag);
    llStore(regionLine(sendRegion, kPlainLineOut), reinterpret_cast<uint64_t>(myOut), flag);
    // Both lines polled together (read one after the other, the second took a load of its
    // own once the first had come: 0.07-0.16 us a call, one shared H200).
    const uint4* const lines[2] = {regionLine(recvRegion, kPlainLineIn), regionLine(recvRegion, kPlainLineOut)};
    const uint32_t lineFlags[2] = {rflag, rflag};
    uint64_t offered[2];
    llPollLines<2>(offered, lines, lineFlags, 3u, &comm, stop, p);  // stopped: null, and stop is set
    uint8_t* const in = reinterpret_cast<uint8_t*>(offered[0]);
    uint8_t* const out = reinterpret_cast<uint8_t*>(offered[1]);
    if (stamps) stamp[2] = stampAfter(in, out);
    PlainPeer& P = sh.peer[p];
    P.sendRegion = sendRegion;
    P.recvRegion = recvRegion;
    P.sendCtrl = sendCtrl;
    P.recvCtrl = recvCtrl;
    P.sendHead = sendHead;
    P.recvHead = recvHead;
    P.sendStep = sendStep;
    P.recvStep = recvStep;
    sh.w.in[p] = in;
    sh.w.out[p] = out;
    if (myIn == nullptr || myOut == nullptr)
      atomicOr(&sh.mineNull, (myIn == nullptr ? 1u << p : 0u) | (myOut == nullptr ? 1u << (8 + p) : 0u));
    // Staged lines go into the peer's slots only once every step sent before this work was
    // consumed (the header lines need no credit).
    if ((!gather && myIn == nullptr) || ((gather || twoShot) && out == nullptr))
      llWaitCredit(sendHead, sendStep, &comm, stop, p);
  }
  if (__syncthreads_or(*reinterpret_cast<volatile int*>(stop))) return false;
  uint32_t staged = 0;
  for (int q = 0; q < n; ++q)
    if (q != me && (gather ? sh.w.out[q] == nullptr : sh.w.in[q] == nullptr || (twoShot && sh.w.out[q] == nullptr)))
      staged |= 1u << q;
  if (p == 0) sh.staged = staged;
  if (!gather) {
    const uint64_t es = w.esize;
    for (int q = 0; q < n; ++q) {
      if (q == me || !(sh.mineNull >> q & 1)) continue;  // q reads this rank's input in place
      ReducePart rq;
      reducePart(n, q, w, ch, &rq);
      stageOut(sh.peer[q].sendRegion, sh.peer[q].sendStep, w.in[me] + (rq.srcOff + rq.lo) * es, (rq.hi - rq.lo) * es);
    }
  }
  __syncthreads();  // sh.staged
  return true;
}

// The exit of a plain work's block: every peer is done with this rank's buffers, and what it
// wrote into them is visible (a system fence before the done line where this block wrote
// into peers); then the parts the peers staged for this rank's output (it offered them
// none), and the step counts. False when stopped.
__device__ __noinline__ bool plainExit(const DevComm& comm, int me, int n, int ch, PlainShared& sh) {
  const int p = threadIdx.x;
  const DirectWork& w = sh.w;
  const Coll coll = static_cast<Coll>(w.coll);
  const bool gather = coll == Coll::AllGather;
  const bool twoShot = coll == Coll::AllReduce && w.algo == kDirectTwoShot;
  int* const stop = &sh.stop;
  __syncthreads();
  if (p < n && p != me && !*reinterpret_cast<volatile int*>(stop)) {
    PlainPeer& P = sh.peer[p];
    if (gather || twoShot) fenceSys(comm.fence);
    llStore(regionLine(P.sendRegion, kPlainLineDone), 0, static_cast<uint32_t>(P.sendStep + 1));
    llRead(regionLine(P.recvRegion, kPlainLineDone), static_cast<uint32_t>(P.recvStep + 1), &comm, stop, p);
  }
  if (__syncthreads_or(*reinterpret_cast<volatile int*>(stop))) return false;
  if (gather || twoShot) {
    const uint64_t es = w.esize;
    for (int q = 0; q < n; ++q) {
      if (q == me || !(sh.mineNull >> (8 + q) & 1)) continue;  // q wrote into this rank's output
      uint64_t lo, hi, dst;
      if (gather) {
        gatherRange(w, ch, &lo, &hi);
        dst = static_cast<uint64_t>(q) * w.count * es + lo;
      } else {
        ReducePart rq;
        reducePart(n, q, w, ch, &rq);
        lo = rq.lo * es;
        hi = rq.hi * es;
        dst = (rq.dstOff + rq.lo) * es;
      }
      const PlainPeer& P = sh.peer[q];
      if (!unstageIn(w.out[me] + dst, P.recvRegion, P.recvStep + (twoShot ? kPlainSteps / 2 : 0), hi - lo, comm, stop,
                     q))
        break;
    }
  }
  if (__syncthreads_or(*reinterpret_cast<volatile int*>(stop))) return false;
  if (p < n && p != me) {
    PlainPeer& P = sh.peer[p];
    *P.sendCtrl = P.sendStep + kPlainSteps;
    *P.recvCtrl = P.recvStep + kPlainSteps;
    stVolatile(P.recvHead, P.recvStep + kPlainSteps);
  }
  return true;
}

// An AllGather with staged peers: this rank's block into the outputs of those that offered
// theirs (and its own, out of place), into the slots of the others.
__device__ __noinline__ void plainGatherStaged(int me, int n, int ch, PlainShared& sh) {
  const DirectWork& w = sh.w;
  const uint64_t at = static_cast<uint64_t>(me) * w.count * w.esize;
  uint64_t lo, hi;
  gatherRange(w, ch, &lo, &hi);
  for (int q = 0; q < n; ++q)
    if (sh.staged >> q & 1) stageOut(sh.peer[q].sendRegion, sh.peer[q].sendStep, w.in[me] + lo, hi - lo);
  copyOut(RankView{me, n}, w.in[me], w.out, at, sh.staged | (w.in[me] == w.out[me] + at ? 1u << me : 0u), lo, hi);
}

// x op y by a work's operator (DevRed), for the staged reductions below, which are no hot
// path: one loop a type instead of one an operator.
template <typename S>
__device__ __forceinline__ uint4 vecRed(uint8_t red, uint4 x, uint4 y) {
  switch (red) {
    case kRedProd: return vecOp<S, OpProd>(x, y);
    case kRedMax: return vecOp<S, OpMax>(x, y);
    case kRedMin: return vecOp<S, OpMin>(x, y);
    default: return vecOp<S, OpSum>(x, y);
  }
}
template <typename A>
__device__ __forceinline__ A scalarRed(uint8_t red, A x, A y) {
  switch (red) {
    case kRedProd: return OpProd::f(x, y);
    case kRedMax: return OpMax::f(x, y);
    case kRedMin: return OpMin::f(x, y);
    default: return OpSum::f(x, y);
  }
}

// A reduction with staged peers: reduceOut into this rank's output, the staged parts read
// from their lines (two lines a vector, or the line that holds an element), in the same
// order and with the same roundings as reduceOut, so every rank's result has the same bits
// whichever way each part came; then a two-shot's result from this rank's output into the
// peers' outputs or slots.
template <typename S>
__device__ __noinline__ void plainReduceStaged(const DevComm& comm, int me, int n, int ch, PlainShared& sh) {
  using T = DevT<S>;
  using A = typename T::A;
  constexpr int E = 16 / sizeof(S);
  constexpr uint64_t es = sizeof(S);
  const DirectWork& w = sh.w;
  int* const stop = &sh.stop;
  ReducePart r;
  reducePart(n, me, w, ch, &r);
  const int tid = threadIdx.x, nt = blockDim.x;
  const bool premul = w.premul != 0;
  const int postDiv = w.postDiv;
  S scalarS;
  memcpy(&scalarS, &w.scalarBits, sizeof scalarS);
  if (premul && w.scalarPtr) scalarS = *static_cast<const S*>(w.scalarPtr);
  const A scalar = premul ? T::load(scalarS) : A(0);
  uint8_t* const out = w.out[me] + (r.dstOff + r.lo) * es;
  uintptr_t align = reinterpret_cast<uintptr_t>(out);
  for (int q = 0; q < n; ++q)
    if (w.in[q]) align |= reinterpret_cast<uintptr_t>(w.in[q] + (r.srcOff + r.lo) * es);
  const uint64_t nvec = (align & 15) == 0 ? (r.hi - r.lo) / E : 0;
  for (uint64_t k = tid; k < nvec; k += nt) {
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (int q = 0; q < n; ++q) {
      uint4 x;
      if (w.in[q]) {
        x = ld16(w.in[q] + (r.srcOff + r.lo) * es + 16 * k, q != me);
      } else {
        const PlainPeer& P = sh.peer[q];
        const uint4* at[2];
        uint32_t flag[2];
        uint64_t v[2];
        at[0] = P.recvRegion + stagedIndex(P.recvStep, 2 * k, &flag[0]);
        at[1] = P.recvRegion + stagedIndex(P.recvStep, 2 * k + 1, &flag[1]);
        llPollLines<2>(v, at, flag, 3u, &comm, stop, q);
        x = make_uint4(static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[0] >> 32), static_cast<uint32_t>(v[1]),
                       static_cast<uint32_t>(v[1] >> 32));
      }
      if (premul) x = vecScale<S>(x, scalar);
      acc = q == 0 ? x : vecRed<S>(w.red, acc, x);
    }
    if (postDiv > 1) {
      S x[E];
      memcpy(x, &acc, 16);
#pragma unroll
      for (int j = 0; j < E; ++j) x[j] = T::store(divideBy(T::load(x[j]), postDiv));
      memcpy(&acc, x, 16);
    }
    *reinterpret_cast<uint4*>(out + 16 * k) = acc;
  }
  // Elements (buffers of a reduction are aligned to their type: typed loads and stores).
  for (uint64_t k = nvec * E + tid; k < r.hi - r.lo; k += nt) {
    A acc = A(0);
    for (int q = 0; q < n; ++q) {
      S e;
      if (w.in[q]) {
        e = ldElem<S>(w.in[q] + (r.srcOff + r.lo + k) * es, q != me);
      } else {
        const PlainPeer& P = sh.peer[q];
        uint32_t flag;
        const uint64_t word = llRead(P.recvRegion + stagedIndex(P.recvStep, k * es / 8, &flag), flag, &comm, stop, q);
        const uint64_t bits = word >> (8 * (k * es % 8));  // its bytes, lowest first
        memcpy(&e, &bits, sizeof e);
      }
      A x = T::load(e);
      if (premul) x = T::load(T::store(OpProd::f(x, scalar)));
      acc = q == 0 ? x : T::load(T::store(scalarRed(w.red, acc, x)));
    }
    if (postDiv > 1) acc = divideBy(acc, postDiv);
    *reinterpret_cast<S*>(out + k * es) = T::store(acc);
  }
  if (w.coll != static_cast<uint8_t>(Coll::AllReduce) || w.algo != kDirectTwoShot) return;
  // A two-shot's result, from this rank's output into the peers' (or their slots, from the
  // second half of its steps).
  __syncthreads();
  const uint64_t lo = (r.dstOff + r.lo) * es, hi = (r.dstOff + r.hi) * es;
  uint32_t skip = 1u << me;
  for (int q = 0; q < n; ++q)
    if (q != me && w.out[q] == nullptr) {
      skip |= 1u << q;
      stageOut(sh.peer[q].sendRegion, sh.peer[q].sendStep + kPlainSteps / 2, w.out[me] + lo, hi - lo);
    }
  copyOut(RankView{me, n}, w.out[me], w.out, 0, skip, lo, hi);
}

// Block ch runs its share of every work that uses ch, each between an entry and an exit
// barrier. Its flag count lives in this rank's own slot of its barrier array (only this
// rank writes it), so eager launches and graph replays go on from where the last left.
// Works on plain buffers bring their own barriers (plainEntry, plainExit); a launch of only
// such works has no barrier arrays (DirectArgs::flags null).
template <int MW, typename S>
__global__ void __launch_bounds__(kMaxThreads, 1) directKernel(const __grid_constant__ DirectArgs<MW> a) {
  __shared__ uint64_t epoch;
  __shared__ PlainShared plain;
  __shared__ DirectProf prof;
  const int ch = blockIdx.x;
  const bool profiled = kDirectProfile && a.comm.prof != nullptr && threadIdx.x == 0;  // MCCL_PROFILE
  if (profiled) {
    for (unsigned long long& v : prof.sum) v = 0;
    directMark(prof, -1);
  }
  gridDepWait();  // the parameters only, before: nothing the last kernel wrote (grid_dep.cuh)
  if (threadIdx.x == 0 && a.flags[a.rank]) epoch = ldVolatile(a.flags[a.rank] + ch * kDirectMaxRanks + a.rank);
  if (threadIdx.x == 0) plain.stop = 0;  // a stopped block leaves: 0 for every work after
  __syncthreads();
  uint64_t e = epoch;
  if (profiled) directMark(prof, kProfDirectStart);
  for (int wi = 0; wi < a.nworks; ++wi) {
    const DirectWork& w = a.works[wi];
    if (ch >= w.nchannels) continue;
    if (profiled) {
      prof.sum[kProfDirectWorks - kProfDirectWorks] += 1;
      prof.sum[kProfDirectPlain - kProfDirectWorks] += w.plain;
    }
    // Every work runs from its copy in shared memory (a plain one's with the peers' places
    // its entry brought): one call site of the loops for both kinds, which build once. The
    // alternatives cost the windows' path (one shared H200, bench/results/gpu-1xH200-
    // 2026-12-03): a reference to either the parameters or shared memory made every load of
    // the work a generic one (1-1.7 us a call slower), the places held in registers spilled
    // (0.6-1.2 us), two call sites took the build twice as long and were 0.1-0.5 us slower
    // at 1-2 MiB, 3.6 us at 8 MiB. From shared memory the windows' path is as fast as
    // main's (from the parameters) at 512 KiB - 2 MiB, and its reductions 1.1-1.45x faster
    // at 4-8 MiB (call 6).
    // The work into shared memory here, where its loads are the parameters' own (inside the
    // entry, through a generic reference to them, thread 0's copy took 1.8 us: bench/results/
    // gpu-1xH200-2026-12-03b call 3).
    if (threadIdx.x == 0) {
      plain.w = w;
      plain.mineNull = 0;
    }
    if (w.plain) {
      __syncthreads();
      if (!plainEntry(a.comm, a.rank, a.nranks, ch, plain, kDirectProfile && a.comm.prof ? prof.stamp : nullptr))
        return;
      if (profiled) directMarkEntry(prof);
    } else {
      if (!barrier(a, ch, ++e, false)) return;  // its __syncthreads_or publishes the copy
    }
    if (profiled && !w.plain) directMark(prof, kProfDirectEntry);
    if (!w.plain || !plain.staged) {
      runWork<S>(a, plain.w, ch);
    } else if (w.coll == static_cast<uint8_t>(Coll::AllGather)) {
      plainGatherStaged(a.rank, a.nranks, ch, plain);
    } else if constexpr (!std::is_same<S, NoArith>::value) {
      plainReduceStaged<S>(a.comm, a.rank, a.nranks, ch, plain);
    }
    if (kDirectProfile && a.comm.prof) {  // the same in every thread
      __syncthreads();
      if (profiled) directMark(prof, kProfDirectRun);
    }
    if (w.plain) {
      if (!plainExit(a.comm, a.rank, a.nranks, ch, plain)) return;
    } else {
      __syncthreads();
      if (!barrier(a, ch, ++e, true)) return;
    }
    if (profiled) directMark(prof, kProfDirectExit);
  }
  if (profiled) directFlush(prof, a.comm.prof);
}

template <int MW>
using DirectKernelFn = void (*)(DirectArgs<MW>);

template <int MW>
DirectKernelFn<MW> directKernelFor(bool reduces, int type) {
  if (!reduces) return directKernel<MW, NoArith>;
  return withType(type, [](auto t) -> DirectKernelFn<MW> { return directKernel<MW, typename decltype(t)::type>; });
}

template <int MW>
size_t stackMax() {
  size_t most = 0;
  cudaFuncAttributes attr;
  for (int t = -1; t < ncclNumTypes; ++t)
    if (cudaFuncGetAttributes(&attr, directKernelFor<MW>(t >= 0, t)) == cudaSuccess && attr.localSizeBytes > most)
      most = attr.localSizeBytes;
  return most;
}

}  // namespace

size_t directKernelStackBytesMax() {
  const size_t most = std::max(stackMax<kDirectSmallLaunch>(), stackMax<kDirectLaunch>());
  cudaGetLastError();
  return most;
}

ncclResult_t launchDirectKernel(const DirectLaunch& l, const void* args, cudaStream_t stream, const char** error) {
  // Through the driver where it can (kernels/driver_launch.h): each kernel's CUfunction is
  // looked up once a device, [small][type, or ncclNumTypes for data movement].
  static DriverFunctions functions[2][ncclNumTypes + 1];
  static GridDepDevices gridDep;  // the direct kernels wait for the previous grid (PDL)
  const void* fn = l.small ? reinterpret_cast<const void*>(directKernelFor<kDirectSmallLaunch>(l.reduces, l.type))
                           : reinterpret_cast<const void*>(directKernelFor<kDirectLaunch>(l.reduces, l.type));
  const CUresult cr = driverLaunch(fn, &functions[l.small ? 0 : 1][l.reduces ? l.type : ncclNumTypes],
                                   static_cast<unsigned>(l.blocks), static_cast<unsigned>(l.threads), args, stream,
                                   &gridDep);
  if (cr == CUDA_SUCCESS) return ncclSuccess;
  if (cr != CUDA_ERROR_NOT_SUPPORTED) {
    *error = driverCalls().describe(cr);
    return ncclUnhandledCudaError;
  }
  const dim3 grid(l.blocks), block(l.threads);
  if (l.small)
    directKernelFor<kDirectSmallLaunch>(l.reduces, l.type)<<<grid, block, 0, stream>>>(
        *static_cast<const DirectArgs<kDirectSmallLaunch>*>(args));
  else
    directKernelFor<kDirectLaunch>(l.reduces, l.type)<<<grid, block, 0, stream>>>(
        *static_cast<const DirectArgs<kDirectLaunch>*>(args));
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    *error = cudaGetErrorString(e);
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

}  // namespace mccl
