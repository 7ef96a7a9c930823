// The direct kernels' works on plain buffers (kernels/work/direct.h, docs/DESIGN.md "Collectives
// on plain buffers, in place"): the entry that exchanges the offers over the LL connections, the
// staged loops for parts a peer cannot reach, and the exit. Private to direct_kernel.cu's
// translation unit (an unnamed namespace), which includes it once.
#pragma once

#include "kernels/collectives/direct_common.cuh"

namespace mccl {
namespace {

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

}  // namespace
}  // namespace mccl
