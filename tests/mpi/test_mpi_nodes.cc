// Several nodes as mccl sees them (run under tests/mpi/fake_nodes.sh, which gives every
// MCCL_RANKS_PER_NODE ranks their own MCCL_HOST_ID, or deals ranks round robin over
// MCCL_FAKE_NODES_ROUND_ROBIN nodes): the topology groups ranks by host, the ring crosses
// between nodes once per node, and no connection to another "node" is mapped directly.
// The collectives of the other MPI test files run under the same split.
//
// NodeExchange.*: the MPI init exchange by node (issue 17) builds from its node's records
// and O(1) collectives the same topology that every rank's record gives, on every rank,
// and receives only what the scale model says.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <string>

#include "core/comm.h"
#include "core/knobs.h"
#include "core/node_exchange.h"
#include "core/peer_info.h"
#include "mccl_mpi.h"
#include "test_util.h"

namespace {

// The reference: every rank's host hash over comm, the topology the full exchange builds.
mccl::Topology reference(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<uint64_t> hosts(static_cast<size_t>(size));
  uint64_t mine = mccl::localHostHash();
  MPI_Allgather(&mine, 1, MPI_UINT64_T, hosts.data(), 1, MPI_UINT64_T, comm);
  std::vector<mccl::PeerInfo> peers(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    peers[r].rank = r;
    peers[r].hostHash = hosts[r];
  }
  return mccl::Topology::fromAll(peers, rank);
}

// The same on every rank of comm: the ring and nodeFirst are compared with rank 0's.
void expectSameEverywhere(MPI_Comm comm, const mccl::Topology& t) {
  std::vector<int32_t> v = t.ringVector();
  v.insert(v.end(), t.nodeFirst().begin(), t.nodeFirst().end());
  std::vector<int32_t> root = v;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_INT32_T, 0, comm);
  EXPECT_EQ(v, root);
}

void expectMatchesReference(MPI_Comm comm, const mccl::Topology& t) {
  const mccl::Topology ref = reference(comm);
  EXPECT_EQ(t.nNodes(), ref.nNodes());
  EXPECT_EQ(t.node(), ref.node());
  EXPECT_EQ(t.localRank(), ref.localRank());
  EXPECT_EQ(t.localRanks(), ref.localRanks());
  EXPECT_EQ(t.maxLocalRanks(), ref.maxLocalRanks());
  EXPECT_EQ(t.arithmetic(), ref.arithmetic());
  EXPECT_EQ(t.ringVector(), ref.ringVector());
  EXPECT_EQ(t.ringPosVector(), ref.ringPosVector());
  EXPECT_EQ(t.nodeFirst(), ref.nodeFirst());
  for (int r = 0; r < ref.nranks(); ++r) {
    EXPECT_EQ(t.nodeOf(r), ref.nodeOf(r)) << "rank " << r;
    EXPECT_EQ(t.onMyNode(r), ref.onMyNode(r)) << "rank " << r;
  }
  expectSameEverywhere(comm, t);
}

// What the exchange by node receives (core/node_exchange.h): the agreement, the node's
// records, the facts, and 4 bytes per rank for scattered mappings only.
size_t byNodeBytes(const mccl::Topology& t) {
  const size_t n = static_cast<size_t>(t.nranks());
  return mccl::NodeExchange::kAgreeBytes + sizeof(mccl::PeerInfo) * static_cast<size_t>(t.localRanks() - 1) +
         5 * sizeof(int64_t) + (t.arithmetic() ? 0 : sizeof(int32_t) * (n - 1));
}

// Forces the exchange by node (MCCL_INIT_BY_NODE_MIN_RANKS=1) for one test, on every rank.
class ByNode {
 public:
  ByNode() {
    const char* v = std::getenv("MCCL_INIT_BY_NODE_MIN_RANKS");
    had_ = v != nullptr;
    if (had_) saved_ = v;
    setenv("MCCL_INIT_BY_NODE_MIN_RANKS", "1", 1);
    mccl::knobsReload();
  }
  ~ByNode() {
    if (had_) setenv("MCCL_INIT_BY_NODE_MIN_RANKS", saved_.c_str(), 1);
    else unsetenv("MCCL_INIT_BY_NODE_MIN_RANKS");
    mccl::knobsReload();
  }

 private:
  bool had_ = false;
  std::string saved_;
};

}  // namespace

TEST(FakeNodes, TopologyGroupsRanksByHostAndTheRingCrossesOncePerNode) {
  if (!std::getenv("MCCL_HOST_ID")) GTEST_SKIP() << "run under tests/mpi/fake_nodes.sh";
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* perEnv = std::getenv("MCCL_RANKS_PER_NODE");
  const char* rrEnv = std::getenv("MCCL_FAKE_NODES_ROUND_ROBIN");
  const int per = perEnv ? std::atoi(perEnv) : 2;
  ncclComm_t comm;
  NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr));
  const mccl::Topology& t = comm->topo;
  if (rrEnv) {
    const int k = std::atoi(rrEnv);
    EXPECT_EQ(t.nNodes(), std::min(k, size));
    EXPECT_EQ(t.node(), rank % k);
    EXPECT_EQ(t.localRank(), rank / k);
    EXPECT_EQ(t.arithmetic(), size <= k);
  } else {
    EXPECT_EQ(t.nNodes(), (size + per - 1) / per);
    EXPECT_EQ(t.node(), rank / per);
    EXPECT_EQ(t.localRank(), rank % per);
    EXPECT_TRUE(t.arithmetic());
  }
  // Consecutive ring positions change node exactly nNodes times around the ring.
  int crossings = 0;
  for (int p = 0; p < size; ++p) crossings += t.nodeOf(t.ringRank(p)) != t.nodeOf(t.ringRank(p + 1));
  EXPECT_EQ(crossings, t.nNodes() > 1 ? t.nNodes() : 0);
  // A checked allreduce across the nodes.
  std::vector<double> buf(1 << 16, rank + 1.0);
  NCCL_OK(ncclAllReduce(buf.data(), buf.data(), buf.size(), ncclFloat64, ncclSum, comm, nullptr));
  for (double v : buf) ASSERT_EQ(v, size * (size + 1) / 2.0);
  NCCL_OK(ncclCommDestroy(comm));
}

