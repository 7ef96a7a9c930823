#include "core/memory.h"

#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "core/comm.h"
#include "core/cuda_util.h"
#include "core/datapath.h"
#include "core/error.h"

#ifdef MCCL_HAVE_CUDA
#include "core/cuda_memory.h"
#include "ipc_transport/user_buffers.h"
#endif


namespace mccl {

void* RegTable::add(const void* buff, size_t size, void* transportHandle) {
  std::lock_guard<std::mutex> lock(mu_);
  uintptr_t h = next_++;
  byHandle_[h] = Entry{reinterpret_cast<uintptr_t>(buff), size, transportHandle};
  return reinterpret_cast<void*>(h);
}

bool RegTable::remove(void* handle, Entry* removed) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = byHandle_.find(reinterpret_cast<uintptr_t>(handle));
  if (it == byHandle_.end()) return false;
  if (removed) *removed = it->second;
  byHandle_.erase(it);
  return true;
}

bool RegTable::find(const void* p, size_t bytes, Entry* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  for (const auto& kv : byHandle_) {
    const Entry& e = kv.second;
    if (a >= e.base && a + bytes <= e.base + e.size) {
      if (out) *out = e;
      return true;
    }
  }
  return false;
}

size_t RegTable::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return byHandle_.size();
}

ncclResult_t checkBufferUsable(ncclComm* comm, const void* p, size_t bytes, const char* arg,
                               const char* call) {
  if (comm->isHost()) return ncclSuccess;
#ifdef MCCL_HAVE_CUDA
  return checkDeviceBuffer(comm, p, bytes, arg, call);
#else
  (void)p;
  (void)bytes;
  (void)arg;
  (void)call;
  return ncclSuccess;
#endif
}

namespace {
// Host allocations made by ncclMemAlloc when no GPU is usable.
struct HostAllocs {
  std::mutex mu;
  std::unordered_map<void*, size_t> live;
};
HostAllocs& hostAllocs() {
  static HostAllocs* h = new HostAllocs();
  return *h;
}
}  // namespace

}  // namespace mccl

using namespace mccl;

NCCL_API ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  MCCL_API_BEGIN
  if (ptr == nullptr) return MCCL_ERR(ncclInvalidArgument, nullptr, "ncclMemAlloc: ptr is NULL");
  if (size == 0) {  // as NVIDIA's (cudaMalloc of 0 bytes): success, no memory, a NULL pointer
    *ptr = nullptr;
    return ncclSuccess;
  }
#ifdef MCCL_HAVE_CUDA
  if (cudaUsableDeviceCount() > 0) return deviceMemAlloc(ptr, size);
#endif
  // No usable GPU: page-aligned host memory, so host communicators can use the same code.
  void* p = nullptr;
  if (posix_memalign(&p, 4096, size) != 0 || p == nullptr)
    return MCCL_ERR(ncclSystemError, nullptr, "ncclMemAlloc: cannot allocate %zu bytes of host memory",
                    size);
  std::lock_guard<std::mutex> lock(hostAllocs().mu);
  hostAllocs().live[p] = size;
  *ptr = p;
  return ncclSuccess;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclMemAlloc)

NCCL_API ncclResult_t ncclMemFree(void* ptr) {
  MCCL_API_BEGIN
  if (ptr == nullptr) return ncclSuccess;
  {
    std::lock_guard<std::mutex> lock(hostAllocs().mu);
    auto it = hostAllocs().live.find(ptr);
    if (it != hostAllocs().live.end()) {
      hostAllocs().live.erase(it);
      std::free(ptr);
      return ncclSuccess;
    }
  }
#ifdef MCCL_HAVE_CUDA
  if (cudaUsableDeviceCount() > 0) return deviceMemFree(ptr);
#endif
  return MCCL_ERR(ncclInvalidArgument, nullptr, "ncclMemFree: ptr = %p was not allocated by ncclMemAlloc",
                  ptr);
  MCCL_API_END
}
NCCL_API_ALIAS(ncclMemFree)

NCCL_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  MCCL_API_BEGIN
  const char* call = "ncclCommRegister";
  MCCL_CHECK(checkCommArg(comm, call));
  if (buff == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: buff is NULL", call);
  if (size == 0) return MCCL_ERR(ncclInvalidArgument, comm, "%s: size is 0", call);
  if (handle == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: handle is NULL", call);
  MCCL_CHECK(comm->checkUsable(call));
  void* transport = nullptr;
  MCCL_CHECK(comm->dataPath->registerBuffer(buff, size, &transport));
  *handle = comm->regs.add(buff, size, transport);
  return ncclSuccess;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommRegister)

NCCL_API ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  MCCL_API_BEGIN
  const char* call = "ncclCommDeregister";
  MCCL_CHECK(checkCommArg(comm, call));
  RegTable::Entry e;
  if (handle == nullptr || !comm->regs.remove(handle, &e))
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: handle = %p is not a registration of this communicator", call, handle);
  if (comm->dataPath) comm->dataPath->deregisterBuffer(e.transportHandle);
#ifdef MCCL_HAVE_CUDA
  // Peers' processes close their mappings of it (the user-buffer path).
  if (comm->cudaDev >= 0) forgetUserBuffer(reinterpret_cast<void*>(e.base), e.size);
#endif
  return ncclSuccess;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommDeregister)
