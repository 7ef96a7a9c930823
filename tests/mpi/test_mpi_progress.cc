// Waiting in mccl never deadlocks against MPI (guide section "MPI Progress"): a rank
// inside a host collective keeps MPI progressing, so a peer blocked in MPI on this rank's
// pending send can reach the collective.
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "mccl_mpi.h"
#include "test_util.h"

namespace {
// Large enough for the rendezvous protocol: the receiver cannot finish without the
// sender's MPI progress (the tests run with the single-copy mechanism off).
constexpr int kBig = 32 << 20;
}  // namespace

TEST(MpiProgress, IsendThenAllReduceAgainstRecvFirst) {
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) GTEST_SKIP() << "needs two ranks";
  ncclComm_t comm;
  NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr));
  std::vector<char> big(kBig, static_cast<char>(r + 1));
  std::vector<float> in(1000, 1.0f), out(1000, 0.0f);
  // Connections are made first, so the collective below has no bootstrap traffic that
  // would call MPI anyway.
  NCCL_OK(ncclAllReduce(in.data(), out.data(), in.size(), ncclFloat, ncclSum, comm, nullptr));
  if (r == 0) {
    MPI_Request req;
    MPI_Isend(big.data(), kBig, MPI_CHAR, 1, 7, MPI_COMM_WORLD, &req);
    NCCL_OK(ncclAllReduce(in.data(), out.data(), in.size(), ncclFloat, ncclSum, comm, nullptr));
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else if (r == 1) {
    MPI_Recv(big.data(), kBig, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_EQ(big[kBig - 1], 1);
    NCCL_OK(ncclAllReduce(in.data(), out.data(), in.size(), ncclFloat, ncclSum, comm, nullptr));
  } else {
    NCCL_OK(ncclAllReduce(in.data(), out.data(), in.size(), ncclFloat, ncclSum, comm, nullptr));
  }
  for (float v : out) ASSERT_EQ(v, static_cast<float>(n));
  NCCL_OK(ncclCommDestroy(comm));
}

TEST(MpiProgress, GuidePollingPatternOnTheOtherSide) {
  // Rank 1 waits for its receive with the guide's loop (test + MPI_Iprobe) before the
  // collective; rank 0 is inside a grouped collective, which must keep MPI moving.
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) GTEST_SKIP() << "needs two ranks";
  ncclComm_t comm;
  NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr));
  std::vector<char> big(kBig, static_cast<char>(r + 1));
  std::vector<double> in(5000, r), out(5000, -1);
  auto collective = [&] {
    NCCL_OK(ncclGroupStart());
    NCCL_OK(ncclAllReduce(in.data(), out.data(), in.size(), ncclDouble, ncclMax, comm, nullptr));
    NCCL_OK(ncclGroupEnd());
  };
  collective();  // connect first
  if (r == 0) {
    MPI_Request req;
    MPI_Isend(big.data(), kBig, MPI_CHAR, 1, 9, MPI_COMM_WORLD, &req);
    collective();
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else if (r == 1) {
    MPI_Request req;
    MPI_Irecv(big.data(), kBig, MPI_CHAR, 0, 9, MPI_COMM_WORLD, &req);
    int done = 0, flag;
    while (!done) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    collective();
  } else {
    collective();
  }
  for (double v : out) ASSERT_EQ(v, n - 1.0);
  NCCL_OK(ncclCommDestroy(comm));
}
