// The LL protocol: small and medium messages between GPUs of one node.
//
// Every rank sends the data a peer needs straight to that peer (all pairs, one hop), in
// 16-byte lines that carry 8 bytes of data and two copies of a flag (dev_work.h). The
// receiver spins on the line itself: no fence, no separate flag store, no barrier between
// the data and its signal. Per step (one slot of kLlLines lines) the block synchronises
// once, after which each receiving thread tells its peer that the slot may be reused.
//
//   AllReduce      send my slice to every peer; reduce every rank's slice, in rank order
//   ReduceScatter  send peer p my part of its block; reduce my block, in rank order
//   Reduce         non-roots send their slice to the root; the root reduces, in rank order
//   AllGather      send my slice to every peer; store every peer's slice in its block
//   Broadcast      the root sends its slice to every peer
//   Send / Recv    one peer (its own connection class, LlP2p)
//
// Reducing in rank order makes every rank's AllReduce result bitwise identical.
//
// A work runs on nchannels blocks; channel c moves bytes [c * per, (c + 1) * per) of every
// rank's block (per rounded up to 16 bytes), in steps of kLlPayload bytes.
#pragma once

#include <stdint.h>

#include <type_traits>

#include "kernels/primitives/dev_reduce.cuh"
#include "kernels/primitives/dev_sync.cuh"
#include "kernels/work/dev_work.h"
#include "kernels/primitives/ll_line.cuh"
#include "nccl.h"

// A measurement build (scripts/kernel-profile.sh ll) stamps the lean LL kernel's block start
// in parts (llStartStamp); compiled in, the stamps would cost the default path its overlap.
#ifndef MCCL_LL_PROFILE
#define MCCL_LL_PROFILE 0
#endif

namespace mccl {

// One peer's LL connections as a block uses them for one work (in shared memory).
struct LlPeer {
  uint4* sendSlots;          // the peer's FIFO (written over NVLink)
  const uint64_t* sendHead;  // steps the peer has consumed (my memory, written by the peer)
  uint64_t* sendStepPtr;     // my persistent count of steps sent
  uint64_t sendStep;         // steps sent before this work
  uint64_t credit;           // steps the peer had consumed at setup, as far as known (kCtrlCredit)
  const uint4* recvSlots;    // my FIFO
  uint64_t* recvHead;        // the peer's word: steps I have consumed
  uint64_t* recvStepPtr;
  uint64_t recvStep;         // steps received before this work
};

// MCCL_LL_PROFILE: the stages of a lean block's start that llStartStamp stamps (ProfWord's
// kProfLlStartParam .. kProfLlStartRest).
constexpr int kLlStartStamps = kProfLlStamped - kProfLlStartParam;

struct LlShared {
  LlPeer peer[kLlMaxRanks];  // collectives: by rank; Send/Recv: slot 0
  int abort;
  uint64_t entryNs;  // MCCL_PROFILE: when the block started (thread 0), until its first work
  // MCCL_PROFILE (thread 0, LlProf): the work's sums per LL word and the last stamp. Here,
  // not in registers: held there for the whole work (16 of them, profiling or not), they
  // pushed the LL128 loops into spilling.
  unsigned long long profSum[kProfDirectWorks - kProfLlSteps];
  uint64_t profLast;
#if MCCL_LL_PROFILE
  uint64_t startNs[kLlStartStamps];  // the block start's stamps (llStartStamp), 0 where not reached
#endif
};

// MCCL_LL_PROFILE: thread 0 stamps stage i of its block's start once dep (a value the stage
// loaded or computed) has arrived: the predicated trap needs dep, and a warp issues in order,
// so the timer is read after it. Nothing in the default build.
template <typename V>
__device__ __forceinline__ void llStartStamp(LlShared& sh, int i, V dep) {
#if MCCL_LL_PROFILE
  if (threadIdx.x != 0 || sh.entryNs == 0) return;
  uint64_t t, d;
  if constexpr (std::is_pointer<V>::value) d = reinterpret_cast<uintptr_t>(dep);
  else d = static_cast<uint64_t>(dep);
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.eq.u64 p, %1, 0x5eedf00dcafe;\n\t@p trap;\n\tmov.u64 %0, %%globaltimer;\n\t}"
      : "=l"(t)
      : "l"(d)
      : "memory");
  sh.startNs[i] = t;
