// The data path of host communicators (placeholder until the host engine lands).
#pragma once

#include "core/datapath.h"

namespace mccl {

class HostDataPath : public DataPath {
 public:
  explicit HostDataPath(ncclComm* comm) : DataPath(comm) {}
  ncclResult_t submit(std::vector<OpDesc>& ops, std::unique_ptr<Work>* work) override;
};

}  // namespace mccl
