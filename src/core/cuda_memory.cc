#include "core/cuda_memory.h"

#include <cuda_runtime.h>

#include "core/comm.h"
#include "core/error.h"

namespace mccl {

ncclResult_t deviceMemAlloc(void** ptr, size_t size) {
  cudaError_t e = cudaMalloc(ptr, size);
  if (e != cudaSuccess)
    return MCCL_ERR(ncclUnhandledCudaError, nullptr, "ncclMemAlloc(%zu): %s", size, cudaGetErrorString(e));
  return ncclSuccess;
}

ncclResult_t deviceMemFree(void* ptr) {
  cudaError_t e = cudaFree(ptr);
  if (e != cudaSuccess)
    return MCCL_ERR(ncclUnhandledCudaError, nullptr, "ncclMemFree(%p): %s", ptr, cudaGetErrorString(e));
  return ncclSuccess;
}

ncclResult_t checkDeviceBuffer(ncclComm* comm, const void* p, size_t bytes, const char* arg,
                               const char* call) {
  (void)bytes;
  cudaPointerAttributes attr;
  cudaError_t e = cudaPointerGetAttributes(&attr, p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: %s = %p is not memory CUDA knows (%s)", call, arg,
                    p, cudaGetErrorString(e));
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice:
      if (attr.device != comm->cudaDev)
        return MCCL_ERR(ncclInvalidArgument, comm,
                        "%s: %s = %p lives on device %d, not on the communicator's device %d "
                        "(peer memory is not accepted)",
                        call, arg, p, attr.device, comm->cudaDev);
      return ncclSuccess;
    case cudaMemoryTypeManaged:
      return ncclSuccess;
    case cudaMemoryTypeHost:
      if (attr.devicePointer != nullptr) return ncclSuccess;
      return MCCL_ERR(ncclInvalidArgument, comm, "%s: %s = %p is host memory not mapped into the device",
                      call, arg, p);
    default:
      return MCCL_ERR(ncclInvalidArgument, comm,
                      "%s: %s = %p is unregistered host memory; GPU communicators need device memory",
                      call, arg, p);
  }
}

}  // namespace mccl
