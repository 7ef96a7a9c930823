// The Simple protocol's primitives, shared by the generic kernel (coll_kernel.cuh) and the
// Simple kernels (simple_kernel.cuh): waiting for a peer's flag, and moving a step's data
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

#include "kernels/primitives/dev_reduce.cuh"
#include "kernels/primitives/dev_sync.cuh"
#include "kernels/work/dev_work.h"

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
// kernel that only moves data (simple_kernel.cuh) copies with kSimpleUnroll: in warp tiles
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

// Every 16-byte vector [0, nvec) of one input to every output.
template <int U>
__device__ __forceinline__ void copyVectors(const uint8_t* from, bool fromFifo, uint8_t* o0, uint8_t* o1, uint8_t* o2,
                                            size_t nvec, int tid, int nt) {
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
}

// Bytes [from, bytes) one at a time: the tails, and unaligned copies in the generic kernel.
__device__ __forceinline__ void copyTail(const uint8_t* src, bool fromFifo, uint8_t* o0, uint8_t* o1, uint8_t* o2,
                                         size_t from, size_t bytes, int tid, int nt) {
  for (size_t b = from + tid; b < bytes; b += nt) {
    const uint8_t x = fromFifo ? __ldcg(src + b) : src[b];
    o0[b] = x;
    if (o1) o1[b] = x;
    if (o2) o2[b] = x;
  }
}

// W-byte words (W = sizeof(Wd), a power of two that divides every pointer), U in flight a
// thread in warp tiles: a warp's access is 32 contiguous words. Returns the bytes copied
// (whole words).
template <typename Wd, int U>
__device__ __forceinline__ size_t copyWords(const uint8_t* from, bool fromFifo, uint8_t* o0, uint8_t* o1, uint8_t* o2,
                                            size_t bytes, int tid, int nt) {
  const size_t n = bytes / sizeof(Wd);
  const Wd* s = reinterpret_cast<const Wd*>(from);
  Wd* d0 = reinterpret_cast<Wd*>(o0);
  Wd* d1 = reinterpret_cast<Wd*>(o1);
  Wd* d2 = reinterpret_cast<Wd*>(o2);
  forWarpTiles<U>(n, tid, nt, [&](size_t first, size_t lim, auto full) {
    constexpr bool kFull = decltype(full)::value;
    Wd v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (kFull || first + 32 * u < lim) v[u] = fromFifo ? __ldcg(s + first + 32 * u) : s[first + 32 * u];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (!kFull && first + 32 * u >= lim) continue;
      d0[first + 32 * u] = v[u];
      if (d1) d1[first + 32 * u] = v[u];
      if (d2) d2[first + 32 * u] = v[u];
    }
  });
  return n * sizeof(Wd);
}

