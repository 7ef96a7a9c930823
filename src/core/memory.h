// ncclMemAlloc / ncclMemFree, buffer registration, and NCCL_CHECK_POINTERS checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "nccl.h"

struct ncclComm;

namespace mccl {

// Buffers registered on one communicator with ncclCommRegister.
class RegTable {
 public:
  struct Entry {
    uintptr_t base;
    size_t size;
    void* transportHandle;  // what the data path attached (IPC mapping, UCX memh), or null
  };
  // Returns the handle given to the user.
  void* add(const void* buff, size_t size, void* transportHandle);
  // Removes handle; false when handle is not one of this table's.
  bool remove(void* handle, Entry* removed);
  // The registration covering [p, p+bytes), if any.
  bool find(const void* p, size_t bytes, Entry* out) const;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<uintptr_t, Entry> byHandle_;
  uintptr_t next_ = 1;
};

// NCCL_CHECK_POINTERS: the buffer must be usable by comm (device memory of comm's GPU,
// managed or mapped host memory; any memory for a host communicator).
ncclResult_t checkBufferUsable(ncclComm* comm, const void* p, size_t bytes, const char* arg,
                               const char* call);

}  // namespace mccl