// Blocking init from MPI takes the exchange by node: the topology every rank's record
// would give, identical on every rank, this node's records only, and the bytes received
// are the model's (no longer 64 per rank).
TEST(NodeExchange, BlockingInitMatchesTheFullExchange) {
  ByNode byNode;
  ncclComm_t comm;
  NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr));
  const mccl::Topology& t = comm->topo;
  expectMatchesReference(MPI_COMM_WORLD, t);
  EXPECT_EQ(t.exchangeBytes(), byNodeBytes(t));
  const size_t tables = t.arithmetic() ? 0 : 3 * sizeof(int32_t) * static_cast<size_t>(comm->nranks);
  EXPECT_EQ(t.memoryBytes(), sizeof(mccl::PeerInfo) * static_cast<size_t>(t.localRanks()) +
                                 sizeof(int32_t) * static_cast<size_t>(t.nNodes() + 1) + tables);
  for (const mccl::PeerInfo& p : t.localPeers()) EXPECT_EQ(p.hostHash, mccl::localHostHash());
  NCCL_OK(ncclCommDestroy(comm));
}

// Nonblocking init polled from the user's thread never blocks in MPI: every rank takes the
// full exchange then, and gets the same topology.
TEST(NodeExchange, PolledInitTakesTheFullExchangeAndAgrees) {
  ByNode byNode;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t rc = mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_HOST, &cfg);
  ASSERT_TRUE(rc == ncclSuccess || rc == ncclInProgress) << ncclGetLastError(nullptr);
  ncclResult_t state = ncclInProgress;
  auto t0 = std::chrono::steady_clock::now();
  while (state == ncclInProgress && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
    NCCL_OK(ncclCommGetAsyncError(comm, &state));
  ASSERT_EQ(state, ncclSuccess) << ncclGetLastError(comm);
  expectMatchesReference(MPI_COMM_WORLD, comm->topo);
  EXPECT_EQ(comm->topo.exchangeBytes(),
            mccl::NodeExchange::kAgreeBytes + sizeof(mccl::PeerInfo) * static_cast<size_t>(comm->nranks - 1));
  NCCL_OK(ncclCommDestroy(comm));
}

// ncclCommSplit of an MPI-backed comm (MPI_Comm_split + init from it): the children's
// topology is the one their ranks' records give, whatever the mapping of the parent.
TEST(NodeExchange, SplitChildrenMatchTheFullExchange) {
  ByNode byNode;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ncclComm_t parent;
  NCCL_OK(mcclCommInitFromMpi(&parent, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr));
  for (int colors : {1, 2}) {
    const int color = rank % colors, key = size - rank;  // reversed ranks in the child
    ncclComm_t child;
    NCCL_OK(ncclCommSplit(parent, color, key, &child, nullptr));
    MPI_Comm mpiChild;
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &mpiChild);
    int crank, csize;
    MPI_Comm_rank(mpiChild, &crank);
    MPI_Comm_size(mpiChild, &csize);
    ASSERT_EQ(child->rank, crank);
    ASSERT_EQ(child->nranks, csize);
    expectMatchesReference(mpiChild, child->topo);
    EXPECT_EQ(child->topo.exchangeBytes(), byNodeBytes(child->topo));
    std::vector<float> buf(4096, 1.0f);
    NCCL_OK(ncclAllReduce(buf.data(), buf.data(), buf.size(), ncclFloat32, ncclSum, child, nullptr));
    int wrong = 0;
    for (float v : buf) wrong += v != static_cast<float>(csize);
    EXPECT_EQ(wrong, 0);
    // Nobody tears the child down while a peer may still be connecting to it (a peer
    // that finds the FIFO segment of a destroyed connection reports the rank as lost).
    MPI_Barrier(mpiChild);
    MPI_Comm_free(&mpiChild);
    NCCL_OK(ncclCommDestroy(child));
  }
  NCCL_OK(ncclCommDestroy(parent));
}

// Below MCCL_INIT_BY_NODE_MIN_RANKS (64 by default) every rank's record is exchanged, as
// before the exchange by node: 64 bytes per peer, no agreement.
TEST(NodeExchange, SmallCommsKeepTheFullExchange) {
  setenv("MCCL_INIT_BY_NODE_MIN_RANKS", "100000", 1);
  mccl::knobsReload();
  ncclComm_t comm;
  NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr));
  expectMatchesReference(MPI_COMM_WORLD, comm->topo);
  EXPECT_EQ(comm->topo.exchangeBytes(), sizeof(mccl::PeerInfo) * static_cast<size_t>(comm->nranks - 1));
  NCCL_OK(ncclCommDestroy(comm));
  unsetenv("MCCL_INIT_BY_NODE_MIN_RANKS");
  mccl::knobsReload();
}
