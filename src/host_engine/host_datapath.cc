#include "host_engine/host_datapath.h"

#include "core/comm.h"
#include "core/error.h"
#include "host_engine/host_work.h"

namespace mccl {

HostDataPath::HostDataPath(ncclComm* comm) : DataPath(comm), transport_(new HostTransport(comm)) {}

HostDataPath::~HostDataPath() = default;

ncclResult_t HostDataPath::prepare(PeerInfo* mine) {
  return transport_->prepare(mine, !comm_->bootstrap->allRanksInProcess());
}

ncclResult_t HostDataPath::submit(std::vector<OpDesc>& ops, std::unique_ptr<Work>* work) {
  if (aborted_.load()) return MCCL_ERR(ncclInvalidUsage, comm_, "the communicator was aborted");
  std::unique_ptr<HostWork> w(new HostWork(comm_, transport_.get(), &aborted_));
  MCCL_CHECK(w->init(ops));
  *work = std::move(w);
  return ncclSuccess;
}

}  // namespace mccl