#else
  (void)sh, (void)i, (void)dep;
#endif
}

constexpr int kLlUnroll = 4;  // lines in flight per thread (data movement)

// ---- Lines ------------------------------------------------------------------------------------
// (One line's store and reads, and the 8 bytes of user memory it carries: ll_line.cuh.)

// A thread's U lines of a slot from one peer: lines i0, i0 + nt, ... (0 for those from
// `lines` on), written for flag. Every line's load is issued back to back, then all are
// checked, then only the lines not yet written are loaded again, together, until none is
// left: one memory round trip for all of them once they have arrived. Read one after the
// other (llRead), each line cost a round trip of its own, since a line's check comes before
// the next volatile load in program order (ll128RecvBatch found the same for LL128's
// peers). A stopped work (abort, MCCL_TIMEOUT, another thread) leaves 0 in the lines not
// read.
template <int U>
__device__ __forceinline__ void llReadLines(uint64_t (&v)[U], const uint4* base, int i0, int nt, int lines,
                                            uint32_t flag, const DevComm* comm, int* abort, int peer) {
  uint32_t stale = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    v[u] = 0;
    if (i0 + u * nt < lines) stale |= 1u << u;
  }
  uint64_t start = 0;
  for (uint32_t spins = 0; stale; ++spins) {
    uint32_t d0[U], f0[U], d1[U], f1[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      d0[u] = d1[u] = f0[u] = f1[u] = 0;
      if (stale >> u & 1)
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(d0[u]), "=r"(f0[u]), "=r"(d1[u]), "=r"(f1[u]) : "l"(base + i0 + u * nt) : "memory");
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if ((stale >> u & 1) && f0[u] == flag && f1[u] == flag) {
        v[u] = static_cast<uint64_t>(d1[u]) << 32 | d0[u];
        stale &= ~(1u << u);
      }
    }
    if (stale && spins == kSpinsPerCheck) {
      spins = 0;
      if (*reinterpret_cast<volatile int*>(abort)) return;
      if (waitShouldStop(*comm, &start, peer)) {
        *reinterpret_cast<volatile int*>(abort) = 1;
        return;
      }
    }
  }
}

// Branch-free (a nibble per type): the loads beside it are issued together, not after a
// branch on the type (the lean LL kernel's start waited on its work's type, then on its count:
// two parameter loads in a row, 0.35 - 0.5 us of the block's start on one H100).
__host__ __device__ __forceinline__ size_t typeBytes(uint8_t t) {
  static_assert(ncclInt8 == 0 && ncclUint8 == 1 && ncclInt32 == 2 && ncclUint32 == 3 && ncclInt64 == 4 &&
                    ncclUint64 == 5 && ncclFloat16 == 6 && ncclFloat32 == 7 && ncclFloat64 == 8 &&
                    ncclBfloat16 == 9 && ncclFloat8e4m3 == 10 && ncclFloat8e5m2 == 11,
                "the table's order is nccl.h's");
  constexpr uint64_t kBytes = 0x112842884411ull;  // types 11 .. 0
  return t < 12 ? static_cast<size_t>((kBytes >> (4 * t)) & 0xf) : 8;
}

// ---- Arithmetic on 8-byte words ---------------------------------------------------------------

