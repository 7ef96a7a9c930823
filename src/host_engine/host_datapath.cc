#include "host_engine/host_datapath.h"

#include <climits>
#include <random>

#include "bootstrap_mpi/bootstrap_mpi.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/idle.h"
#include "core/knobs.h"
#include "host_engine/host_work.h"

namespace mccl {

HostDataPath::HostDataPath(ncclComm* comm) : DataPath(comm), transport_(new HostTransport(comm)), shm_(comm) {}

HostDataPath::~HostDataPath() = default;

ncclResult_t HostDataPath::prepare(PeerInfo* mine) {
  // Rank 0's token names the shared segment of small collectives: random per communicator.
  std::random_device rd;
  mine->shmToken = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ mine->processHash;
  return transport_->prepare(mine, !comm_->bootstrap->allRanksInProcess());
}

ncclResult_t HostDataPath::setup() {
  comm_->idleYieldSoon = idleYieldsSoon(comm_->topo.localRanks());
  shm_.setup();
  // MCCL_HOST_MPI_MAX_BYTES is read when the communicator is made (equal on every rank).
  auto* mb = dynamic_cast<MpiBootstrap*>(comm_->bootstrap.get());
  int64_t maxBytes = knobInt(Knob::HostMpiMaxBytes);
  if (mb && maxBytes > 0) {
    route_.mpiComm = mb->comm();
    route_.maxBytes = static_cast<size_t>(maxBytes < INT_MAX ? maxBytes : INT_MAX);
    route_.threadMultiple = MpiBootstrap::threadMultiple();
  }
  return ncclSuccess;
}

bool HostDataPath::runAlone(const OpDesc& op, ncclResult_t* result) {
  const bool onShm = shm_.use(op);
  if (!onShm && !route_.takes(comm_, op)) return false;
  if (aborted_.load())
    *result = MCCL_ERR(ncclInvalidUsage, comm_, "the communicator was aborted");
  else if (onShm)
    *result = shm_.runAlone(op, aborted_);
  else
    *result = runMpiCollAlone(comm_, route_.mpiComm, op, aborted_);
  return true;
}

bool HostDataPath::runGroupAlone(const std::vector<OpDesc>& ops, ncclResult_t* result) {
  // A group whose every operation goes to shared memory (a halo exchange of small
  // messages, a few small collectives) runs on the caller's thread without a Work.
  for (const OpDesc& op : ops)
    if (!shm_.use(op)) return false;
  *result = aborted_.load() ? MCCL_ERR(ncclInvalidUsage, comm_, "the communicator was aborted")
                            : shm_.runGroup(ops, aborted_);
  return true;
}

ncclResult_t HostDataPath::submit(std::vector<OpDesc>& ops, std::unique_ptr<Work>* work) {
  if (aborted_.load()) return MCCL_ERR(ncclInvalidUsage, comm_, "the communicator was aborted");
  std::unique_ptr<HostWork> w(new HostWork(comm_, transport_.get(), &aborted_, &shm_, route_));
  MCCL_CHECK(w->init(ops));
  *work = std::move(w);
  return ncclSuccess;
}

}  // namespace mccl
