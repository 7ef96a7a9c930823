// The data-movement kernels (no arithmetic), and the host entry to every kernel.
#include <algorithm>

#include "kernels/collectives/coll_kernel.cuh"
#include "kernels/launch/direct_launch.h"
#include "kernels/launch/launch_fn.h"

namespace mccl {

template <int MW>
CollKernelFn<MW> collKernelCopy() {
  return collKernel<MW, NoArith>;
}
template CollKernelFn<kSmallLaunch> collKernelCopy<kSmallLaunch>();
template CollKernelFn<kLargeLaunch> collKernelCopy<kLargeLaunch>();

namespace {

template <int MW>
CollKernelFn<MW> collKernelFor(const LaunchSpec& spec) {
  if (!spec.reduces) return collKernelCopy<MW>();
  CollKernelFn<MW> fn = collKernelInt<MW>(spec.type);
  return fn ? fn : collKernelFloat<MW>(spec.type);
}

template <int MW>
size_t stackOf(CollKernelFn<MW> fn) {
  cudaFuncAttributes a;
  if (fn == nullptr || cudaFuncGetAttributes(&a, fn) != cudaSuccess) return 0;
  return a.localSizeBytes;
}

}  // namespace

size_t kernelStackBytesMax() {
  size_t most = std::max({llKernelStackBytesMax(), directKernelStackBytesMax(), simpleKernelStackBytesMax(),
                          stackOf(collKernelCopy<kSmallLaunch>()), stackOf(collKernelCopy<kLargeLaunch>())});
  for (int t = 0; t < ncclNumTypes; ++t) {
    LaunchSpec s;
    s.reduces = true;
    s.type = t;
    most = std::max(most, std::max(stackOf(collKernelFor<kSmallLaunch>(s)), stackOf(collKernelFor<kLargeLaunch>(s))));
  }
  cudaGetLastError();
  return most;
}

const void* kernelFunction(const LaunchSpec& spec, const DevWork* works, int nworks) {
  if (spec.kind == LaunchKind::Simple) return simpleKernelFunction(spec);
  if (spec.kind != LaunchKind::Generic) return llKernelFunction(spec, works, nworks);
  return spec.large ? reinterpret_cast<const void*>(collKernelFor<kLargeLaunch>(spec))
                    : reinterpret_cast<const void*>(collKernelFor<kSmallLaunch>(spec));
}

ncclResult_t launchKernel(const LaunchSpec& spec, const void* args, cudaStream_t stream, const char** error) {
  const dim3 grid(spec.blocks), block(spec.threads);
  if (spec.kind == LaunchKind::Generic) {
    if (spec.large)
      collKernelFor<kLargeLaunch>(spec)<<<grid, block, 0, stream>>>(*static_cast<const KernelArgs<kLargeLaunch>*>(args));
    else
      collKernelFor<kSmallLaunch>(spec)<<<grid, block, 0, stream>>>(*static_cast<const KernelArgs<kSmallLaunch>*>(args));
  } else if (spec.kind == LaunchKind::Simple) {
    launchSimpleKernel(spec, args, stream);
  } else {
    launchLlKernel(spec, args, stream);
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    *error = cudaGetErrorString(e);
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

}  // namespace mccl