// kWordAcc (LL128): the 16-bit floats accumulate in the word itself, each step's result
// rounded to T, as the Simple protocol (vecOp) and NCCL's own half and bf16 sums do; sums
// with the type's paired adds. Four float accumulators a word spilled the LL128 kernels'
// registers (356 bytes), and bf16 and half AllReduce ran 12-17 % slower than float for the
// same bytes on LL128 at 128 KiB - 4 MiB; now as fast as float (one H100, bench/results/
// gpu-1xH100-2026-11-25d). LL, which has registers to spare, keeps float accumulators (in
// the word it measured 1-5 % slower). Two ranks get the same bits either way (one
// rounding); with more, LL128 rounds once a rank. The other types keep A per element.
template <typename T, typename Op, bool kWordAcc = false>
struct LlRed {
  using A = typename DevT<T>::A;
  static constexpr int E = 8 / sizeof(T);
  static constexpr bool kPacked = kWordAcc && sizeof(T) == 2;
  struct WideAcc {
    A a[E];
  };
  struct PackedAcc {
    uint64_t w;
  };
  using Acc = std::conditional_t<kPacked, PackedAcc, WideAcc>;
  static __device__ __forceinline__ void unpack(uint64_t w, T (&t)[E]) { memcpy(t, &w, 8); }
  static __device__ __forceinline__ uint64_t pack(const T (&t)[E]) {
    uint64_t w;
    memcpy(&w, t, 8);
    return w;
  }
  static __device__ __forceinline__ void first(Acc& acc, uint64_t w) {
    if constexpr (kPacked) {
      acc.w = w;
    } else {
      T t[E];
      unpack(w, t);
#pragma unroll
      for (int e = 0; e < E; ++e) acc.a[e] = DevT<T>::load(t[e]);
    }
  }
  // acc op= w, with the operator O (Op, or the work's own: LlTypedRt).
  template <typename O>
  static __device__ __forceinline__ void addWith(Acc& acc, uint64_t w) {
    if constexpr (kPacked && std::is_same<O, OpSum>::value) {
      // Sums on pairs in the type's own arithmetic (one correctly rounded add each).
      using T2 = std::conditional_t<std::is_same<T, __half>::value, __half2, __nv_bfloat162>;
      T2 x[2], y[2];
      memcpy(x, &acc.w, 8);
      memcpy(y, &w, 8);
      x[0] = __hadd2(x[0], y[0]);
      x[1] = __hadd2(x[1], y[1]);
      memcpy(&acc.w, x, 8);
      return;
    }
    T t[E];
    unpack(w, t);
    if constexpr (kPacked) {
      T x[E];
      unpack(acc.w, x);
#pragma unroll
      for (int e = 0; e < E; ++e) x[e] = DevT<T>::store(O::f(DevT<T>::load(x[e]), DevT<T>::load(t[e])));
      acc.w = pack(x);
    } else {
#pragma unroll
      for (int e = 0; e < E; ++e) acc.a[e] = O::f(acc.a[e], DevT<T>::load(t[e]));
    }
  }
  static __device__ __forceinline__ void add(Acc& acc, uint64_t w) { addWith<Op>(acc, w); }
  static __device__ __forceinline__ uint64_t finish(const Acc& acc, int postDiv) {
    if constexpr (kPacked) {
      if (postDiv <= 1) return acc.w;
      T t[E];
      unpack(acc.w, t);
#pragma unroll
      for (int e = 0; e < E; ++e) t[e] = DevT<T>::store(divideBy(DevT<T>::load(t[e]), postDiv));
      return pack(t);
    } else {
      T t[E];
#pragma unroll
      for (int e = 0; e < E; ++e) t[e] = DevT<T>::store(postDiv > 1 ? divideBy(acc.a[e], postDiv) : acc.a[e]);
      return pack(t);
    }
  }
  static __device__ __forceinline__ uint64_t premul(uint64_t w, A s) {
    T t[E];
    unpack(w, t);
#pragma unroll
    for (int e = 0; e < E; ++e) t[e] = DevT<T>::store(OpProd::f(DevT<T>::load(t[e]), s));
    return pack(t);
  }
  static __device__ __forceinline__ A scalar(const DevWork& w) {
    if (!w.premul) return A(0);
    T s;
    if (w.scalarPtr) {
      s = *static_cast<const T*>(w.scalarPtr);
    } else {
      uint64_t b = w.scalarBits;
      memcpy(&s, &b, sizeof s);
    }
    return DevT<T>::load(s);
  }
};

// How a reducing LL work does its arithmetic, inlined into every kernel compiled for the
// type: the same code whichever kernel runs a work (kWordAcc: every LL128 work, never an LL
// one), so every rank of an AllReduce ends with the same bits.
template <typename T, typename Op, bool kWordAcc = false>
struct LlTyped {
  using R = LlRed<T, Op, kWordAcc>;
  // Lines in flight per thread: 4, or 2 for the 1-byte types (eight accumulators a line);
  // more spills registers under the 128-register limit of 512-thread blocks.
  static constexpr int kUnroll = sizeof(T) >= 2 ? 4 : 2;
  using Acc = typename R::Acc;
  typename R::A scalar;
  bool premul;
  int postDiv;
  __device__ __forceinline__ explicit LlTyped(const DevWork& w)
      : scalar(R::scalar(w)), premul(w.premul != 0), postDiv(w.postDiv) {}
  __device__ __forceinline__ uint64_t pre(uint64_t v) const { return premul ? R::premul(v, scalar) : v; }
  __device__ __forceinline__ void first(Acc& a, uint64_t v) const { R::first(a, v); }
  __device__ __forceinline__ void add(Acc& a, uint64_t v) const { R::add(a, v); }
  __device__ __forceinline__ uint64_t finish(const Acc& a) const { return R::finish(a, postDiv); }
};

