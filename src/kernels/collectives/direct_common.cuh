// What the direct kernels' works share (direct_kernel.cu): the flag waits and the block
// barrier with the same block of every peer, peer loads, the ranges a block takes, the
// copy and reduction loops of a work whose every part is reachable in place (windows, and
// plain buffers whose peers offered them), and MCCL_PROFILE's marks. Private to
// direct_kernel.cu's translation unit (an unnamed namespace), which includes it once.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "kernels/primitives/dev_reduce.cuh"
#include "kernels/primitives/dev_sync.cuh"
#include "kernels/work/direct.h"
#include "kernels/primitives/ll_line.cuh"

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
// 1 (a measurement build: scripts/kernel-profile.sh direct). Compiled in but off, they cost the
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

}  // namespace
}  // namespace mccl
