// The Simple protocol's primitives, shared by the generic kernel (coll_kernel.cuh) and the
// Simple kernels (simple_kernel.cu): waiting for a peer's flag, and moving a step's data
// through the FIFO slots with 16-byte vectors: a copy to up to three outputs, or a
// reduction of the local input and/or received messages.
//
// A step: one thread waits until every input message has arrived (the tail in this GPU's
// memory) and every output slot is free (the head in this GPU's memory); then all threads
// combine 16-byte vectors, writing results to the output buffer and straight into the
// peers' FIFOs over NVLink; then one thread fences and publishes the new tail in the
// peer's memory, and the new head in the sender's memory.
#pragma once

#include <cuda_runtime.h>
#include <string.h>

#include <type_traits>

#include "kernels/dev_reduce.cuh"
#include "kernels/dev_sync.cuh"
#include "kernels/dev_work.h"

namespace mccl {

// The arithmetic type of a kernel that reduces nothing (data movement only).
struct NoArith {};

namespace {
// Spins until *p >= want, with acquire loads: what the peer stored before its flag is
// visible to this thread, and through the barrier that follows to its block (no fence).
// Gives up (false) when the communicator is aborted or the wait exceeds MCCL_TIMEOUT,
// recording why in host-mapped memory.
__device__ __forceinline__ bool waitAtLeast(const DevComm& comm, const uint64_t* p, uint64_t want, int peer) {
  uint64_t start = 0;
  for (uint32_t spins = 0;; ++spins) {
    if (ldAcquireSys(p) >= want) {
      if (comm.fence == 1) fenceSys(1);
      return true;
    }
    if (spins == kSpinsPerCheck) {
      spins = 0;
      if (waitShouldStop(comm, &start, peer)) return false;
    }
  }
}

// ---- Combining --------------------------------------------------------------------------------

struct Io {
  const uint8_t* src;    // local contribution or null
  const uint8_t* in[2];  // received messages (FIFO slots)
  uint8_t* out[3];       // output buffer and/or peers' FIFO slots
  int nin;
  int nout;
  size_t count;
  bool premul;
  uint64_t scalarBits;
  const void* scalarPtr;
  int postDiv;           // > 1: divide the final result
};

template <typename S>
__device__ __forceinline__ S bitsAs(uint64_t b) {
  S s;
  memcpy(&s, &b, sizeof s);
  return s;
}

// FIFO data is written by a peer GPU: read it from L2, never from a stale L1 line.
__device__ __forceinline__ uint4 ldFifo(const uint8_t* p) { return __ldcg(reinterpret_cast<const uint4*>(p)); }
template <typename S>
__device__ __forceinline__ S ldFifoElem(const S* p) {
  S s;
  if constexpr (sizeof(S) == 1) {
    unsigned char b = __ldcg(reinterpret_cast<const unsigned char*>(p));
    memcpy(&s, &b, 1);
  } else if constexpr (sizeof(S) == 2) {
    unsigned short b = __ldcg(reinterpret_cast<const unsigned short*>(p));
    memcpy(&s, &b, 2);
  } else if constexpr (sizeof(S) == 4) {
    unsigned int b = __ldcg(reinterpret_cast<const unsigned int*>(p));
    memcpy(&s, &b, 4);
  } else {
    unsigned long long b = __ldcg(reinterpret_cast<const unsigned long long*>(p));
    memcpy(&s, &b, 8);
  }
  return s;
}
__device__ __forceinline__ uint4 ldUser(const uint8_t* p) { return *reinterpret_cast<const uint4*>(p); }
__device__ __forceinline__ void st16(uint8_t* p, uint4 v) { *reinterpret_cast<uint4*>(p) = v; }

// 16-byte vectors in flight per thread for copies and the two-input reductions
// (copyBytes, combineFast), and for the general arithmetic loop (the rare forms: three
// inputs, unaligned, integer average). The generic kernel keeps 4: more spills under the
// 128-register limit of a 512-thread block and grows its stack (8 and 2: 824 B; 4 and 1:
// 608 B) without moving data faster (bench/results/gpu-2xH200-2026-11-23). The Simple
// kernel that only moves data (simple_kernel.cu) copies with kSimpleUnroll: in warp tiles
// (forWarpTiles) its 8 vectors fit in 127 registers with no spill.
constexpr int kUnroll = 4;
constexpr int kSimpleUnroll = 8;
template <typename S>
constexpr int unrollFor() {
  return 1;
}

// The vectors [0, nvec) in warp tiles of 32·U: lane l of a warp takes vectors t + l + 32·u
// (u < U) of its tile t, the warps of the block taking tiles in turn. The U addresses of
// one stream then differ by constants (512·u bytes: immediate offsets of one register),
// where a block-wide stride (base + u·nt) held a 64-bit address per vector and stream;
// each access of a warp is still 512 contiguous bytes. body(first, nvec, full) moves the
// vectors first + 32·u, all U of them when full (std::true_type), else those below nvec
// (the one partial tile, at the end).
template <int U, typename Body>
__device__ __forceinline__ void forWarpTiles(size_t nvec, int tid, int nt, Body&& body) {
  constexpr size_t kTile = 32 * static_cast<size_t>(U);
  const size_t lane = static_cast<size_t>(tid & 31);
  const size_t stride = static_cast<size_t>(nt >> 5) * kTile;
  size_t t = static_cast<size_t>(tid >> 5) * kTile;
  for (; t + kTile <= nvec; t += stride) body(t + lane, nvec, std::true_type{});
  if (t < nvec) body(t + lane, nvec, std::false_type{});
}

// Data movement only (one input, no arithmetic): 16-byte copies to every output.
// Pointers are copied into scalars so they stay in registers (no dynamic indexing).
template <int U = kUnroll>
__device__ __forceinline__ void copyBytes(const Io& io, size_t bytes, bool fromFifo, int tid, int nt) {
  const uint8_t* from = io.src ? io.src : io.in[0];
  const int nout = io.nout;
  uint8_t* o0 = io.out[0];
  uint8_t* o1 = nout > 1 ? io.out[1] : nullptr;
  uint8_t* o2 = nout > 2 ? io.out[2] : nullptr;
  const uintptr_t align = reinterpret_cast<uintptr_t>(from) | reinterpret_cast<uintptr_t>(o0) |
                          reinterpret_cast<uintptr_t>(o1) | reinterpret_cast<uintptr_t>(o2);
  const size_t nvec = (align & 15) == 0 ? bytes / 16 : 0;
  forWarpTiles<U>(nvec, tid, nt, [&](size_t first, size_t lim, auto full) {
    constexpr bool kFull = decltype(full)::value;
    const size_t at = 16 * first;
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (kFull || first + 32 * u < lim) v[u] = fromFifo ? ldFifo(from + at + 512 * u) : ldUser(from + at + 512 * u);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (!kFull && first + 32 * u >= lim) continue;
      st16(o0 + at + 512 * u, v[u]);
      if (o1) st16(o1 + at + 512 * u, v[u]);
      if (o2) st16(o2 + at + 512 * u, v[u]);
    }
  });
  for (size_t b = nvec * 16 + tid; b < bytes; b += nt) {
    uint8_t x = fromFifo ? __ldcg(from + b) : from[b];
    o0[b] = x;
    if (o1) o1[b] = x;
    if (o2) o2[b] = x;
  }
}

// A Send to this rank paired with its Recv (DevWork::selfCopy): channel ch's share of the
// data copied straight from the Send's buffer to the Recv's, as NCCL does, instead of
// through the rank's connection to itself (a FIFO copy in and out: twice the memory
// traffic and a block for each side).
template <int U = kUnroll>
__device__ __forceinline__ void selfCopyChannel(const DevWork& w, size_t esize, int ch, int tid, int nt) {
  int64_t off, cnt;
  channelRange(w.s.count, w.s.nchannels, w.s.align, ch, &off, &cnt);
  if (cnt <= 0) return;
  Io io{};
  io.src = static_cast<const uint8_t*>(w.in) + static_cast<size_t>(off) * esize;
  io.out[0] = static_cast<uint8_t*>(w.out) + static_cast<size_t>(off) * esize;
  io.nout = 1;
  copyBytes<U>(io, static_cast<size_t>(cnt) * esize, false, tid, nt);
}

// Any operator on one type, chosen per element: the general loop (integer average, three
// inputs, unaligned buffers or counts).
template <typename A>
__device__ __forceinline__ A applyOp(uint8_t red, A a, A b) {
  switch (red) {
    case kRedSum: return OpSum::f(a, b);
    case kRedProd: return OpProd::f(a, b);
    case kRedMax: return OpMax::f(a, b);
    default: return OpMin::f(a, b);
  }
}

template <typename S>
__device__ __forceinline__ void combineTyped(uint8_t red, const Io& io, int tid, int nt) {
  constexpr int kUnrollReduce = unrollFor<S>();
  using T = DevT<S>;
  using A = typename T::A;
  constexpr int E = 16 / sizeof(S);
  const bool premul = io.premul;
  const int postDiv = io.postDiv;
  const A scalar = premul ? T::load(io.scalarPtr ? *static_cast<const S*>(io.scalarPtr) : bitsAs<S>(io.scalarBits))
                          : A(0);
  // Operands: first (the local contribution, or the first message), then up to two more.
  const bool hasSrc = io.src != nullptr;
  const uint8_t* p0 = hasSrc ? io.src : io.in[0];
  const uint8_t* p1 = hasSrc ? (io.nin > 0 ? io.in[0] : nullptr) : (io.nin > 1 ? io.in[1] : nullptr);
  const uint8_t* p2 = hasSrc && io.nin > 1 ? io.in[1] : nullptr;
  const bool p0Fifo = !hasSrc;
  const int nout = io.nout;
  uint8_t* o0 = io.out[0];
  uint8_t* o1 = nout > 1 ? io.out[1] : nullptr;
  uint8_t* o2 = nout > 2 ? io.out[2] : nullptr;
  const uintptr_t align = reinterpret_cast<uintptr_t>(p0) | reinterpret_cast<uintptr_t>(p1) |
                          reinterpret_cast<uintptr_t>(p2) | reinterpret_cast<uintptr_t>(o0) |
                          reinterpret_cast<uintptr_t>(o1) | reinterpret_cast<uintptr_t>(o2);
  const size_t count = io.count;
  const size_t nvec = (align & 15) == 0 ? count / E : 0;
  auto reduceOne = [&](S x0, S x1, S x2, bool first) -> S {
    A acc = T::load(x0);
    // The product is rounded to the type, as the host engine and the LL protocol do.
    if (first && premul) acc = T::load(T::store(OpProd::f(acc, scalar)));
    if (p1) acc = applyOp(red, acc, T::load(x1));
    if (p2) acc = applyOp(red, acc, T::load(x2));
    if (postDiv > 1) acc = divideBy(acc, postDiv);
    return T::store(acc);
  };
  for (size_t base = tid; base < nvec; base += static_cast<size_t>(nt) * kUnrollReduce) {
    uint4 a[kUnrollReduce], b[kUnrollReduce], c[kUnrollReduce];
#pragma unroll
    for (int u = 0; u < kUnrollReduce; ++u) {
      size_t i = base + static_cast<size_t>(u) * nt;
      if (i >= nvec) continue;
      a[u] = p0Fifo ? ldFifo(p0 + 16 * i) : ldUser(p0 + 16 * i);
      if (p1) b[u] = ldFifo(p1 + 16 * i);
      if (p2) c[u] = ldFifo(p2 + 16 * i);
    }
#pragma unroll
    for (int u = 0; u < kUnrollReduce; ++u) {
      size_t i = base + static_cast<size_t>(u) * nt;
      if (i >= nvec) continue;
      S* av = reinterpret_cast<S*>(&a[u]);
      const S* bv = reinterpret_cast<const S*>(&b[u]);
      const S* cv = reinterpret_cast<const S*>(&c[u]);
#pragma unroll
      for (int j = 0; j < E; ++j) av[j] = reduceOne(av[j], p1 ? bv[j] : av[j], p2 ? cv[j] : av[j], hasSrc);
      st16(o0 + 16 * i, a[u]);
      if (o1) st16(o1 + 16 * i, a[u]);
      if (o2) st16(o2 + 16 * i, a[u]);
    }
  }
  const S* s0 = reinterpret_cast<const S*>(p0);
  const S* s1 = reinterpret_cast<const S*>(p1);
  const S* s2 = reinterpret_cast<const S*>(p2);
  for (size_t i = nvec * E + tid; i < count; i += nt) {
    S x0 = p0Fifo ? ldFifoElem(s0 + i) : s0[i];
    S x1 = p1 ? ldFifoElem(s1 + i) : x0;
    S x2 = p2 ? ldFifoElem(s2 + i) : x0;
    S v = reduceOne(x0, x1, x2, hasSrc);
    reinterpret_cast<S*>(o0)[i] = v;
    if (o1) reinterpret_cast<S*>(o1)[i] = v;
    if (o2) reinterpret_cast<S*>(o2)[i] = v;
  }
}

// The common reduction of the Simple protocol (recvReduceSend, recvReduceCopySend): the
// local input (pre-multiplied for PreMulSum) or a message, op another message, into up to
// three outputs; 16-byte vectors, nothing per element but the operator.
template <typename S, typename Op, int U>
__device__ __forceinline__ void combineFast(const uint8_t* p0, bool p0Fifo, const uint8_t* p1, uint8_t* o0, uint8_t* o1,
                                            uint8_t* o2, size_t nvec, bool premul, typename DevT<S>::A scalar, int tid,
                                            int nt) {
  forWarpTiles<U>(nvec, tid, nt, [&](size_t first, size_t lim, auto full) {
    constexpr bool kFull = decltype(full)::value;
    const size_t at = 16 * first;
    uint4 a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (!kFull && first + 32 * u >= lim) continue;
      a[u] = p0Fifo ? ldFifo(p0 + at + 512 * u) : ldUser(p0 + at + 512 * u);
      b[u] = ldFifo(p1 + at + 512 * u);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (!kFull && first + 32 * u >= lim) continue;
      const uint4 r = vecOp<S, Op>(premul ? vecScale<S>(a[u], scalar) : a[u], b[u]);
      st16(o0 + at + 512 * u, r);
      if (o1) st16(o1 + at + 512 * u, r);
      if (o2) st16(o2 + at + 512 * u, r);
    }
  });
}