// LlTyped with the operator chosen per work at run time (DevWork::red): the LL kernels
// compiled for one type (ll_kernel.cu) serve sum, prod, max and min (and avg and PreMulSum,
// which are sums with a divide or a pre-multiply) without a kernel per operator. The same
// LlRed arithmetic as LlTyped<T, Op, kWordAcc>, so a work gets the same bits whichever
// kernel runs it; the operator is the same for every thread of a work, so the branch costs
// a compare.
template <typename T, bool kWordAcc = false>
struct LlTypedRt {
  using R = LlRed<T, OpSum, kWordAcc>;
  static constexpr int kUnroll = LlTyped<T, OpSum>::kUnroll;
  using Acc = typename R::Acc;
  typename R::A scalar;
  bool premul;
  int postDiv;
  uint8_t op;
  __device__ __forceinline__ explicit LlTypedRt(const DevWork& w)
      : scalar(R::scalar(w)), premul(w.premul != 0), postDiv(w.postDiv), op(w.red) {}
  __device__ __forceinline__ uint64_t pre(uint64_t v) const { return premul ? R::premul(v, scalar) : v; }
  __device__ __forceinline__ void first(Acc& a, uint64_t v) const { R::first(a, v); }
  __device__ __forceinline__ void add(Acc& a, uint64_t v) const {
    switch (op) {
      case kRedProd: R::template addWith<OpProd>(a, v); break;
      case kRedMax: R::template addWith<OpMax>(a, v); break;
      case kRedMin: R::template addWith<OpMin>(a, v); break;
      default: R::template addWith<OpSum>(a, v); break;
    }
  }
  __device__ __forceinline__ uint64_t finish(const Acc& a) const { return R::finish(a, postDiv); }
};

// MCCL_PROFILE: thread 0's time per phase of each step, added to DevComm::prof at the end;
// the first work of an LL kernel's block also counts the time since the block started.
struct LlProf {
  unsigned long long* out;
  LlShared* sh;
  __device__ __forceinline__ explicit LlProf(const DevComm& c, LlShared* s)
      : out(threadIdx.x == 0 ? c.prof : nullptr), sh(s) {
    if (!out) return;
#pragma unroll
    for (int k = 0; k < kProfDirectWorks - kProfLlSteps; ++k) sh->profSum[k] = 0;
    sh->profLast = globalTimer();
    if (sh->entryNs) {
      sh->profSum[kProfLlStart - kProfLlSteps] += sh->profLast - sh->entryNs;
      sh->profSum[kProfLlStarts - kProfLlSteps] += 1;
#if MCCL_LL_PROFILE
      sh->startNs[kLlStartStamps - 1] = sh->profLast;  // the last stage ends here
      // The start's parts, where every stamp was taken (the lean one-work form).
      bool all = true;
      for (int i = 0; i < kLlStartStamps; ++i) all = all && sh->startNs[i] != 0;
      if (all) {
        uint64_t last = sh->entryNs;
        for (int i = 0; i < kLlStartStamps; ++i) {
          atomicAdd(out + kProfLlStartParam + i, static_cast<unsigned long long>(sh->startNs[i] - last));
          last = sh->startNs[i];
        }
        atomicAdd(out + kProfLlStamped, 1ull);
      }
      for (int i = 0; i < kLlStartStamps; ++i) sh->startNs[i] = 0;
#endif
      sh->entryNs = 0;
    }
  }
  __device__ __forceinline__ void mark(int word) {
    if (!out) return;
    const uint64_t now = globalTimer();
    sh->profSum[word - kProfLlSteps] += now - sh->profLast;
    sh->profLast = now;
  }
  __device__ __forceinline__ void step(uint64_t bytes) {
    if (!out) return;
    sh->profSum[0] += 1;
    sh->profSum[kProfLlBytes - kProfLlSteps] += bytes;
  }
  __device__ __forceinline__ void flush() {
    if (!out) return;
#pragma unroll
    for (int k = 0; k < kProfDirectWorks - kProfLlSteps; ++k) atomicAdd(out + kProfLlSteps + k, sh->profSum[k]);
  }
};

