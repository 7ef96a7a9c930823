#include "core/node_exchange.h"

#include <climits>
#include <cstdint>
#include <vector>

#include "bootstrap_mpi/bootstrap_mpi.h"
#include "core/error.h"

namespace mccl {

NodeExchange::NodeExchange(MpiBootstrap* b) : b_(b), buf_(new int[2]()) {}

NodeExchange::~NodeExchange() {
  // An agreement still pending (an aborted init) may complete later: its buffer stays.
  if (req_ == MPI_REQUEST_NULL) delete[] buf_;
}

ncclResult_t NodeExchange::start(bool mayBlock) {
  MCCL_CHECK(b_->waitReady());
  buf_[0] = mayBlock ? 1 : 0;
  int rc = MPI_Iallreduce(&buf_[0], &buf_[1], 1, MPI_INT, MPI_MIN, b_->comm(), &req_);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, b_->owner(), "MPI_Iallreduce failed: %s", mpiErrorString(rc).c_str());
  return ncclSuccess;
}

ncclResult_t NodeExchange::test(bool* done, bool* byNode) {
  int flag = 0;
  int rc = MPI_Test(&req_, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, b_->owner(), "MPI_Iallreduce failed: %s", mpiErrorString(rc).c_str());
  *done = flag != 0;
  *byNode = flag != 0 && buf_[1] == 1;
  return ncclSuccess;
}

ncclResult_t NodeExchange::run(const PeerInfo& me, Topology* out) {
  MPI_Comm comm = b_->comm();
  const int n = b_->size(), rank = b_->rank();
  // 2. The node: ranks whose host hash has this colour, then exactly this hash.
  MPI_Comm group = MPI_COMM_NULL;
  int rc = MPI_Comm_split(comm, static_cast<int>(me.hostHash & 0x7fffffff), rank, &group);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, b_->owner(), "MPI_Comm_split (node) failed: %s", mpiErrorString(rc).c_str());
  MPI_Comm_set_errhandler(group, MPI_ERRORS_RETURN);
  int g = 0;
  MPI_Comm_size(group, &g);
  std::vector<PeerInfo> recs(static_cast<size_t>(g));
  MPI_Request req = MPI_REQUEST_NULL;
  rc = MPI_Iallgather(&me, sizeof me, MPI_BYTE, recs.data(), sizeof me, MPI_BYTE, group, &req);
  ncclResult_t res = rc == MPI_SUCCESS
                         ? b_->waitRequest(&req, "node allgather")
                         : MCCL_ERR(ncclSystemError, b_->owner(), "MPI_Iallgather failed: %s", mpiErrorString(rc).c_str());
  MPI_Comm_free(&group);
  MCCL_CHECK(res);
  std::vector<PeerInfo> local;
  for (const PeerInfo& p : recs) {
    if (p.magic != PeerInfo::kMagic || p.rank < 0 || p.rank >= n)
      return MCCL_ERR(ncclInternalError, b_->owner(), "init: a rank of this node sent a malformed peer record");
    if (p.hostHash == me.hostHash) local.push_back(p);  // the colour's group is in rank order
  }
  const int l = static_cast<int>(local.size());
  bool shares = false;
  for (int a = 0; a < l; ++a)
    for (int b = a + 1; b < l; ++b)
      shares |= local[a].processHash == local[b].processHash && local[a].devHash == local[b].devHash;
  // 3. The facts, one MPI_Allreduce(MAX).
  const bool contiguous = local.back().rank - local.front().rank + 1 == l;
  const bool last = local.back().rank == n - 1;
  int64_t v[5] = {contiguous ? 0 : 1, l, last ? INT64_MIN : -static_cast<int64_t>(l),
                  rank == 0 ? static_cast<int64_t>(me.liveSecret) : INT64_MIN, shares ? 1 : 0};
  int64_t all[5];
  rc = MPI_Iallreduce(v, all, 5, MPI_INT64_T, MPI_MAX, comm, &req);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, b_->owner(), "MPI_Iallreduce failed: %s", mpiErrorString(rc).c_str());
  MCCL_CHECK(b_->waitRequest(&req, "node facts"));
  Topology::Facts f;
  f.nodeSize = static_cast<int>(all[1]);
  f.arithmetic = all[0] == 0 && (all[2] == INT64_MIN || -all[2] == all[1]);
  f.nNodes = (n + f.nodeSize - 1) / f.nodeSize;
  f.liveSecret = static_cast<uint64_t>(all[3]);
  f.processSharesDevice = all[4] != 0;
  size_t received = kAgreeBytes + sizeof(PeerInfo) * static_cast<size_t>(g - 1) + sizeof all;
  // 4. Scattered: every rank's node, as its leader's rank.
  std::vector<int32_t> leaderOf;
  if (!f.arithmetic) {
    leaderOf.assign(static_cast<size_t>(n), 0);
    leaderOf[static_cast<size_t>(rank)] = local.front().rank;
    rc = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, leaderOf.data(), 1, MPI_INT32_T, comm, &req);
    if (rc != MPI_SUCCESS)
      return MCCL_ERR(ncclSystemError, b_->owner(), "MPI_Iallgather failed: %s", mpiErrorString(rc).c_str());
    MCCL_CHECK(b_->waitRequest(&req, "node leaders"));
    received += sizeof(int32_t) * static_cast<size_t>(n - 1);
  }
  *out = Topology::fromNode(std::move(local), n, rank, f, leaderOf);
  out->setExchangeBytes(received);
  return ncclSuccess;
}

}  // namespace mccl