// Two aligned inputs (nearly every large reduction, PreMulSum's first step too) take the
// vector loop of their operator; the other forms the general one.
template <typename S, int U = kUnroll>
__device__ __forceinline__ void combineOp(uint8_t red, const Io& io, int tid, int nt) {
  using T = DevT<S>;
  constexpr int E = 16 / sizeof(S);
  const bool hasSrc = io.src != nullptr;
  const int inputs = io.nin + (hasSrc ? 1 : 0);
  const uint8_t* p0 = hasSrc ? io.src : io.in[0];
  const uint8_t* p1 = hasSrc ? io.in[0] : io.in[1];
  uint8_t* o1 = io.nout > 1 ? io.out[1] : nullptr;
  uint8_t* o2 = io.nout > 2 ? io.out[2] : nullptr;
  const uintptr_t align = reinterpret_cast<uintptr_t>(p0) | reinterpret_cast<uintptr_t>(p1) |
                          reinterpret_cast<uintptr_t>(io.out[0]) | reinterpret_cast<uintptr_t>(o1) |
                          reinterpret_cast<uintptr_t>(o2);
  if (inputs != 2 || io.postDiv > 1 || (align & 15) != 0 || io.count % E != 0 || (io.premul && !hasSrc)) {
    combineTyped<S>(red, io, tid, nt);
    return;
  }
  const typename T::A scalar =
      io.premul ? T::load(io.scalarPtr ? *static_cast<const S*>(io.scalarPtr) : bitsAs<S>(io.scalarBits)) : typename T::A(0);
  const size_t nvec = io.count / E;
  uint8_t* const o0 = io.out[0];
  switch (red) {
    case kRedSum: combineFast<S, OpSum, U>(p0, !hasSrc, p1, o0, o1, o2, nvec, io.premul, scalar, tid, nt); break;
    case kRedProd: combineFast<S, OpProd, U>(p0, !hasSrc, p1, o0, o1, o2, nvec, io.premul, scalar, tid, nt); break;
    case kRedMax: combineFast<S, OpMax, U>(p0, !hasSrc, p1, o0, o1, o2, nvec, io.premul, scalar, tid, nt); break;
    default: combineFast<S, OpMin, U>(p0, !hasSrc, p1, o0, o1, o2, nvec, io.premul, scalar, tid, nt); break;
  }
}

}  // namespace
}  // namespace mccl