// ---- One work ---------------------------------------------------------------------------------

struct LlRange {
  uint64_t total;  // bytes of one rank's block (AllGather/ReduceScatter) or of the message
  uint64_t off;    // this channel's bytes within the block
  uint64_t len;
  uint64_t nsteps;
};

// Channel ch's part of a block of count elements (every rank's block has the same count).
__device__ __forceinline__ LlRange llRange(const DevWork& w, int64_t count, size_t esize, int ch) {
  LlRange r;
  r.total = static_cast<uint64_t>(count) * esize;
  const int nch = w.s.nchannels > 0 ? w.s.nchannels : 1;
  const uint64_t per = (r.total / nch + 15 + (r.total % nch ? 1 : 0)) & ~uint64_t(15);
  r.off = per * ch < r.total ? per * ch : r.total;
  r.len = r.total - r.off < per ? r.total - r.off : per;
  r.nsteps = (r.len + kLlPayload - 1) / kLlPayload;
  return r;
}
__device__ __forceinline__ LlRange llRange(const DevWork& w, size_t esize, int ch) {
  return llRange(w, w.s.count, esize, ch);
}

__device__ __forceinline__ bool llIsP2p(const DevWork& w) { return w.s.coll == Coll::Send || w.s.coll == Coll::Recv; }

// The connections of an LL-family work: each protocol has its own FIFOs, because a line of
// one format can look valid to a reader of the other.
__host__ __device__ __forceinline__ ConnClass llConnClass(uint8_t proto, bool p2p) {
  if (proto == kProtoLl128) return p2p ? ConnClass::Ll128P2p : ConnClass::Ll128;
  return p2p ? ConnClass::LlP2p : ConnClass::Ll;
}

__device__ __forceinline__ bool llSendsTo(const DevWork& w, int r) { return allPairsSendsTo(w.s, r); }
__device__ __forceinline__ bool llRecvsFrom(const DevWork& w, int r) { return allPairsRecvsFrom(w.s, r); }

// Where thread r's slot of work w on channel ch finds its connections and their control
// words: the launch's parameters only, nothing an earlier kernel wrote, so the lean kernels
// take it before their grid wait and the wait overlaps its parameter loads.
struct LlSetupAt {
  const DevConn* sconn;
  const DevConn* rconn;
  uint64_t* sctrl;
  uint64_t* rctrl;
  bool slot;  // this thread loads a slot
  bool sends, recvs;
};
__device__ __forceinline__ LlSetupAt llSetupAt(const DevComm& comm, const DevWork& w, int ch) {
  const bool p2p = llIsP2p(w);
  const int nslots = p2p ? 1 : comm.nranks;
  const ConnClass cls = llConnClass(w.proto, p2p);
  LlSetupAt a;
  a.slot = static_cast<int>(threadIdx.x) < nslots;
  const int r = p2p ? w.s.root : a.slot ? static_cast<int>(threadIdx.x) : 0;  // (a peer's table either way)
  const int sidx = connIndex(comm, cls, ch, true), ridx = connIndex(comm, cls, ch, false);
  a.sends = a.slot && llSendsTo(w, r);
  a.recvs = a.slot && llRecvsFrom(w, r);
  a.sconn = devConn(comm, r, sidx);
  a.rconn = devConn(comm, r, ridx);
  a.sctrl = devCtrl(comm, r, sidx);
  a.rctrl = devCtrl(comm, r, ridx);
  return a;
}

