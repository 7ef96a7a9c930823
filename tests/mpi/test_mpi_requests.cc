// Requests for work mccl finishes on its own (bootstrap_mpi/mpi_requests.h), as libmccl_mpi's
// nonblocking collectives hand them out: generalized MPI requests that MPI's own progress
// completes, through every way a program waits (MPI_Wait, MPI_Test, MPI_Waitall with the
// program's own requests, MPI_Waitany, MPI_Testsome, MPI_Request_free before completion),
// each work polled until it is done and never after, destroyed once MPI frees its request,
// and its error reaching the waiter.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "bootstrap_mpi/mpi_requests.h"

namespace {

using mccl::MpiPendingWork;

// Done after `polls` polls (with `result`); counts its polls after that and its destruction.
class Countdown : public MpiPendingWork {
 public:
  Countdown(int polls, int result, std::atomic<int>* destroyed, std::atomic<int>* late)
      : left_(polls), result_(result), destroyed_(destroyed), late_(late) {}
  ~Countdown() override { destroyed_->fetch_add(1); }
  int poll() override {
    if (finished_) late_->fetch_add(1);
    if (--left_ > 0) return kNotYet;
    finished_ = true;
    return result_;
  }

 private:
  int left_;
  const int result_;
  bool finished_ = false;
  std::atomic<int>* destroyed_;
  std::atomic<int>* late_;
};

struct Counters {
  std::atomic<int> destroyed{0}, late{0};
  MPI_Request start(int polls, int result = MPI_SUCCESS) {
    MPI_Request r = MPI_REQUEST_NULL;
    EXPECT_EQ(mccl::startMpiRequest(std::make_unique<Countdown>(polls, result, &destroyed, &late), &r), MPI_SUCCESS);
    EXPECT_NE(r, MPI_REQUEST_NULL);
    return r;
  }
};

// Turns MPI's progress (a test of a request that never completes alone) until pred holds or
// ten seconds pass.
template <class Pred>
bool progressUntil(Pred pred) {
  MPI_Request idle;
  int flag = 0;
  MPI_Irecv(&flag, 1, MPI_INT, 0, 4242, MPI_COMM_SELF, &idle);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred() && std::chrono::steady_clock::now() < end) MPI_Test(&idle, &flag, MPI_STATUS_IGNORE);
  MPI_Cancel(&idle);
  MPI_Wait(&idle, MPI_STATUS_IGNORE);
  return pred();
}

}  // namespace

