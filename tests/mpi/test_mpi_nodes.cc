// Several nodes as mccl sees them (run under tests/mpi/fake_nodes.sh, which gives every
// MCCL_RANKS_PER_NODE ranks their own MCCL_HOST_ID): the topology groups ranks by host,
// the ring crosses between nodes once per node, and no connection to another "node" is
// mapped directly. The collectives of the other MPI test files run under the same split.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <set>

#include "core/comm.h"
#include "mccl_mpi.h"
#include "test_util.h"

TEST(FakeNodes, TopologyGroupsRanksByHostAndTheRingCrossesOncePerNode) {
  if (!std::getenv("MCCL_HOST_ID")) GTEST_SKIP() << "run under tests/mpi/fake_nodes.sh";
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* perEnv = std::getenv("MCCL_RANKS_PER_NODE");
  const int per = perEnv ? std::atoi(perEnv) : 2;
  ncclComm_t comm;
  NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr));
  const mccl::Topology& t = comm->topo;
  EXPECT_EQ(t.nNodes, (size + per - 1) / per);
  EXPECT_EQ(t.node, rank / per);
  EXPECT_EQ(t.localRank, rank % per);
  // Consecutive ring positions change node exactly nNodes times around the ring.
  int crossings = 0;
  for (int p = 0; p < size; ++p) {
    int a = t.ring[p], b = t.ring[(p + 1) % size];
    crossings += t.nodeOf[a] != t.nodeOf[b];
  }
  EXPECT_EQ(crossings, t.nNodes > 1 ? t.nNodes : 0);
  // A checked allreduce across the nodes.
  std::vector<double> buf(1 << 16, rank + 1.0);
  NCCL_OK(ncclAllReduce(buf.data(), buf.data(), buf.size(), ncclFloat64, ncclSum, comm, nullptr));
  for (double v : buf) ASSERT_EQ(v, size * (size + 1) / 2.0);
  NCCL_OK(ncclCommDestroy(comm));
}