// Loads the connections found by llSetupAt into sh (one thread per peer slot): the step
// counters an earlier kernel left, so after the grid wait. Ends with the block barrier.
__device__ __forceinline__ void llSetupLoad(const LlSetupAt& a, LlShared& sh) {
  if (threadIdx.x == 0) sh.abort = 0;
  if (a.slot) {
    LlPeer& P = sh.peer[threadIdx.x];
    // The connections' pointers and their control words load in parallel (no dependency;
    // into registers first, so no store to shared memory orders them).
    uint8_t* sbuf = nullptr;
    uint8_t* rbuf = nullptr;
    const uint64_t* shead = nullptr;
    uint64_t* rhead = nullptr;
    uint64_t sstep = 0, rstep = 0, credit = 0;
    if (a.sends) {
      sbuf = a.sconn->buf;
      shead = a.sconn->head;
      sstep = a.sctrl[kCtrlStep];
      credit = a.sctrl[kCtrlCredit];
    }
    if (a.recvs) {
      rbuf = a.rconn->buf;
      rhead = a.rconn->head;
      rstep = a.rctrl[kCtrlStep];
    }
    P.sendSlots = reinterpret_cast<uint4*>(sbuf);
    P.sendHead = shead;
    P.sendStepPtr = a.sctrl + kCtrlStep;
    P.sendStep = sstep;
    P.credit = credit;
    P.recvSlots = reinterpret_cast<const uint4*>(rbuf);
    P.recvHead = rhead;
    P.recvStepPtr = a.rctrl + kCtrlStep;
    P.recvStep = rstep;
  }
  __syncthreads();
}

// Loads the connections of work w on channel ch into sh (one thread per peer slot).
__device__ __forceinline__ void llSetup(const DevComm& comm, const DevWork& w, int ch, LlShared& sh) {
  llSetupLoad(llSetupAt(comm, w, ch), sh);
}

// After step s: every thread is done with it. Tells each sending peer that the slot is
// free; after the last step, saves the step counters. False when the work was stopped.
__device__ __forceinline__ bool llEndStep(const DevComm& comm, const DevWork& w, LlShared& sh, uint64_t s,
                                          uint64_t nsteps) {
  __syncthreads();
  if (*reinterpret_cast<volatile int*>(&sh.abort)) return false;
  const bool p2p = llIsP2p(w);
  const int nslots = p2p ? 1 : comm.nranks;
  if (static_cast<int>(threadIdx.x) < nslots) {
    const int r = p2p ? w.s.root : static_cast<int>(threadIdx.x);
    LlPeer& P = sh.peer[threadIdx.x];
    if (llRecvsFrom(w, r)) {
      stVolatile(P.recvHead, P.recvStep + s + 1);
      if (s + 1 == nsteps) *P.recvStepPtr = P.recvStep + nsteps;
    }
    if (s + 1 == nsteps && llSendsTo(w, r)) *P.sendStepPtr = P.sendStep + nsteps;
  }
  return true;
}

// Sends the U lines of one thread (words v) of step s to rank r.
template <int U>
__device__ __forceinline__ void llSendLines(const LlPeer& P, uint64_t s, int i0, int lines, const uint64_t (&v)[U],
                                            const DevComm* comm, int* abort, int r) {
  const uint64_t st = P.sendStep + s;
  if (st >= static_cast<uint64_t>(kLlSlots) && P.credit < st + 1 - kLlSlots)
    llWaitCredit(P.sendHead, st + 1 - kLlSlots, comm, abort, r);
  uint4* base = P.sendSlots + (st % kLlSlots) * kLlLines;
  const uint32_t flag = static_cast<uint32_t>(st + 1);
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int i = i0 + u * static_cast<int>(blockDim.x);
    if (i < lines) llStore(base + i, v[u], flag);
  }
}

__device__ __forceinline__ int lineBytes(uint64_t len, int i) {
  const uint64_t b = static_cast<uint64_t>(i) * 8;
  return len - b >= 8 ? 8 : static_cast<int>(len - b);
}

// Step s of a channel's range: its offset, bytes and lines.
struct LlStep {
  uint64_t off, len;
  int lines;
  __device__ __forceinline__ LlStep(const LlRange& rg, uint64_t s) {
    off = rg.off + s * kLlPayload;
    len = rg.off + rg.len - off < kLlPayload ? rg.off + rg.len - off : kLlPayload;
    lines = static_cast<int>((len + 7) / 8);
  }
};

// One thread's U lines of src at step st (lines i0, i0 + nt, ...), through f (pre-multiply).
template <int U, typename F>
__device__ __forceinline__ void llLoadLines(uint64_t (&v)[U], const uint8_t* src, const LlStep& st, int i0, int nt, F f) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int i = i0 + u * nt;
    v[u] = i < st.lines ? f(load8(src + st.off + 8 * static_cast<uint64_t>(i), lineBytes(st.len, i))) : 0;
  }
}

