#include "ipc_transport/conn_table.h"

#include <cuda.h>

#include <string>

#include "core/comm.h"
#include "core/cuda_util.h"
#include "core/error.h"
#include "core/knobs.h"

namespace mccl {

namespace {

// The driver's virtual memory calls, through the runtime's entry points (libmccl does not
// link libcuda). All or nothing: without one of them the table is allocated whole.
struct VmmCalls {
  CUresult (*reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long) = nullptr;
  CUresult (*free)(CUdeviceptr, size_t) = nullptr;
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long) = nullptr;
  CUresult (*release)(CUmemGenericAllocationHandle) = nullptr;
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) = nullptr;
  CUresult (*unmap)(CUdeviceptr, size_t) = nullptr;
  CUresult (*setAccess)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) = nullptr;
  CUresult (*granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  bool ok() const { return attribute != nullptr; }
};

const VmmCalls& vmm() {
  static const VmmCalls calls = [] {
    VmmCalls c;
    const char* names[9] = {"cuMemAddressReserve", "cuMemAddressFree", "cuMemCreate",
                            "cuMemRelease",        "cuMemMap",         "cuMemUnmap",
                            "cuMemSetAccess",      "cuMemGetAllocationGranularity", "cuDeviceGetAttribute"};
    void* fn[9] = {};
    for (int i = 0; i < 9; ++i)
      if ((fn[i] = cudaDriverFunction(names[i])) == nullptr) return VmmCalls{};
    c.reserve = reinterpret_cast<decltype(c.reserve)>(fn[0]);
    c.free = reinterpret_cast<decltype(c.free)>(fn[1]);
    c.create = reinterpret_cast<decltype(c.create)>(fn[2]);
    c.release = reinterpret_cast<decltype(c.release)>(fn[3]);
    c.map = reinterpret_cast<decltype(c.map)>(fn[4]);
    c.unmap = reinterpret_cast<decltype(c.unmap)>(fn[5]);
    c.setAccess = reinterpret_cast<decltype(c.setAccess)>(fn[6]);
    c.granularity = reinterpret_cast<decltype(c.granularity)>(fn[7]);
    c.attribute = reinterpret_cast<decltype(c.attribute)>(fn[8]);
    return c;
  }();
  return calls;
}

CUmemAllocationProp deviceProp(int dev) {
  CUmemAllocationProp p = {};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  return p;
}

}  // namespace

ConnTable::~ConnTable() { release(); }

void ConnTable::release() {
  if (base_ == nullptr) return;
  if (reserved_ == 0) {
    cudaFree(base_);
  } else {
    const VmmCalls& v = vmm();
    for (const auto& pg : pages_) {
      v.unmap(reinterpret_cast<CUdeviceptr>(base_) + pg.first * page_, page_);
      v.release(static_cast<CUmemGenericAllocationHandle>(pg.second));
    }
    v.free(reinterpret_cast<CUdeviceptr>(base_), reserved_);
    pages_.clear();
  }
  comm_->mem.sub(MemKind::Control, mapped_);
  base_ = nullptr;
  mapped_ = reserved_ = 0;
}

ncclResult_t ConnTable::init(ncclComm* comm, int npeers, size_t blockBytes, cudaStream_t clearStream) {
  comm_ = comm;
  clear_ = clearStream;
  block_ = blockBytes;
  const size_t bytes = blockBytes * static_cast<size_t>(npeers);
  const VmmCalls& v = vmm();
  const std::string mode = knobStr(Knob::ConnTable);
  int vmmSupported = 0;
  if (v.ok() && mode != "full" &&
      v.attribute(&vmmSupported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                  static_cast<CUdevice>(comm->cudaDev)) == CUDA_SUCCESS &&
      vmmSupported) {
    const CUmemAllocationProp prop = deviceProp(comm->cudaDev);
    size_t gran = 0;
    CUdeviceptr va = 0;
    // A table within one page gains nothing from being mapped page by page, and whole it
    // can be exported through CUDA IPC, so the senders' heads sit in it, where the LL
    // kernels load them beside the connection (ipc.h): MCCL_CONN_TABLE=auto keeps it whole.
    const bool small = v.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS && gran > 0 &&
                       bytes <= gran && mode != "sparse";
    if (!small && gran > 0) {
      const size_t reserve = (bytes + gran - 1) / gran * gran;
      if (v.reserve(&va, reserve, gran, 0, 0) == CUDA_SUCCESS) {
        base_ = reinterpret_cast<uint8_t*>(va);
        page_ = gran;
        reserved_ = reserve;
        return ncclSuccess;
      }
    }
    cudaGetLastError();
    if (!small)
      INFO(kLogInit, "rank %d: no address range for a sparse GPU connection table; allocating it whole", comm->rank);
  }
  cudaGetLastError();
  MCCL_CUDA_TRY(comm, cudaMalloc(&base_, bytes), "cudaMalloc(connection table)");
  mapped_ = bytes;
  comm->mem.add(MemKind::Control, mapped_);
  MCCL_CUDA_TRY(comm, cudaMemsetAsync(base_, 0, bytes, clear_), "cudaMemsetAsync(connection table)");
  MCCL_CUDA_TRY(comm, cudaStreamSynchronize(clear_), "cudaStreamSynchronize(connection table)");
  return ncclSuccess;
}

ncclResult_t ConnTable::map(int peer) {
  if (reserved_ == 0) return ncclSuccess;
  const size_t first = static_cast<size_t>(peer) * block_ / page_;
  const size_t last = (static_cast<size_t>(peer) * block_ + block_ - 1) / page_;
  const VmmCalls& v = vmm();
  for (size_t pg = first; pg <= last; ++pg) {
    if (pages_.count(pg)) continue;
    const CUmemAllocationProp prop = deviceProp(comm_->cudaDev);
    CUmemGenericAllocationHandle h = 0;
    CUresult r = v.create(&h, page_, &prop, 0);
    if (r != CUDA_SUCCESS)
      return MCCL_ERR(ncclUnhandledCudaError, comm_, "cuMemCreate(%zu bytes of the connection table): CUDA driver error %d", page_, static_cast<int>(r));
    const CUdeviceptr at = reinterpret_cast<CUdeviceptr>(base_) + pg * page_;
    r = v.map(at, page_, 0, h, 0);
    if (r == CUDA_SUCCESS) {
      CUmemAccessDesc access = {};
      access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access.location.id = comm_->cudaDev;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      r = v.setAccess(at, page_, &access, 1);
      if (r != CUDA_SUCCESS) v.unmap(at, page_);
    }
    if (r != CUDA_SUCCESS) {
      v.release(h);
      return MCCL_ERR(ncclUnhandledCudaError, comm_, "mapping a page of the connection table: CUDA driver error %d",
                      static_cast<int>(r));
    }
    pages_.emplace(pg, static_cast<unsigned long long>(h));
    mapped_ += page_;
    comm_->mem.add(MemKind::Control, page_);
    // Cleared before any connection of it is published: zero means not connected.
    MCCL_CUDA_TRY(comm_, cudaMemsetAsync(reinterpret_cast<void*>(at), 0, page_, clear_), "cudaMemsetAsync(connection table)");
    MCCL_CUDA_TRY(comm_, cudaStreamSynchronize(clear_), "cudaStreamSynchronize(connection table)");
  }
  return ncclSuccess;
}

}  // namespace mccl
