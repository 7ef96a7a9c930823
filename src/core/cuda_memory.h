// Device memory services of ncclMemAlloc and NCCL_CHECK_POINTERS (CUDA builds only).
#pragma once

#include <cstddef>

#include "nccl.h"

struct ncclComm;

namespace mccl {

ncclResult_t deviceMemAlloc(void** ptr, size_t size);
ncclResult_t deviceMemFree(void* ptr);
ncclResult_t checkDeviceBuffer(ncclComm* comm, const void* p, size_t bytes, const char* arg,
                               const char* call);

}  // namespace mccl
