// The direct kernels: collectives on symmetric windows, each block with the same block of
// every peer (kernels/direct.h says what each collective reads and writes). One kernel per
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

// [lo, hi) of total for block ch of nch, in units of align (the last block takes the rest).
__device__ __forceinline__ void blockRange(uint64_t total, int nch, int ch, uint64_t align, uint64_t* lo, uint64_t* hi) {
  uint64_t per = (total + nch - 1) / nch;
  per = (per + align - 1) / align * align;
  *lo = min(total, per * ch);
  *hi = min(total, *lo + per);
}

// Bytes [lo, hi) of src (this rank's) to the same place of every output dst[p] + dstOff,
// p < n, but skip.
template <typename Args>
__device__ __forceinline__ void copyOut(const Args& a, const uint8_t* src, uint8_t* const* dst, uint64_t dstOff, int skip,
                                        uint64_t lo, uint64_t hi) {
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
      if (p >= n || p == skip) continue;
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
      if (p < n && p != skip) dst[p][dstOff + b] = x;
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
template <typename S, typename Args>
__device__ __forceinline__ bool reducePart(const Args& a, const DirectWork& w, int ch, ReducePart* r) {
  const int n = a.nranks, me = a.rank;
  constexpr uint64_t E = 16 / sizeof(S);
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
      copyOut(a, w.in[me], w.out, at, w.in[me] == w.out[me] + at ? me : -1, lo, hi);
    } else if (me == w.root) {
      copyOut(a, w.in[me], w.out, 0, w.in[me] == w.out[me] ? me : -1, lo, hi);
    }
    return;
  }
  if constexpr (std::is_same<S, NoArith>::value) {
    __trap();  // the host launches reducing works only in the kernel of their type
  } else {
    ReducePart r;
    if (!reducePart<S>(a, w, ch, &r)) return;
    switch (w.red) {
      case kRedSum: reduceWork<S, OpSum>(a, w, r); break;
      case kRedProd: reduceWork<S, OpProd>(a, w, r); break;
      case kRedMax: reduceWork<S, OpMax>(a, w, r); break;
      default: reduceWork<S, OpMin>(a, w, r); break;
    }
  }
}

// Block ch runs its share of every work that uses ch, each between an entry and an exit
// barrier. Its flag count lives in this rank's own slot of its barrier array (only this
// rank writes it), so eager launches and graph replays go on from where the last left.
template <int MW, typename S>
__global__ void __launch_bounds__(kMaxThreads, 1) directKernel(const __grid_constant__ DirectArgs<MW> a) {
  __shared__ uint64_t epoch;
  const int ch = blockIdx.x;
  gridDepWait();  // the parameters only, before: nothing the last kernel wrote (grid_dep.cuh)
  if (threadIdx.x == 0) epoch = ldVolatile(a.flags[a.rank] + ch * kDirectMaxRanks + a.rank);
  __syncthreads();
  uint64_t e = epoch;
  for (int wi = 0; wi < a.nworks; ++wi) {
    const DirectWork& w = a.works[wi];
    if (ch >= w.nchannels) continue;
    if (!barrier(a, ch, ++e, false)) return;
    runWork<S>(a, w, ch);
    __syncthreads();
    if (!barrier(a, ch, ++e, true)) return;
  }
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
