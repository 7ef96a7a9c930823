// libmccl_mpi linked before libmpi (as with LD_PRELOAD): MPI collectives on host buffers
// are forwarded to PMPI unchanged, give MPI's results, and the counters say so.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
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

// Open MPI's Fortran bindings call PMPI_* directly, so libmccl_mpi defines the Fortran
// entry points too. Called here as a Fortran program would (Fortran handles, Fortran's
// MPI_IN_PLACE, counts by reference) under each of the names a compiler links to: the calls
// are seen (the counters) and give MPI's results.
extern "C" {
extern int mpi_fortran_in_place_;  // Open MPI's Fortran MPI_IN_PLACE (libmpi)
void mpi_allreduce_(void*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void MPI_ALLREDUCE(void*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void ompi_allreduce_f(void*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_bcast__(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_allgatherv(void*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_alltoallv_(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
                    MPI_Fint*);
void mpi_reduce_scatter_(void*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_gather_(void*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
}

TEST(PreloadHost, FortranNamesAreSeenAndForwarded) {
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  uint64_t mccl0, mpi0;
  mcclMpiPathCounters(&mccl0, &mpi0);
  MPI_Fint comm = MPI_Comm_c2f(MPI_COMM_WORLD), dbl = MPI_Type_c2f(MPI_DOUBLE_PRECISION),
           integer = MPI_Type_c2f(MPI_INTEGER), sum = MPI_Op_c2f(MPI_SUM), ierr = -1;
  MPI_Fint count = 1000, root = n - 1;
  std::vector<double> a(1000), b(1000, -1);
  for (int i = 0; i < 1000; ++i) a[i] = r + i % 7;
  mpi_allreduce_(a.data(), b.data(), &count, &dbl, &sum, &comm, &ierr);
  EXPECT_EQ(ierr, MPI_SUCCESS);
  for (int i = 0; i < 1000; i += 111) ASSERT_EQ(b[i], n * (n - 1) / 2.0 + n * (i % 7));
  std::vector<double> c = a;
  MPI_ALLREDUCE(&mpi_fortran_in_place_, c.data(), &count, &dbl, &sum, &comm, &ierr);  // in place
  EXPECT_EQ(c, b);
  c = a;
  ompi_allreduce_f(&mpi_fortran_in_place_, c.data(), &count, &dbl, &sum, &comm, &ierr);  // what `use mpi_f08` calls
  EXPECT_EQ(c, b);
  std::vector<MPI_Fint> v(1000, r);
  mpi_bcast__(v.data(), &count, &integer, &root, &comm, &ierr);
  EXPECT_EQ(v[999], n - 1);
  // Allgatherv in place of rank q's q + 1 integers; Alltoallv of 2 to each; Reduce_scatter
  // of 3 each; Gather of 5 each to the last rank.
  std::vector<MPI_Fint> counts(n), displs(n), two(n, 2), twoDispls(n), three(n, 3);
  int extent = 0;
  for (int q = 0; q < n; ++q) {
    counts[q] = q + 1;
    displs[q] = extent;
    extent += q + 1;
    twoDispls[q] = 2 * q;
  }
  std::vector<MPI_Fint> g(extent, -1);
  for (int i = 0; i <= r; ++i) g[displs[r] + i] = 100 * r + i;
  MPI_Fint zero = 0;
  mpi_allgatherv(&mpi_fortran_in_place_, &zero, &integer, g.data(), counts.data(), displs.data(), &integer, &comm, &ierr);
  for (int q = 0; q < n; ++q)
    for (int i = 0; i <= q; ++i) ASSERT_EQ(g[displs[q] + i], 100 * q + i);
  std::vector<MPI_Fint> s(2 * n), t(2 * n, -1);
  for (int j = 0; j < 2 * n; ++j) s[j] = 1000 * r + j;
  mpi_alltoallv_(s.data(), two.data(), twoDispls.data(), &integer, t.data(), two.data(), twoDispls.data(), &integer,
                 &comm, &ierr);
  for (int q = 0; q < n; ++q) ASSERT_EQ(t[2 * q + 1], 1000 * q + 2 * r + 1);
  std::vector<MPI_Fint> x(3 * n, 1), y(3, 0);
  mpi_reduce_scatter_(x.data(), y.data(), three.data(), &integer, &sum, &comm, &ierr);
  EXPECT_EQ(y[2], n);
  MPI_Fint five = 5;
  std::vector<MPI_Fint> mine(5, r), all(5 * n, -1);
  mpi_gather_(mine.data(), &five, &integer, all.data(), &five, &integer, &root, &comm, &ierr);
  if (r == n - 1)
    for (int q = 0; q < n; ++q) ASSERT_EQ(all[5 * q + 4], q);
  EXPECT_EQ(ierr, MPI_SUCCESS);
  uint64_t mccl1, mpi1;
  mcclMpiPathCounters(&mccl1, &mpi1);
  EXPECT_EQ(mccl1, mccl0);       // host buffers: nothing went to mccl
  EXPECT_GE(mpi1 - mpi0, 8u);  // but every Fortran call was seen
}

// libmccl_mpi's host copies for point-to-point calls (an MPI that cannot take device
// buffers), proven on host buffers: the test has the preload stage those too. Every send
// and receive form and every call that completes requests, on a ring of any rank count.
#include "p2p_stage_check.h"

extern "C" void mcclMpiStageHostForTests(int on);

TEST(PreloadHost, PointToPointThroughHostCopies) {
  const p2pstage::Memory host{
      [](size_t bytes) { return std::malloc(bytes); }, [](void* p) { std::free(p); },
      [](void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); },
      [](void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }};
  struct StageHost {
    StageHost() { mcclMpiStageHostForTests(1); }
    ~StageHost() { mcclMpiStageHostForTests(0); }
  } on;
  p2pstage::checkPointToPoint(host);
  p2pstage::checkOtherCollectives(host);
  MPI_Barrier(MPI_COMM_WORLD);
}