// AllReduce, ReduceScatter and Reduce with an arithmetic policy (LlTyped).
// Steps are pipelined: every thread sends its lines of step s + 1 before it waits for the
// lines of step s, so one NVLink latency per step is hidden behind the next step's stores
// (credits allowing: kLlSlots steps in flight per connection).
template <typename Policy>
__device__ __forceinline__ bool llReduceLoop(const DevComm* commP, const DevWork* wP, int ch, LlShared* shP) {
  constexpr int U = Policy::kUnroll;
  const DevComm& comm = *commP;
  const DevWork& w = *wP;
  LlShared& sh = *shP;
  const Policy red(w);
  const LlRange rg = llRange(w, typeBytes(w.type), ch);
  if (rg.nsteps == 0) return true;
  const int n = comm.nranks, me = comm.rank, nt = blockDim.x;
  const Coll coll = w.s.coll;
  const bool receives = coll != Coll::Reduce || me == w.s.root;
  const uint8_t* in = static_cast<const uint8_t*>(w.in);
  uint8_t* out = static_cast<uint8_t*>(w.out);
  const uint8_t* ownSrc = in + (coll == Coll::ReduceScatter ? static_cast<uint64_t>(me) * rg.total : 0);
  auto pre = [&red](uint64_t v) { return red.pre(v); };
  int* const abort = &sh.abort;
  LlProf prof(comm, shP);
  // My lines of step s to every peer that needs them.
  auto sendStep = [&](uint64_t s, bool prefetched, uint64_t (&own)[U]) {
    const LlStep st(rg, s);
    for (int i0 = threadIdx.x; i0 < st.lines; i0 += nt * U) {
      if (!prefetched || i0 != static_cast<int>(threadIdx.x)) llLoadLines(own, ownSrc, st, i0, nt, pre);
      for (int r = 0; r < n; ++r) {
        if (!llSendsTo(w, r)) continue;
        if (coll == Coll::ReduceScatter) {
          uint64_t v[U];
          llLoadLines(v, in + static_cast<uint64_t>(r) * rg.total, st, i0, nt, pre);
          llSendLines(sh.peer[r], s, i0, st.lines, v, commP, abort, r);
        } else {
          llSendLines(sh.peer[r], s, i0, st.lines, own, commP, abort, r);
        }
      }
    }
  };
  // The first lines of my data load while the connections are looked up.
  uint64_t own[U];
  llLoadLines(own, ownSrc, LlStep(rg, 0), threadIdx.x, nt, pre);
  llSetup(comm, w, ch, sh);
  prof.mark(kProfLlSetup);
  sendStep(0, true, own);
  for (uint64_t s = 0; s < rg.nsteps; ++s) {
    if (s + 1 < rg.nsteps) sendStep(s + 1, false, own);
    prof.mark(kProfLlSend);
    const LlStep st(rg, s);
    if (receives) {
      for (int i0 = threadIdx.x; i0 < st.lines; i0 += nt * U) {
        llLoadLines(own, ownSrc, st, i0, nt, pre);
        // Reduce every rank's contribution in rank order.
        typename Policy::Acc acc[U];
        for (int r = 0; r < n; ++r) {
          uint64_t v[U];
          if (r == me) {
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = own[u];
          } else {
            const LlPeer& P = sh.peer[r];
            const uint64_t step = P.recvStep + s;
            llReadLines(v, P.recvSlots + (step % kLlSlots) * kLlLines, i0, nt, st.lines,
                        static_cast<uint32_t>(step + 1), commP, abort, r);
          }
#pragma unroll
          for (int u = 0; u < U; ++u) {
            if (i0 + u * nt >= st.lines) continue;
            if (r == 0) red.first(acc[u], v[u]);
            else red.add(acc[u], v[u]);
          }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int i = i0 + u * nt;
          if (i < st.lines)
            store8(out + st.off + 8 * static_cast<uint64_t>(i), red.finish(acc[u]), lineBytes(st.len, i));
        }
      }
    }
    prof.mark(kProfLlRecv);
    if (!llEndStep(comm, w, sh, s, rg.nsteps)) return false;
    prof.mark(kProfLlEnd);
    prof.step(st.len);
  }
  prof.flush();
  return true;
}

// A reduction of the generic kernel (coll_kernel.cuh): Policy LlTyped<T, OpSum> or
// LlTypedRt<T>, each a function of its own.
template <typename Policy>
__device__ __noinline__ bool llReduceWork(const DevComm* comm, const DevWork* w, int ch, LlShared* sh) {
  return llReduceLoop<Policy>(comm, w, ch, sh);
}