// A copy whose pointers are not all 16-byte aligned: a ring AllGather's blocks when the
// count a rank is no multiple of 16 bytes (three ranks of a power-of-two total), whose byte
// loop ran at a quarter of NCCL's speed (3 x H100, AllGather of 16 MiB 344 us against 95;
// bench/results/gpu-4x-2026-11-27 call 4). Pointers that share one misalignment move their
// head bytes, then 16-byte vectors; others the widest words every pointer's alignment
// allows. Only the Simple kernels compiled for unaligned works have it (kWide, simple_
// kernel.cuh): inlined, these loops cost the aligned ones registers (the aligned two-rank
// AllReduce of 16 MiB 16 %, bench/results/gpu-2xH200-2026-11-27c), and as a function of its
// own (__noinline__) the call cost the kernel 1.3 KiB of stack a thread to save registers.
template <int U>
__device__ __forceinline__ void copyUnaligned(const uint8_t* from, bool fromFifo, uint8_t* o0, uint8_t* o1, uint8_t* o2,
                                           size_t bytes, int tid, int nt) {
  const uintptr_t f = reinterpret_cast<uintptr_t>(from);
  const uintptr_t ptrs = f | reinterpret_cast<uintptr_t>(o0) | reinterpret_cast<uintptr_t>(o1) |
                         reinterpret_cast<uintptr_t>(o2);
  const uintptr_t diff = (f ^ reinterpret_cast<uintptr_t>(o0)) | (o1 ? f ^ reinterpret_cast<uintptr_t>(o1) : 0) |
                         (o2 ? f ^ reinterpret_cast<uintptr_t>(o2) : 0);
  size_t done;
  if ((diff & 15) == 0) {  // one misalignment: the head bytes, then the aligned rest
    const size_t toBoundary = (16 - (f & 15)) & 15, head = toBoundary < bytes ? toBoundary : bytes;
    copyTail(from, fromFifo, o0, o1, o2, 0, head, tid, nt);
    from += head;
    o0 += head;
    if (o1) o1 += head;
    if (o2) o2 += head;
    bytes -= head;
    const size_t nvec = bytes / 16;
    copyVectors<U>(from, fromFifo, o0, o1, o2, nvec, tid, nt);
    done = nvec * 16;
  } else if ((ptrs & 7) == 0) {
    done = copyWords<uint2, U>(from, fromFifo, o0, o1, o2, bytes, tid, nt);
  } else if ((ptrs & 3) == 0) {
    done = copyWords<uint32_t, U>(from, fromFifo, o0, o1, o2, bytes, tid, nt);
  } else if ((ptrs & 1) == 0) {
    done = copyWords<uint16_t, U>(from, fromFifo, o0, o1, o2, bytes, tid, nt);
  } else {
    done = copyWords<uint8_t, U>(from, fromFifo, o0, o1, o2, bytes, tid, nt);
  }
  copyTail(from, fromFifo, o0, o1, o2, done, bytes, tid, nt);
}

// Data movement only (one input, no arithmetic): 16-byte copies to every output where
// every pointer is 16-byte aligned; else copyUnaligned (kWide: the Simple kernels of
// unaligned works) or a byte loop (the other kernels; in the generic kernel the wide paths
// grew the stack from 840 to 920 bytes a thread: memory the driver keeps for every thread
// slot of the GPU). Pointers are copied into scalars so they stay in registers (no dynamic
// indexing).
template <int U = kUnroll, bool kWide = false>
__device__ __forceinline__ void copyBytes(const Io& io, size_t bytes, bool fromFifo, int tid, int nt) {
  const uint8_t* from = io.src ? io.src : io.in[0];
  const int nout = io.nout;
  uint8_t* o0 = io.out[0];
  uint8_t* o1 = nout > 1 ? io.out[1] : nullptr;
  uint8_t* o2 = nout > 2 ? io.out[2] : nullptr;
  const uintptr_t align = reinterpret_cast<uintptr_t>(from) | reinterpret_cast<uintptr_t>(o0) |
                          reinterpret_cast<uintptr_t>(o1) | reinterpret_cast<uintptr_t>(o2);
  if ((align & 15) == 0) {
    const size_t nvec = bytes / 16;
    copyVectors<U>(from, fromFifo, o0, o1, o2, nvec, tid, nt);
    copyTail(from, fromFifo, o0, o1, o2, nvec * 16, bytes, tid, nt);
  } else if constexpr (kWide) {
    copyUnaligned<U>(from, fromFifo, o0, o1, o2, bytes, tid, nt);
  } else {
    copyTail(from, fromFifo, o0, o1, o2, 0, bytes, tid, nt);
  }
}

