#include "host_engine/host_datapath.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <random>

#include "bootstrap_mpi/bootstrap_mpi.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/idle.h"
#include "core/knobs.h"
#include "host_engine/host_work.h"

namespace mccl {
namespace {
std::atomic<uint64_t> gSelfCopies{0};
}  // namespace

uint64_t hostSelfCopyCount() { return gSelfCopies.load(std::memory_order_relaxed); }

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

HostDataPath::SelfPairs HostDataPath::selfPairsOf(const std::vector<OpDesc>& ops) const {
  SelfPairs p;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpDesc& op = ops[i];
    if (!op.isP2p() || op.root != comm_->rank) continue;
    (op.kind == OpKind::Send ? p.sends : p.recvs).push_back(i);
  }
  if (selfSent_ == selfReceived_) p.pairs = std::min(p.sends.size(), p.recvs.size());
  return p;
}

ncclResult_t HostDataPath::copySelfPairs(const std::vector<OpDesc>& ops, const SelfPairs& p) {
  for (size_t k = 0; k < p.pairs; ++k) {
    const OpDesc &s = ops[p.sends[k]], &r = ops[p.recvs[k]];
    if (s.bytes() != r.bytes())
      return MCCL_ERR(ncclInvalidUsage, comm_,
                      "Recv from rank %d (itself): its Send has %zu bytes where the Recv expects %zu (a rank's "
                      "Sends to itself and Recvs from itself pair in call order; do they pass the same count and "
                      "datatype?)",
                      comm_->rank, s.bytes(), r.bytes());
  }
  for (size_t k = 0; k < p.pairs; ++k) {
    const OpDesc &s = ops[p.sends[k]], &r = ops[p.recvs[k]];
    if (r.count > 0 && r.recvbuff != s.sendbuff) std::memmove(r.recvbuff, s.sendbuff, r.bytes());
  }
  if (p.pairs > 0) gSelfCopies.fetch_add(p.pairs, std::memory_order_relaxed);
  selfSent_ += p.sends.size() - p.pairs;
  selfReceived_ += p.recvs.size() - p.pairs;
  return ncclSuccess;
}

std::vector<OpDesc> HostDataPath::withoutPairs(const std::vector<OpDesc>& ops, const SelfPairs& p) {
  std::vector<bool> paired(ops.size(), false);
  for (size_t k = 0; k < p.pairs; ++k) paired[p.sends[k]] = paired[p.recvs[k]] = true;
  std::vector<OpDesc> rest;
  rest.reserve(ops.size() - 2 * p.pairs);
  for (size_t i = 0; i < ops.size(); ++i)
    if (!paired[i]) rest.push_back(ops[i]);
  return rest;
}

bool HostDataPath::runAlone(const OpDesc& op, ncclResult_t* result) {
  const bool onShm = shm_.use(op);
  if (!onShm && !route_.takes(comm_, op)) return false;
  if (aborted_.load()) {
    *result = MCCL_ERR(ncclInvalidUsage, comm_, "the communicator was aborted");
  } else if (onShm) {
    if (op.isP2p() && op.root == comm_->rank) ++(op.kind == OpKind::Send ? selfSent_ : selfReceived_);
    *result = shm_.runAlone(op, aborted_);
  } else {
    *result = runMpiCollAlone(comm_, route_.mpiComm, op, aborted_);
  }
  return true;
}

bool HostDataPath::runGroupAlone(const std::vector<OpDesc>& ops, ncclResult_t* result) {
  // A group whose every operation goes to shared memory (a halo exchange of small
  // messages, a few small collectives) runs on the caller's thread without a Work; a
  // rank's Sends to itself paired with its Recvs are copies first. Nothing is copied or
  // counted unless the rest all goes to shared memory (else the engine's way does it).
  bool toSelf = false;
  for (const OpDesc& op : ops) toSelf = toSelf || (op.isP2p() && op.root == comm_->rank);
  if (!toSelf) {
    // The usual group (a halo exchange, a ring shift): no pairs to look for.
    for (const OpDesc& op : ops)
      if (!shm_.use(op)) return false;
    *result = aborted_.load() ? MCCL_ERR(ncclInvalidUsage, comm_, "the communicator was aborted")
                              : shm_.runGroup(ops, aborted_);
    return true;
  }
  const SelfPairs p = selfPairsOf(ops);
  std::vector<OpDesc> rest;
  if (p.pairs > 0) rest = withoutPairs(ops, p);
  const std::vector<OpDesc>& onShm = p.pairs > 0 ? rest : ops;
  for (const OpDesc& op : onShm)
    if (!shm_.use(op)) return false;
  if (aborted_.load()) {
    *result = MCCL_ERR(ncclInvalidUsage, comm_, "the communicator was aborted");
    return true;
  }
  // A pair whose sizes differ goes the engine's way, which refuses the group unrun.
  for (size_t k = 0; k < p.pairs; ++k)
    if (ops[p.sends[k]].bytes() != ops[p.recvs[k]].bytes()) return false;
  *result = copySelfPairs(ops, p);
  if (*result == ncclSuccess && !onShm.empty()) *result = shm_.runGroup(onShm, aborted_);
  return true;
}

ncclResult_t HostDataPath::submit(std::vector<OpDesc>& ops, std::unique_ptr<Work>* work) {
  if (aborted_.load()) return MCCL_ERR(ncclInvalidUsage, comm_, "the communicator was aborted");
  const SelfPairs p = selfPairsOf(ops);
  MCCL_CHECK(copySelfPairs(ops, p));
  if (p.pairs > 0) ops = withoutPairs(ops, p);
  std::unique_ptr<HostWork> w(new HostWork(comm_, transport_.get(), &aborted_, &shm_, route_));
  MCCL_CHECK(w->init(ops));
  *work = std::move(w);
  return ncclSuccess;
}

}  // namespace mccl
