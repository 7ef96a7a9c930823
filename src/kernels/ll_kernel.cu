// The LL kernels compiled for one arithmetic: sums of one type (the common launch of small
// messages, src/kernels/ll_proto.cuh inlined for exactly that type) and data movement
// only. Groups that mix protocols, types or operators run in the generic kernel
// (coll_kernel.cu). A translation unit of its own, so the two compile in parallel.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "kernels/dev_work.h"
#include "kernels/launch.h"
#include "kernels/launch_fn.h"
#include "kernels/ll_proto.cuh"
#include "nccl.h"

namespace mccl {
namespace {

// What the works of a launch read, copied from the kernel's parameters to shared memory
// when the block starts: the work functions reach DevComm and DevWork through pointers,
// and a load through a pointer into the parameters is slow (MCCL_PROFILE measured 1.25 us
// from a block's start to its first work's setup on an H100, two such loads deep), where
// the copy is one round of loads, 8 bytes a thread, and every later read is shared memory.
template <typename Args>
struct LlArgsShared {
  DevComm comm;
  DevWork works[Args::kWorks];
};

template <typename Args>
__device__ __forceinline__ void llBlockStart(const Args& args, LlArgsShared<Args>& a, LlShared& sh) {
  static_assert(sizeof(DevComm) % 8 == 0 && sizeof(DevWork) % 8 == 0, "copied in 8-byte words");
  static_assert(offsetof(Args, works) % 8 == 0, "works are 8-byte aligned");
  if (threadIdx.x == 0) sh.entryNs = args.comm.prof ? globalTimer() : 0;  // MCCL_PROFILE
  constexpr int kCommWords = sizeof(DevComm) / 8, kWorkWords = sizeof(DevWork) / 8;
  const int words = kCommWords + args.nworks * kWorkWords;
  const uint64_t* comm = reinterpret_cast<const uint64_t*>(&args.comm);
  const uint64_t* works = reinterpret_cast<const uint64_t*>(&args.works[0]);
  for (int i = threadIdx.x; i < words; i += blockDim.x) {
    if (i < kCommWords) reinterpret_cast<uint64_t*>(&a.comm)[i] = comm[i];
    else reinterpret_cast<uint64_t*>(&a.works[0])[i - kCommWords] = works[i - kCommWords];
  }
  __syncthreads();
}

// LL works that sum one type (and any data-movement LL works): the common launch of small
// messages, compiled for exactly that arithmetic.
template <typename T, typename Args>
__global__ void __launch_bounds__(kMaxThreads, 1) llSumKernel(const __grid_constant__ Args args) {
  __shared__ LlShared sh;
  __shared__ LlArgsShared<Args> a;
  llBlockStart(args, a, sh);
  const DevQueue q = args.queues[blockIdx.x];
  for (int wi = 0; wi < args.nworks; ++wi) {
    const DevWork& w = a.works[wi];
    if (!queueRuns(q, w)) continue;
    const bool ok = collReduces(w.s.coll) ? llReduceWork<T, OpSum>(&a.comm, &w, q.channel, &sh)
                                          : llCopyWork(&a.comm, &w, q.channel, &sh);
    if (!ok) return;
  }
}

// LL works that only move data (AllGather, Broadcast, Send, Recv).
template <typename Args>
__global__ void __launch_bounds__(kMaxThreads, 1) llCopyKernel(const __grid_constant__ Args args) {
  __shared__ LlShared sh;
  __shared__ LlArgsShared<Args> a;
  llBlockStart(args, a, sh);
  const DevQueue q = args.queues[blockIdx.x];
  for (int wi = 0; wi < args.nworks; ++wi) {
    const DevWork& w = a.works[wi];
    if (!queueRuns(q, w)) continue;
    if (!llCopyWork(&a.comm, &w, q.channel, &sh)) return;
  }
}

template <typename Args>
using LlKernelFn = void (*)(Args);

template <typename Args>
LlKernelFn<Args> llSumKernelFor(int type) {
  switch (type) {
    case ncclInt8: return llSumKernel<int8_t, Args>;
    case ncclUint8: return llSumKernel<uint8_t, Args>;
    case ncclInt32: return llSumKernel<int32_t, Args>;
    case ncclUint32: return llSumKernel<uint32_t, Args>;
    case ncclInt64: return llSumKernel<int64_t, Args>;
    case ncclUint64: return llSumKernel<uint64_t, Args>;
    case ncclFloat16: return llSumKernel<__half, Args>;
    case ncclFloat32: return llSumKernel<float, Args>;
    case ncclFloat64: return llSumKernel<double, Args>;
    case ncclBfloat16: return llSumKernel<__nv_bfloat16, Args>;
    case ncclFloat8e4m3: return llSumKernel<Fp8E4M3, Args>;
    default: return llSumKernel<Fp8E5M2, Args>;
  }
}

template <typename Args>
size_t llStackMax() {
  size_t most = 0;
  cudaFuncAttributes a;
  if (cudaFuncGetAttributes(&a, llCopyKernel<Args>) == cudaSuccess) most = a.localSizeBytes;
  for (int t = 0; t < ncclNumTypes; ++t)
    if (cudaFuncGetAttributes(&a, llSumKernelFor<Args>(t)) == cudaSuccess && a.localSizeBytes > most)
      most = a.localSizeBytes;
  return most;
}

template <typename Args>
void launchLl(const LaunchSpec& spec, const Args& args, cudaStream_t stream) {
  LlKernelFn<Args> fn = spec.kind == LaunchKind::LlCopy ? llCopyKernel<Args> : llSumKernelFor<Args>(spec.type);
  fn<<<dim3(spec.blocks), dim3(spec.threads), 0, stream>>>(args);
}

}  // namespace

size_t llKernelStackBytesMax() {
  const size_t most = std::max(llStackMax<TinyArgs>(), llStackMax<KernelArgs<kSmallLaunch>>());
  cudaGetLastError();
  return most;
}

const void* llKernelFunction(const LaunchSpec& spec) {
  if (spec.tiny)
    return reinterpret_cast<const void*>(spec.kind == LaunchKind::LlCopy ? llCopyKernel<TinyArgs>
                                                                         : llSumKernelFor<TinyArgs>(spec.type));
  using Small = KernelArgs<kSmallLaunch>;
  return reinterpret_cast<const void*>(spec.kind == LaunchKind::LlCopy ? llCopyKernel<Small>
                                                                       : llSumKernelFor<Small>(spec.type));
}

void launchLlKernel(const LaunchSpec& spec, const void* args, cudaStream_t stream) {
  if (spec.tiny) launchLl(spec, *static_cast<const TinyArgs*>(args), stream);
  else launchLl(spec, *static_cast<const KernelArgs<kSmallLaunch>*>(args), stream);
}

}  // namespace mccl