// A Send to this rank paired with its Recv (DevWork::selfCopy): channel ch's share of the
// data copied straight from the Send's buffer to the Recv's, as NCCL does, instead of
// through the rank's connection to itself (a FIFO copy in and out: twice the memory
// traffic and a block for each side).
template <int U = kUnroll, bool kWide = false>
__device__ __forceinline__ void selfCopyChannel(const DevWork& w, size_t esize, int ch, int tid, int nt) {
  int64_t off, cnt;
  channelRange(w.s.count, w.s.nchannels, w.s.align, ch, &off, &cnt);
  if (cnt <= 0) return;
  Io io{};
  io.src = static_cast<const uint8_t*>(w.in) + static_cast<size_t>(off) * esize;
  io.out[0] = static_cast<uint8_t*>(w.out) + static_cast<size_t>(off) * esize;
  io.nout = 1;
  copyBytes<U, kWide>(io, static_cast<size_t>(cnt) * esize, false, tid, nt);
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

template <typename S, int kElems = 1>
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
  // Element by element (unaligned buffers, counts' tails): kElems a thread loaded before
  // any is combined, so that a thread waits for memory once per kElems elements, not per
  // element (combineUnaligned: 4; inlined into a kernel's own code 1, for its registers).
  const S* s0 = reinterpret_cast<const S*>(p0);
  const S* s1 = reinterpret_cast<const S*>(p1);
  const S* s2 = reinterpret_cast<const S*>(p2);
  const size_t step = static_cast<size_t>(nt);
  for (size_t base = nvec * E + tid; base < count; base += step * kElems) {
    S x0[kElems], x1[kElems], x2[kElems];
#pragma unroll
    for (int u = 0; u < kElems; ++u) {
      const size_t i = base + u * step;
      if (i >= count) continue;
      x0[u] = p0Fifo ? ldFifoElem(s0 + i) : s0[i];
      x1[u] = p1 ? ldFifoElem(s1 + i) : x0[u];
      x2[u] = p2 ? ldFifoElem(s2 + i) : x0[u];
    }
#pragma unroll
    for (int u = 0; u < kElems; ++u) {
      const size_t i = base + u * step;
      if (i >= count) continue;
      const S v = reduceOne(x0[u], x1[u], x2[u], hasSrc);
      reinterpret_cast<S*>(o0)[i] = v;
      if (o1) reinterpret_cast<S*>(o1)[i] = v;
      if (o2) reinterpret_cast<S*>(o2)[i] = v;
    }
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

// The 16 bytes at byte offset 4k + r/8 of the 32 in lo, hi (little-endian: the stream's
// first byte is lo's byte 4k + r/8), k and r the same for the whole warp.
__device__ __forceinline__ uint4 shiftJoin(uint4 lo, uint4 hi, int k, int r) {
  uint32_t w0, w1, w2, w3, w4;
  switch (k) {
    case 0: w0 = lo.x, w1 = lo.y, w2 = lo.z, w3 = lo.w, w4 = hi.x; break;
    case 1: w0 = lo.y, w1 = lo.z, w2 = lo.w, w3 = hi.x, w4 = hi.y; break;
    case 2: w0 = lo.z, w1 = lo.w, w2 = hi.x, w3 = hi.y, w4 = hi.z; break;
    default: w0 = lo.w, w1 = hi.x, w2 = hi.y, w3 = hi.z, w4 = hi.w; break;
  }
  return make_uint4(__funnelshift_r(w0, w1, r), __funnelshift_r(w1, w2, r), __funnelshift_r(w2, w3, r),
                    __funnelshift_r(w3, w4, r));
}

// combineFast where the first operand alone is not 16-byte aligned: each of its vectors
// joined from the two aligned vectors it straddles (the second one is the next lane's
// first, so memory moves each once). nvec must leave the operand's last aligned vector out
// (it may end past the operand's last byte).
template <typename S, typename Op, int U>
__device__ __forceinline__ void combineShifted(const uint8_t* p0, bool p0Fifo, const uint8_t* p1, uint8_t* o0,
                                               uint8_t* o1, uint8_t* o2, size_t nvec, bool premul,
                                               typename DevT<S>::A scalar, int tid, int nt) {
  const uintptr_t mis = reinterpret_cast<uintptr_t>(p0) & 15;
  const uint8_t* a0 = p0 - mis;
  const int k = static_cast<int>(mis >> 2), r = static_cast<int>(mis & 3) * 8;
  forWarpTiles<U>(nvec, tid, nt, [&](size_t first, size_t lim, auto full) {
    constexpr bool kFull = decltype(full)::value;
    const size_t at = 16 * first;
    uint4 lo[U], hi[U], b[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (!kFull && first + 32 * u >= lim) continue;
      lo[u] = p0Fifo ? ldFifo(a0 + at + 512 * u) : ldUser(a0 + at + 512 * u);
      hi[u] = p0Fifo ? ldFifo(a0 + at + 512 * u + 16) : ldUser(a0 + at + 512 * u + 16);
      b[u] = ldFifo(p1 + at + 512 * u);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (!kFull && first + 32 * u >= lim) continue;
      const uint4 a = shiftJoin(lo[u], hi[u], k, r);
      const uint4 v = vecOp<S, Op>(premul ? vecScale<S>(a, scalar) : a, b[u]);
      st16(o0 + at + 512 * u, v);
      if (o1) st16(o1 + at + 512 * u, v);
      if (o2) st16(o2 + at + 512 * u, v);
    }
  });
}

// A reduction whose operands are not all 16-byte aligned. Where the first alone is not (a
// ring ReduceScatter's input blocks when the count a rank is no multiple of 16 bytes: the
// FIFOs and the output are aligned) its vectors are joined (combineShifted) and the rest
// goes element by element, 4 a thread in flight; the element loop had moved 8 GB/s a block
// against 22 for aligned blocks (3 x H200, ReduceScatter of 64 MiB, bench/results/
// gpu-4x-2026-11-27 call 6). Only in the kernels copyUnaligned is in, for the same reason.
template <typename S, int U>
__device__ __forceinline__ void combineUnaligned(uint8_t red, Io io, int tid, int nt) {
  using T = DevT<S>;
  constexpr int E = 16 / sizeof(S);
  const bool hasSrc = io.src != nullptr;
  const uint8_t* p0 = hasSrc ? io.src : io.in[0];
  const uint8_t* p1 = hasSrc ? io.in[0] : io.in[1];
  uint8_t* o0 = io.out[0];
  uint8_t* o1 = io.nout > 1 ? io.out[1] : nullptr;
  uint8_t* o2 = io.nout > 2 ? io.out[2] : nullptr;
  const uintptr_t rest = reinterpret_cast<uintptr_t>(p1) | reinterpret_cast<uintptr_t>(o0) |
                         reinterpret_cast<uintptr_t>(o1) | reinterpret_cast<uintptr_t>(o2);
  const bool shifted = io.nin + (hasSrc ? 1 : 0) == 2 && io.postDiv <= 1 && !(io.premul && !hasSrc) &&
                       (rest & 15) == 0 && reinterpret_cast<uintptr_t>(p0) % sizeof(S) == 0 && io.count / E > 1;
  if (!shifted) {
    combineTyped<S, 4>(red, io, tid, nt);
    return;
  }
  const typename T::A scalar =
      io.premul ? T::load(io.scalarPtr ? *static_cast<const S*>(io.scalarPtr) : bitsAs<S>(io.scalarBits)) : typename T::A(0);
  const size_t nvec = io.count / E - 1;  // the last vector in the element loop: see combineShifted
  switch (red) {
    case kRedSum: combineShifted<S, OpSum, U>(p0, !hasSrc, p1, o0, o1, o2, nvec, io.premul, scalar, tid, nt); break;
    case kRedProd: combineShifted<S, OpProd, U>(p0, !hasSrc, p1, o0, o1, o2, nvec, io.premul, scalar, tid, nt); break;
    case kRedMax: combineShifted<S, OpMax, U>(p0, !hasSrc, p1, o0, o1, o2, nvec, io.premul, scalar, tid, nt); break;
    default: combineShifted<S, OpMin, U>(p0, !hasSrc, p1, o0, o1, o2, nvec, io.premul, scalar, tid, nt); break;
  }
  // The rest (the last vector and the count's tail), element by element.
  const size_t skip = nvec * 16;
  if (hasSrc) io.src += skip;
  if (io.nin > 0) io.in[0] += skip;  // fixed indices: the arrays stay in registers
  if (io.nin > 1) io.in[1] += skip;
  io.out[0] += skip;
  if (io.nout > 1) io.out[1] += skip;
  if (io.nout > 2) io.out[2] += skip;
  io.count -= nvec * E;
  combineTyped<S, 4>(red, io, tid, nt);
}

// Two aligned inputs (nearly every large reduction, PreMulSum's first step too) take the
// vector loop of their operator; unaligned operands combineUnaligned (kWide: the Simple
// kernels of unaligned works) or the general loop, as the other forms do.
template <typename S, int U = kUnroll, bool kWide = false>
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
  if constexpr (kWide) {
    if ((align & 15) != 0) {
      combineUnaligned<S, U>(red, io, tid, nt);
      return;
    }
  }
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
