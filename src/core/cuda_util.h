// The little of the CUDA runtime that core needs, available whether or not mccl was built
// with CUDA (without it, no GPU is ever usable).
#pragma once

#include <cstdint>

#include "nccl.h"

namespace mccl {

bool cudaBuilt();                 // compiled with CUDA support
int cudaUsableDeviceCount();      // 0 when the runtime, driver or devices are missing
// For sources built with CUDA: returns from the calling function with
// ncclUnhandledCudaError (and a sentence naming what failed, for ncclGetLastError) when a
// CUDA runtime call fails. MCCL_ERR is core/error.h's.
#define MCCL_CUDA_TRY(comm, call, what)                                                      \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess)                                                                   \
      return MCCL_ERR(ncclUnhandledCudaError, comm, "%s: %s", what, cudaGetErrorString(e_)); \
  } while (0)

// A driver function by name, through the runtime's entry point (libmccl does not link
// libcuda), as the CUDA 12.0 ABI declares it; null when the driver lacks it (or no CUDA).
void* cudaDriverFunction(const char* name);

ncclResult_t cudaGetCurrentDevice(int* dev);  // ncclUnhandledCudaError on failure
ncclResult_t cudaSelectDevice(int dev);       // cudaSetDevice
// UUID (16 bytes), PCI bus id and NUMA node of dev.
ncclResult_t cudaDeviceIdentity(int dev, uint8_t uuid[16], char* busId, int busIdLen, int* numa);

}  // namespace mccl
