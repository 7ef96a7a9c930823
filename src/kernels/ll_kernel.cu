// The LL kernels compiled for one arithmetic: sums of one type (the common launch of small
// messages, src/kernels/ll_proto.cuh inlined for exactly that type) and data movement
// only. Groups that mix protocols, types or operators run in the generic kernel
// (coll_kernel.cu). A translation unit of its own, so the two compile in parallel.
#include <cuda_runtime.h>

#include "kernels/dev_work.h"
#include "kernels/launch.h"
#include "kernels/ll_proto.cuh"
#include "nccl.h"

namespace mccl {
namespace {

// LL works that sum one type (and any data-movement LL works): the common launch of small
// messages, compiled for exactly that arithmetic.
template <typename T>
__global__ void __launch_bounds__(kMaxThreads, 1) llSumKernel(const __grid_constant__ KernelArgs<kSmallLaunch> args) {
  __shared__ LlShared sh;
  const DevQueue& q = args.queues[blockIdx.x];
  for (int wi = 0; wi < args.nworks; ++wi) {
    const DevWork& w = args.works[wi];
    if (!queueRuns(q, w)) continue;
    const bool ok = collReduces(w.s.coll) ? llReduceWork<T, OpSum>(&args.comm, &w, q.channel, &sh)
                                          : llCopyWork(&args.comm, &w, q.channel, &sh);
    if (!ok) return;
  }
}

// LL works that only move data (AllGather, Broadcast, Send, Recv).
__global__ void __launch_bounds__(kMaxThreads, 1) llCopyKernel(const __grid_constant__ KernelArgs<kSmallLaunch> args) {
  __shared__ LlShared sh;
  const DevQueue& q = args.queues[blockIdx.x];
  for (int wi = 0; wi < args.nworks; ++wi) {
    const DevWork& w = args.works[wi];
    if (!queueRuns(q, w)) continue;
    if (!llCopyWork(&args.comm, &w, q.channel, &sh)) return;
  }
}

using LlKernelFn = void (*)(KernelArgs<kSmallLaunch>);

LlKernelFn llSumKernelFor(int type) {
  switch (type) {
    case ncclInt8: return llSumKernel<int8_t>;
    case ncclUint8: return llSumKernel<uint8_t>;
    case ncclInt32: return llSumKernel<int32_t>;
    case ncclUint32: return llSumKernel<uint32_t>;
    case ncclInt64: return llSumKernel<int64_t>;
    case ncclUint64: return llSumKernel<uint64_t>;
    case ncclFloat16: return llSumKernel<__half>;
    case ncclFloat32: return llSumKernel<float>;
    case ncclFloat64: return llSumKernel<double>;
    case ncclBfloat16: return llSumKernel<__nv_bfloat16>;
    case ncclFloat8e4m3: return llSumKernel<Fp8E4M3>;
    default: return llSumKernel<Fp8E5M2>;
  }
}

}  // namespace

size_t llKernelStackBytesMax() {
  size_t most = 0;
  cudaFuncAttributes a;
  if (cudaFuncGetAttributes(&a, llCopyKernel) == cudaSuccess) most = a.localSizeBytes;
  for (int t = 0; t < ncclNumTypes; ++t)
    if (cudaFuncGetAttributes(&a, llSumKernelFor(t)) == cudaSuccess && a.localSizeBytes > most) most = a.localSizeBytes;
  cudaGetLastError();
  return most;
}

void launchLlKernel(const LaunchSpec& spec, const KernelArgs<kSmallLaunch>& args, cudaStream_t stream) {
  void (*fn)(KernelArgs<kSmallLaunch>) = spec.kind == LaunchKind::LlCopy ? llCopyKernel : llSumKernelFor(spec.type);
  fn<<<dim3(spec.blocks), dim3(spec.threads), 0, stream>>>(args);
}

}  // namespace mccl
