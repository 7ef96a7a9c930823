// The kernels of the floating-point types (every operator).
#include "kernels/collectives/coll_kernel.cuh"

namespace mccl {

template <int MW>
CollKernelFn<MW> collKernelFloat(int type) {
  switch (type) {
    case ncclFloat16: return collKernel<MW, __half>;
    case ncclFloat32: return collKernel<MW, float>;
    case ncclFloat64: return collKernel<MW, double>;
    case ncclBfloat16: return collKernel<MW, __nv_bfloat16>;
    case ncclFloat8e4m3: return collKernel<MW, Fp8E4M3>;
    case ncclFloat8e5m2: return collKernel<MW, Fp8E5M2>;
    default: return nullptr;
  }
}

template CollKernelFn<kSmallLaunch> collKernelFloat<kSmallLaunch>(int);
template CollKernelFn<kLargeLaunch> collKernelFloat<kLargeLaunch>(int);

}  // namespace mccl
