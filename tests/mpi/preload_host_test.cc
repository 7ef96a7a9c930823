// libmccl_mpi linked before libmpi (as with LD_PRELOAD): MPI collectives on host buffers
// are forwarded to PMPI unchanged, give MPI's results, and the counters say so.
#include <gtest/gtest.h>
#include <mpi.h>

#include <numeric>
#include <vector>

#include "mccl_mpi.h"

TEST(PreloadHost, HostBuffersGoToMpiUnchanged) {
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  uint64_t mcclBefore, mpiBefore;
  mcclMpiPathCounters(&mcclBefore, &mpiBefore);
  const int count = 1 << 20;  // above the threshold: still host memory, so MPI
  std::vector<double> in(count), out(count, -1);
  for (int i = 0; i < count; ++i) in[i] = r + i % 17;
  MPI_Allreduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < count; i += 997) ASSERT_EQ(out[i], n * (n - 1) / 2.0 + n * (i % 17));
  MPI_Reduce(in.data(), out.data(), count, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (r == 0)
    for (int i = 0; i < count; i += 997) ASSERT_EQ(out[i], n - 1 + i % 17);
  std::vector<int> b(1000, r);
  MPI_Bcast(b.data(), 1000, MPI_INT, n - 1, MPI_COMM_WORLD);
  EXPECT_EQ(b[999], n - 1);
  std::vector<int> g(1000 * n, -1);
  MPI_Allgather(b.data(), 1000, MPI_INT, g.data(), 1000, MPI_INT, MPI_COMM_WORLD);
  EXPECT_EQ(g[1000 * n - 1], n - 1);
  std::vector<int> rs(1000, 0), a2a(1000 * n, 0);
  MPI_Reduce_scatter_block(g.data(), rs.data(), 1000, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(rs[0], n * (n - 1));
  MPI_Alltoall(g.data(), 1000, MPI_INT, a2a.data(), 1000, MPI_INT, MPI_COMM_WORLD);
  EXPECT_EQ(a2a[0], n - 1);
  // The v-forms, Gather, Scatter and Reduce_scatter (1000 ints a rank).
  std::vector<int> counts(n, 1000), displs(n);
  for (int q = 0; q < n; ++q) displs[q] = 1000 * q;
  std::vector<int> gv(1000 * n, -1);
  MPI_Allgatherv(b.data(), 1000, MPI_INT, gv.data(), counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD);
  EXPECT_EQ(gv, g);
  std::vector<int> a2av(1000 * n, -1);
  MPI_Alltoallv(g.data(), counts.data(), displs.data(), MPI_INT, a2av.data(), counts.data(), displs.data(), MPI_INT,
                MPI_COMM_WORLD);
  EXPECT_EQ(a2av, a2a);
  std::vector<int> a2avInPlace = g;  // in place: sendcounts and sdispls ignored (NULL)
  MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_INT, a2avInPlace.data(), counts.data(), displs.data(), MPI_INT,
                MPI_COMM_WORLD);
  EXPECT_EQ(a2avInPlace, a2a);
  std::vector<int> gathered(1000 * n, -1), scattered(1000, -1), rsv(1000, 0);
  MPI_Gather(b.data(), 1000, MPI_INT, gathered.data(), 1000, MPI_INT, 0, MPI_COMM_WORLD);
  if (r == 0) EXPECT_EQ(gathered, g);
  MPI_Scatter(g.data(), 1000, MPI_INT, scattered.data(), 1000, MPI_INT, n - 1, MPI_COMM_WORLD);
  EXPECT_EQ(scattered[0], n - 1);
  MPI_Reduce_scatter(g.data(), rsv.data(), counts.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(rsv[0], n * (n - 1));
  uint64_t mcclAfter, mpiAfter;
  mcclMpiPathCounters(&mcclAfter, &mpiAfter);
  EXPECT_EQ(mcclAfter, mcclBefore);      // nothing went to mccl
  EXPECT_GE(mpiAfter - mpiBefore, 12u);  // every call above was seen and forwarded
}
