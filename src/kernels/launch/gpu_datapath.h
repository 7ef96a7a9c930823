// The data path of GPU communicators.
#pragma once

#include <memory>

#include "core/datapath.h"

namespace mccl {

ncclResult_t createGpuDataPath(ncclComm* comm, std::unique_ptr<DataPath>* out);

}  // namespace mccl
