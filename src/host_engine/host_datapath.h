// The data path of host communicators: the host engine over the host transport.
#pragma once

#include <atomic>
#include <memory>

#include "core/datapath.h"
#include "host_engine/transport.h"

namespace mccl {

class HostDataPath : public DataPath {
 public:
  explicit HostDataPath(ncclComm* comm);
  ~HostDataPath() override;
  ncclResult_t prepare(PeerInfo* mine) override;
  ncclResult_t submit(std::vector<OpDesc>& ops, std::unique_ptr<Work>* work) override;
  void abort() override { aborted_.store(true); }

 private:
  std::unique_ptr<HostTransport> transport_;
  std::atomic<bool> aborted_{false};
};

}  // namespace mccl
