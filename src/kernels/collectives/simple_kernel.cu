// The Simple kernels of aligned launches and the host's entry to both kinds (simple_kernel.cuh).
#include "kernels/collectives/simple_kernel.cuh"

#include <algorithm>

namespace mccl {
namespace {

SimpleKernelFn simpleKernelOf(const LaunchSpec& spec) {
  if (spec.unaligned) return simpleWideKernelOf(spec);
  if (!spec.reduces) return simpleKernel<NoArith, false>;
  return withType(spec.type, [](auto t) -> SimpleKernelFn { return simpleKernel<typename decltype(t)::type, false>; });
}

}  // namespace

size_t simpleKernelStackBytesMax() {
  size_t most = 0;
  cudaFuncAttributes a;
  LaunchSpec spec;
  for (int t = -1; t < ncclNumTypes; ++t)
    for (bool unaligned : {false, true}) {
      spec.reduces = t >= 0;
      spec.type = t;
      spec.unaligned = unaligned;
      if (cudaFuncGetAttributes(&a, simpleKernelOf(spec)) == cudaSuccess) most = std::max(most, a.localSizeBytes);
    }
  cudaGetLastError();
  return most;
}

const void* simpleKernelFunction(const LaunchSpec& spec) { return reinterpret_cast<const void*>(simpleKernelOf(spec)); }

void launchSimpleKernel(const LaunchSpec& spec, const void* args, cudaStream_t stream) {
  simpleKernelOf(spec)<<<dim3(spec.blocks), dim3(spec.threads), 0, stream>>>(*static_cast<const SimpleArgs*>(args));
}

}  // namespace mccl
