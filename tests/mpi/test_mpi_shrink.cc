// ncclCommShrink under mpirun (np 1..5): MPI-backed parents (MPI_Comm_create_group over the
// survivors) and unique-id parents (TCP among the survivors). Survivors check their new
// communicator with a checked AllReduce and a split; excluded ranks do not call shrink.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "coll_check.h"
#include "mccl_mpi.h"
#include "mpi_util.h"
#include "test_util.h"

using namespace mccl_test;

namespace {

ncclComm_t makeParent(bool fromMpi, MPI_Comm mpiComm) {
  ncclComm_t comm = nullptr;
  if (fromMpi) {
    EXPECT_EQ(mcclCommInitFromMpi(&comm, mpiComm, MCCL_DEVICE_HOST, nullptr), ncclSuccess);
    return comm;
  }
  int r, n;
  MPI_Comm_rank(mpiComm, &r);
  MPI_Comm_size(mpiComm, &n);
  ncclUniqueId id;
  if (r == 0) EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpiComm);
  EXPECT_EQ(ncclCommInitRank(&comm, n, id, r), ncclSuccess);
  return comm;
}

// This rank's part of shrinking parent (rank r of n) without excluded.
void shrinkAndCheck(ncclComm_t parent, int r, int n, std::vector<int> excluded, int flags) {
  auto isOut = [&](int q) { return std::find(excluded.begin(), excluded.end(), q) != excluded.end(); };
  if (isOut(r)) return;
  int expectRank = 0;
  for (int q = 0; q < r; ++q) expectRank += isOut(q) ? 0 : 1;
  const int m = n - static_cast<int>(excluded.size());
  ncclComm_t kid = nullptr;
  NCCL_OK(ncclCommShrink(parent, excluded.empty() ? nullptr : excluded.data(), static_cast<int>(excluded.size()),
                         &kid, nullptr, flags));
  ASSERT_NE(kid, nullptr);
  int count, rank;
  NCCL_OK(ncclCommCount(kid, &count));
  NCCL_OK(ncclCommUserRank(kid, &rank));
  EXPECT_EQ(count, m);
  EXPECT_EQ(rank, expectRank);
  CollCase c{CollKind::AllReduce, ncclFloat32, ncclSum, false, false, 777, 0, false, 11};
  EXPECT_EQ(runCollCase(kid, rank, m, c), "");
  ncclComm_t half = nullptr;
  NCCL_OK(ncclCommSplit(kid, rank % 2, rank, &half, nullptr));
  ASSERT_NE(half, nullptr);
  int hc;
  NCCL_OK(ncclCommCount(half, &hc));
  EXPECT_EQ(hc, rank % 2 == 0 ? (m + 1) / 2 : m / 2);
  CollCase d{CollKind::AllReduce, ncclInt64, ncclMin, false, false, 5, 0, true, 12};
  EXPECT_EQ(runCollCase(half, rank / 2, hc, d), "");
  NCCL_OK(ncclCommDestroy(half));
  NCCL_OK(ncclCommDestroy(kid));
}

}  // namespace

// Lean for CI: the MPI-backed parent here, the unique-id parent (TCP among the survivors)
// in the split case below; both kinds run in tests/threads too.
TEST(MpiShrink, ExcludeOneSeveralAndNoneFromMpi) {
  int r = worldRank(), n = worldSize();
  ncclComm_t parent = makeParent(/*fromMpi=*/true, MPI_COMM_WORLD);
  ASSERT_NE(parent, nullptr);
  if (n > 1) shrinkAndCheck(parent, r, n, {n - 1}, NCCL_SHRINK_DEFAULT);
  MPI_Barrier(MPI_COMM_WORLD);
  if (n > 2) shrinkAndCheck(parent, r, n, {n - 1, 0}, NCCL_SHRINK_DEFAULT);
  MPI_Barrier(MPI_COMM_WORLD);
  shrinkAndCheck(parent, r, n, {}, NCCL_SHRINK_DEFAULT);
  // The parent still works, then NCCL_SHRINK_ABORT on it (healthy) revokes it.
  EXPECT_EQ(runCollCase(parent, r, n, CollCase{CollKind::AllReduce, ncclInt32, ncclSum, false, false, 9, 0, false, 13}), "");
  if (n > 1) {
    shrinkAndCheck(parent, r, n, {0}, NCCL_SHRINK_ABORT);
    float x = 1, y = 0;
    if (r != 0) EXPECT_EQ(ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, parent, nullptr), ncclInvalidUsage);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  NCCL_OK(ncclCommDestroy(parent));
}

TEST(MpiShrink, ShrinkOfASplitCommunicatorFromUniqueId) {
  int r = worldRank();
  ncclComm_t parent = makeParent(/*fromMpi=*/false, MPI_COMM_WORLD);
  ASSERT_NE(parent, nullptr);
  ncclComm_t child = nullptr;
  NCCL_OK(ncclCommSplit(parent, r % 2, r, &child, nullptr));
  int cn, cr;
  NCCL_OK(ncclCommCount(child, &cn));
  NCCL_OK(ncclCommUserRank(child, &cr));
  // Drop the child's first rank when something is left.
  shrinkAndCheck(child, cr, cn, cn > 1 ? std::vector<int>{0} : std::vector<int>{}, NCCL_SHRINK_DEFAULT);
  MPI_Barrier(MPI_COMM_WORLD);
  NCCL_OK(ncclCommDestroy(child));
  NCCL_OK(ncclCommDestroy(parent));
}
