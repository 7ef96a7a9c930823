#include "core/cuda_util.h"

#include <cstdio>
#include <cstring>

#include "core/error.h"

#ifdef MCCL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace mccl {

#ifdef MCCL_HAVE_CUDA

bool cudaBuilt() { return true; }

int cudaUsableDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

void* cudaDriverFunction(const char* name) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return f;
}

ncclResult_t cudaGetCurrentDevice(int* dev) {
  cudaError_t e = cudaGetDevice(dev);
  if (e != cudaSuccess)
    return MCCL_ERR(ncclUnhandledCudaError, nullptr, "cudaGetDevice: %s", cudaGetErrorString(e));
  return ncclSuccess;
}

ncclResult_t cudaSelectDevice(int dev) {
  cudaError_t e = cudaSetDevice(dev);
  if (e != cudaSuccess)
    return MCCL_ERR(ncclUnhandledCudaError, nullptr, "cudaSetDevice(%d): %s", dev, cudaGetErrorString(e));
  return ncclSuccess;
}

ncclResult_t cudaDeviceIdentity(int dev, uint8_t uuid[16], char* busId, int busIdLen, int* numa) {
  cudaDeviceProp prop;
  cudaError_t e = cudaGetDeviceProperties(&prop, dev);
  if (e != cudaSuccess)
    return MCCL_ERR(ncclUnhandledCudaError, nullptr, "cudaGetDeviceProperties(%d): %s", dev,
                    cudaGetErrorString(e));
  std::memcpy(uuid, prop.uuid.bytes, 16);
  e = cudaDeviceGetPCIBusId(busId, busIdLen, dev);
  if (e != cudaSuccess) std::snprintf(busId, static_cast<size_t>(busIdLen), "unknown");
  int node = -1;
  if (cudaDeviceGetAttribute(&node, cudaDevAttrNumaId, dev) != cudaSuccess) {
    cudaGetLastError();
    node = -1;
  }
  *numa = node;
  return ncclSuccess;
}

#else

bool cudaBuilt() { return false; }
int cudaUsableDeviceCount() { return 0; }
void* cudaDriverFunction(const char*) { return nullptr; }
ncclResult_t cudaGetCurrentDevice(int* dev) {
  *dev = -1;
  return MCCL_ERR(ncclUnhandledCudaError, nullptr, "mccl was built without CUDA");
}
ncclResult_t cudaSelectDevice(int dev) {
  return MCCL_ERR(ncclUnhandledCudaError, nullptr, "mccl was built without CUDA (device %d)", dev);
}
ncclResult_t cudaDeviceIdentity(int, uint8_t uuid[16], char* busId, int busIdLen, int* numa) {
  std::memset(uuid, 0, 16);
  std::snprintf(busId, static_cast<size_t>(busIdLen), "none");
  *numa = -1;
  return ncclSuccess;
}

#endif

}  // namespace mccl
