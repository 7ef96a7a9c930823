// The Simple kernels of launches with unaligned works (kWide, simple_kernel.cuh): a
// translation unit of its own, so the two kinds compile in parallel.
#include "kernels/collectives/simple_kernel.cuh"

namespace mccl {

SimpleKernelFn simpleWideKernelOf(const LaunchSpec& spec) {
  if (!spec.reduces) return simpleKernel<NoArith, true>;
  return withType(spec.type, [](auto t) -> SimpleKernelFn { return simpleKernel<typename decltype(t)::type, true>; });
}

}  // namespace mccl
