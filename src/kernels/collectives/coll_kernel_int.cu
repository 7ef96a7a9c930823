// The kernels of the integer types (every operator).
#include "kernels/collectives/coll_kernel.cuh"

namespace mccl {

template <int MW>
CollKernelFn<MW> collKernelInt(int type) {
  switch (type) {
    case ncclInt8: return collKernel<MW, int8_t>;
    case ncclUint8: return collKernel<MW, uint8_t>;
    case ncclInt32: return collKernel<MW, int32_t>;
    case ncclUint32: return collKernel<MW, uint32_t>;
    case ncclInt64: return collKernel<MW, int64_t>;
    case ncclUint64: return collKernel<MW, uint64_t>;
    default: return nullptr;
  }
}

template CollKernelFn<kSmallLaunch> collKernelInt<kSmallLaunch>(int);
template CollKernelFn<kLargeLaunch> collKernelInt<kLargeLaunch>(int);

}  // namespace mccl