TEST(MpiRequests, EveryWayOfWaitingCompletesThem) {
  if (!mccl::mpiRequestsAvailable()) GTEST_SKIP() << "no Open MPI progress hook";
  const size_t live0 = mccl::liveMpiRequests();
  Counters c;

  // MPI_Wait: the status says a collective's (no source, tag or elements).
  MPI_Request r = c.start(50);
  MPI_Status st;
  ASSERT_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  int count = -1, cancelled = 1;
  MPI_Get_count(&st, MPI_BYTE, &count);
  MPI_Test_cancelled(&st, &cancelled);
  EXPECT_EQ(count, 0);
  EXPECT_EQ(cancelled, 0);
  EXPECT_EQ(st.MPI_SOURCE, MPI_UNDEFINED);
  EXPECT_EQ(c.destroyed.load(), 1);

  // MPI_Test until it says so; not before the work is done.
  r = c.start(20);
  int flag = 0, tests = 0;
  while (!flag && tests < 100000) {
    ASSERT_EQ(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ++tests;
  }
  EXPECT_TRUE(flag);
  EXPECT_GE(tests, 2);
  EXPECT_EQ(c.destroyed.load(), 2);

  // MPI_Waitall over two of ours around a message of the program's own.
  int sent = 7, got = 0;
  MPI_Request mix[3];
  mix[0] = c.start(30);
  MPI_Irecv(&got, 1, MPI_INT, 0, 11, MPI_COMM_SELF, &mix[1]);
  mix[2] = c.start(5);
  MPI_Send(&sent, 1, MPI_INT, 0, 11, MPI_COMM_SELF);
  ASSERT_EQ(MPI_Waitall(3, mix, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(got, 7);
  for (MPI_Request& q : mix) EXPECT_EQ(q, MPI_REQUEST_NULL);
  EXPECT_EQ(c.destroyed.load(), 4);

  // MPI_Waitany and MPI_Testsome: the quicker first.
  MPI_Request two[2] = {c.start(400), c.start(3)};
  int index = -1;
  ASSERT_EQ(MPI_Waitany(2, two, &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(index, 1);
  int outcount = 0, indices[2];
  for (int i = 0; i < 100000 && outcount == 0; ++i)
    ASSERT_EQ(MPI_Testsome(2, two, &outcount, indices, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(outcount, 1);
  EXPECT_EQ(indices[0], 0);
  EXPECT_EQ(c.destroyed.load(), 6);

  // Freed before it completes: MPI's progress still completes it, and then it is gone.
  r = c.start(100);
  ASSERT_EQ(MPI_Request_free(&r), MPI_SUCCESS);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  EXPECT_TRUE(progressUntil([&] { return c.destroyed.load() == 7; }));

  EXPECT_EQ(c.late.load(), 0) << "a work was polled after it was done";
  EXPECT_EQ(mccl::pendingMpiRequests(), 0u);
  EXPECT_EQ(mccl::liveMpiRequests(), live0);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(MpiRequests, AWorksErrorReachesTheWaiter) {
  if (!mccl::mpiRequestsAvailable()) GTEST_SKIP() << "no Open MPI progress hook";
  MPI_Errhandler world, self;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  Counters c;
  MPI_Request r = c.start(10, MPI_ERR_OTHER);
  EXPECT_NE(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  MPI_Request two[2] = {c.start(10, MPI_ERR_OTHER), c.start(2)};
  MPI_Status st[2];
  EXPECT_EQ(MPI_Waitall(2, two, st), MPI_ERR_IN_STATUS);
  int cls = 0;
  MPI_Error_class(st[0].MPI_ERROR, &cls);
  EXPECT_EQ(cls, MPI_ERR_OTHER);
  EXPECT_EQ(st[1].MPI_ERROR, MPI_SUCCESS);
  EXPECT_TRUE(progressUntil([&] { return c.destroyed.load() == 3; }));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, self);
  MPI_Errhandler_free(&world);
  MPI_Errhandler_free(&self);
  MPI_Barrier(MPI_COMM_WORLD);
}

// A request complete when handed out (a nonblocking call that ran to its end inside the
// call: no progress hook, or MCCL_MPI_NONBLOCKING=0): needs no hook, reports its result, and
// its entry goes when MPI frees it (by a wait, a test, or MPI_Request_free).
TEST(MpiRequests, CompletedOnesNeedNoProgress) {
  const size_t live0 = mccl::liveMpiRequests();
  MPI_Request r = MPI_REQUEST_NULL;
  ASSERT_EQ(mccl::completedMpiRequest(MPI_SUCCESS, &r), MPI_SUCCESS);
  ASSERT_NE(r, MPI_REQUEST_NULL);
  EXPECT_EQ(mccl::liveMpiRequests(), live0 + 1);
  int flag = 0;
  MPI_Status st;
  ASSERT_EQ(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  int count = -1;
  MPI_Get_count(&st, MPI_BYTE, &count);
  EXPECT_EQ(count, 0);
  EXPECT_EQ(mccl::liveMpiRequests(), live0);

  MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  ASSERT_EQ(mccl::completedMpiRequest(MPI_SUCCESS, &two[0]), MPI_SUCCESS);
  ASSERT_EQ(mccl::completedMpiRequest(MPI_SUCCESS, &two[1]), MPI_SUCCESS);
  EXPECT_EQ(MPI_Waitall(2, two, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  ASSERT_EQ(mccl::completedMpiRequest(MPI_SUCCESS, &r), MPI_SUCCESS);
  EXPECT_EQ(MPI_Request_free(&r), MPI_SUCCESS);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  EXPECT_EQ(mccl::liveMpiRequests(), live0);

  MPI_Errhandler world, self;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  ASSERT_EQ(mccl::completedMpiRequest(MPI_ERR_OTHER, &r), MPI_SUCCESS);
  EXPECT_NE(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  MPI_Request one[1] = {MPI_REQUEST_NULL};
  ASSERT_EQ(mccl::completedMpiRequest(MPI_ERR_OTHER, &one[0]), MPI_SUCCESS);
  EXPECT_EQ(MPI_Waitall(1, one, &st), MPI_ERR_IN_STATUS);
  int cls = 0;
  MPI_Error_class(st.MPI_ERROR, &cls);
  EXPECT_EQ(cls, MPI_ERR_OTHER);
  EXPECT_EQ(mccl::liveMpiRequests(), live0);
  EXPECT_EQ(mccl::pendingMpiRequests(), 0u);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, self);
  MPI_Errhandler_free(&world);
  MPI_Errhandler_free(&self);
  MPI_Barrier(MPI_COMM_WORLD);
}
