#include "ipc_transport/mem_ops.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/cuda_util.h"

namespace mccl {

BatchMemOpFn batchMemOp() {
  static const BatchMemOpFn fn = reinterpret_cast<BatchMemOpFn>(cudaDriverFunction("cuStreamBatchMemOp"));
  return fn;
}

bool memOps64(int dev) {
  typedef CUresult (*DeviceGetFn)(CUdevice*, int);
  typedef CUresult (*DeviceAttributeFn)(int*, CUdevice_attribute, CUdevice);
  static const DeviceGetFn get = reinterpret_cast<DeviceGetFn>(cudaDriverFunction("cuDeviceGet"));
  static const DeviceAttributeFn attr = reinterpret_cast<DeviceAttributeFn>(cudaDriverFunction("cuDeviceGetAttribute"));
  CUdevice d = 0;
  int v = 0;
  return get && attr && get(&d, dev) == CUDA_SUCCESS &&
         attr(&v, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, d) == CUDA_SUCCESS && v != 0;
}

CUstreamBatchMemOpParams memOpWrite(uint64_t addr, uint64_t value) {
  CUstreamBatchMemOpParams o;
  std::memset(&o, 0, sizeof o);
  o.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  o.writeValue.address = addr;
  o.writeValue.value64 = value;
  o.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;  // after a memory barrier
  return o;
}

CUstreamBatchMemOpParams memOpWaitGeq(uint64_t addr, uint64_t value) {
  CUstreamBatchMemOpParams o;
  std::memset(&o, 0, sizeof o);
  o.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
  o.waitValue.address = addr;
  o.waitValue.value64 = value;
  o.waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  return o;
}

void* mapSharedPage(const char* name, size_t bytes, bool create, bool exclusive, std::string* why) {
  const int flags = O_RDWR | (create ? O_CREAT : 0) | (exclusive ? O_EXCL : 0);
  const int fd = shm_open(name, flags, 0600);
  if (fd < 0) {
    *why = std::string("shm_open(") + name + "): " + std::strerror(errno);
    return nullptr;
  }
  void* p = MAP_FAILED;
  // Every end sizes it alike: the first makes it zero-filled, a second ftruncate is a no-op.
  if (ftruncate(fd, static_cast<off_t>(bytes)) == 0) p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    *why = std::string("mapping ") + name + ": " + std::strerror(err);
    return nullptr;
  }
  return p;
}

uint64_t registerSharedPage(void* p, size_t bytes) {
  void* d = nullptr;
  if (cudaHostRegister(p, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  if (cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess) {
    cudaGetLastError();
    cudaHostUnregister(p);
    return 0;
  }
  return reinterpret_cast<uint64_t>(d);
}

}  // namespace mccl
