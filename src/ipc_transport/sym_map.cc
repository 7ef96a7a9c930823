#include "ipc_transport/sym_map.h"

#include <cuda.h>

#include <cstring>

#include "core/comm.h"
#include "core/cuda_util.h"
#include "core/error.h"

namespace mccl {

namespace {

// cuMemGetAddressRange through the runtime's driver entry point (libmccl does not link
// libcuda): the allocation a pointer lies in.
typedef CUresult (*AddressRangeFn)(CUdeviceptr*, size_t*, CUdeviceptr);

AddressRangeFn addressRangeFn() {
  static const AddressRangeFn fn = reinterpret_cast<AddressRangeFn>(cudaDriverFunction("cuMemGetAddressRange"));
  return fn;
}

}  // namespace

ncclResult_t symDescribe(ncclComm* comm, void* p, size_t size, const char* call, SymExport* out) {
  cudaPointerAttributes attr;
  cudaError_t e = cudaPointerGetAttributes(&attr, p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: buff = %p is not memory CUDA knows (%s)", call, p,
                    cudaGetErrorString(e));
  }
  if (attr.type != cudaMemoryTypeDevice)
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: buff = %p is not device memory (a window needs memory from cudaMalloc or ncclMemAlloc)",
                    call, p);
  if (attr.device != comm->cudaDev)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: buff = %p lives on device %d, not on the communicator's device %d",
                    call, p, attr.device, comm->cudaDev);
  AddressRangeFn range = addressRangeFn();
  if (range == nullptr)
    return MCCL_ERR(ncclSystemError, comm, "%s: the CUDA driver offers no cuMemGetAddressRange", call);
  CUdeviceptr base = 0;
  size_t bytes = 0;
  if (range(&base, &bytes, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: buff = %p is not inside a CUDA allocation", call, p);
  const uint64_t offset = reinterpret_cast<uint64_t>(p) - static_cast<uint64_t>(base);
  if (offset > bytes || size > bytes - offset)
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: [buff, buff + size) = [%p, +%zu) runs past the end of its CUDA allocation (%zu bytes from %p)",
                    call, p, size, bytes, reinterpret_cast<void*>(base));
  SymExport r;
  std::memset(&r.handle, 0, sizeof r.handle);
  e = cudaIpcGetMemHandle(&r.handle, p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: buff = %p cannot be shared with other processes through CUDA IPC (%s); "
                    "allocate it with cudaMalloc or ncclMemAlloc",
                    call, p, cudaGetErrorString(e));
  }
  r.dev = comm->cudaDev;
  r.processHash = comm->topo.me().processHash;
  r.ptr = reinterpret_cast<uint64_t>(p);
  r.size = size;
  r.offset = offset;
  r.allocBytes = bytes;
  *out = r;
  return ncclSuccess;
}

std::pair<int, uint64_t> SymMapper::key(int peer, const SymExport& rec) {
  // The allocation's base in its owner's process: windows inside one allocation share one
  // mapping (whatever handle bytes CUDA gave for each of their pointers).
  return {peer, rec.ptr - rec.offset};
}

ncclResult_t SymMapper::open(int peer, const SymExport& rec, char** mapped) {
  if (peer == comm_->rank) {
    *mapped = reinterpret_cast<char*>(rec.ptr);
    return ncclSuccess;
  }
  if (rec.processHash == comm_->topo.me().processHash) {
    // A thread of this process: its pointer is valid here once peer access is on.
    if (rec.dev != comm_->cudaDev) {
      cudaError_t e = cudaDeviceEnablePeerAccess(rec.dev, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
      } else if (e != cudaSuccess) {
        cudaGetLastError();
        return MCCL_ERR(ncclUnhandledCudaError, comm_, "cudaDeviceEnablePeerAccess(%d -> %d) for rank %d's window: %s",
                        comm_->cudaDev, rec.dev, peer, cudaGetErrorString(e));
      }
    }
    *mapped = reinterpret_cast<char*>(rec.ptr);
    return ncclSuccess;
  }
  auto k = key(peer, rec);
  auto it = opened_.find(k);
  if (it == opened_.end()) {
    void* p = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle(&p, rec.handle, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return MCCL_ERR(ncclUnhandledCudaError, comm_, "cudaIpcOpenMemHandle of rank %d's window: %s", peer,
                      cudaGetErrorString(e));
    }
    Mapping m;
    m.base = static_cast<char*>(p);
    m.bytes = rec.allocBytes;
    it = opened_.emplace(k, m).first;
    comm_->mem.add(MemKind::PeerMapped, m.bytes);
  }
  it->second.refs++;
  *mapped = it->second.base + rec.offset;
  return ncclSuccess;
}

void SymMapper::close(int peer, const SymExport& rec) {
  if (peer == comm_->rank || rec.processHash == comm_->topo.me().processHash) return;
  auto it = opened_.find(key(peer, rec));
  if (it == opened_.end()) return;
  if (--it->second.refs > 0) return;
  cudaIpcCloseMemHandle(it->second.base);
  comm_->mem.sub(MemKind::PeerMapped, it->second.bytes);
  opened_.erase(it);
}

SymMapper::~SymMapper() {
  for (auto& kv : opened_) {
    cudaIpcCloseMemHandle(kv.second.base);
    comm_->mem.sub(MemKind::PeerMapped, kv.second.bytes);
  }
}

}  // namespace mccl