// AllGather, Broadcast, Send and Recv: data movement only.
static __device__ __noinline__ bool llCopyWork(const DevComm* commP, const DevWork* wP, int ch, LlShared* shP) {
  constexpr int U = kLlUnroll;
  const DevComm& comm = *commP;
  const DevWork& w = *wP;
  LlShared& sh = *shP;
  const LlRange rg = llRange(w, typeBytes(w.type), ch);
  if (rg.nsteps == 0) return true;
  const int n = comm.nranks, me = comm.rank, nt = blockDim.x;
  const Coll coll = w.s.coll;
  const bool p2p = llIsP2p(w);
  const uint8_t* in = static_cast<const uint8_t*>(w.in);
  uint8_t* out = static_cast<uint8_t*>(w.out);
  // My data (sent, and stored locally), and where each received block goes.
  const bool hasSrc = coll == Coll::AllGather || coll == Coll::Send || (coll == Coll::Broadcast && me == w.s.root);
  uint8_t* localDst = nullptr;
  if (coll == Coll::AllGather) localDst = out + static_cast<uint64_t>(me) * rg.total;
  if (coll == Coll::Broadcast && me == w.s.root) localDst = out;
  if (localDst == in) localDst = nullptr;  // in place
  auto same = [](uint64_t v) { return v; };
  int* const abort = &sh.abort;
  LlProf prof(comm, shP);
  // My lines of step s to every peer (and to my own output), as in llReduceLoop.
  auto sendStep = [&](uint64_t s, bool prefetched, uint64_t (&own)[U]) {
    const LlStep st(rg, s);
    for (int i0 = threadIdx.x; i0 < st.lines; i0 += nt * U) {
      if (!prefetched || i0 != static_cast<int>(threadIdx.x)) llLoadLines(own, in, st, i0, nt, same);
      if (p2p) {
        llSendLines(sh.peer[0], s, i0, st.lines, own, commP, abort, w.s.root);
      } else {
        for (int r = 0; r < n; ++r)
          if (r != me) llSendLines(sh.peer[r], s, i0, st.lines, own, commP, abort, r);
      }
      if (localDst) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int i = i0 + u * nt;
          if (i < st.lines) store8(localDst + st.off + 8 * static_cast<uint64_t>(i), own[u], lineBytes(st.len, i));
        }
      }
    }
  };
  // The first lines of my data load while the connections are looked up.
  uint64_t own[U];
  if (hasSrc) llLoadLines(own, in, LlStep(rg, 0), threadIdx.x, nt, same);
  llSetup(comm, w, ch, sh);
  prof.mark(kProfLlSetup);
  if (hasSrc) sendStep(0, true, own);
  for (uint64_t s = 0; s < rg.nsteps; ++s) {
    if (hasSrc && s + 1 < rg.nsteps) sendStep(s + 1, false, own);
    prof.mark(kProfLlSend);
    const LlStep st(rg, s);
    for (int r = 0; r < (p2p ? 1 : n); ++r) {
      const int peer = p2p ? w.s.root : r;
      if (!llRecvsFrom(w, peer)) continue;
      const LlPeer& P = sh.peer[r];
      const uint64_t step = P.recvStep + s;
      const uint4* base = P.recvSlots + (step % kLlSlots) * kLlLines;
      const uint32_t flag = static_cast<uint32_t>(step + 1);
      uint8_t* dst = out + (coll == Coll::AllGather ? static_cast<uint64_t>(peer) * rg.total : 0) + st.off;
      for (int i0 = threadIdx.x; i0 < st.lines; i0 += nt * U) {
        uint64_t v[U];
        llReadLines(v, base, i0, nt, st.lines, flag, commP, abort, peer);
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int i = i0 + u * nt;
          if (i < st.lines) store8(dst + 8 * static_cast<uint64_t>(i), v[u], lineBytes(st.len, i));
        }
      }
    }
    prof.mark(kProfLlRecv);
    if (!llEndStep(comm, w, sh, s, rg.nsteps)) return false;
    prof.mark(kProfLlEnd);
    prof.step(st.len);
  }
  prof.flush();
  return true;
}

__host__ __device__ __forceinline__ bool collReduces(Coll c) {
  return c == Coll::AllReduce || c == Coll::ReduceScatter || c == Coll::Reduce;
}

}  // namespace mccl
