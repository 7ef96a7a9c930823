// Communicator life with ranks as threads: ncclCommInitAll (in-process bootstrap) and
// ncclGetUniqueId + ncclCommInitRank on threads (the real TCP bootstrap inside one process).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "mccl.h"
#include "test_util.h"

using namespace mccl_test;

class InitAll : public testing::TestWithParam<int> {};

TEST_P(InitAll, CreatesQueriesDestroys) {
  int n = GetParam();
  std::vector<ncclComm_t> comms(static_cast<size_t>(n));
  NCCL_OK(ncclCommInitAll(comms.data(), n, nullptr));
  for (int i = 0; i < n; ++i) {
    int count = -1, rank = -1, dev = 99, isHost = -1;
    NCCL_OK(ncclCommCount(comms[i], &count));
    NCCL_OK(ncclCommUserRank(comms[i], &rank));
    NCCL_OK(ncclCommCuDevice(comms[i], &dev));
    NCCL_OK(mcclCommIsHost(comms[i], &isHost));
    EXPECT_EQ(count, n);
    EXPECT_EQ(rank, i);
    EXPECT_EQ(dev, MCCL_DEVICE_HOST);
    EXPECT_EQ(isHost, 1);
    uint64_t made = 1, replayed = 1;  // a host communicator launches no kernel
    NCCL_OK(mcclCommLaunchGraphCounters(comms[i], &made, &replayed));
    EXPECT_EQ(made, 0u);
    EXPECT_EQ(replayed, 0u);
    ncclResult_t async = ncclInProgress;
    NCCL_OK(ncclCommGetAsyncError(comms[i], &async));
    EXPECT_EQ(async, ncclSuccess);
  }
  destroyComms(comms);
}

TEST_P(InitAll, SplitWithColorsKeysAndNoColor) {
  int n = GetParam();
  std::vector<ncclComm_t> comms(static_cast<size_t>(n));
  NCCL_OK(ncclCommInitAll(comms.data(), n, nullptr));
  std::vector<ncclComm_t> kids(static_cast<size_t>(n), nullptr);
  std::vector<ncclResult_t> res(static_cast<size_t>(n));
  runThreads(n, [&](int r) {
    // Rank n-1 opts out; the others split by parity with reversed keys.
    int color = (r == n - 1 && n > 1) ? NCCL_SPLIT_NOCOLOR : r % 2;
    res[r] = ncclCommSplit(comms[r], color, n - r, &kids[r], nullptr);
  });
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(res[r], ncclSuccess) << ncclGetLastError(comms[r]);
    if (r == n - 1 && n > 1) {
      EXPECT_EQ(kids[r], nullptr);
      continue;
    }
    ASSERT_NE(kids[r], nullptr);
    // Expected members: same parity, excluding n-1; ordered by key n-r (reversed).
    std::vector<int> members;
    for (int q = n - 1; q >= 0; --q)
      if (q % 2 == r % 2 && !(q == n - 1 && n > 1)) members.push_back(q);
    int count, rank;
    NCCL_OK(ncclCommCount(kids[r], &count));
    NCCL_OK(ncclCommUserRank(kids[r], &rank));
    EXPECT_EQ(count, static_cast<int>(members.size()));
    EXPECT_EQ(members[rank], r);
  }
  for (ncclComm_t k : kids)
    if (k) NCCL_EXPECT_OK(ncclCommDestroy(k));
  destroyComms(comms);
}

TEST_P(InitAll, AbortIsPrompt) {
  int n = GetParam();
  std::vector<ncclComm_t> comms(static_cast<size_t>(n));
  NCCL_OK(ncclCommInitAll(comms.data(), n, nullptr));
  auto t0 = std::chrono::steady_clock::now();
  for (ncclComm_t c : comms) NCCL_EXPECT_OK(ncclCommAbort(c));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0);
}

INSTANTIATE_TEST_SUITE_P(Ranks, InitAll, testing::Values(1, 2, 3, 8));

class UniqueIdThreads : public testing::TestWithParam<int> {};

TEST_P(UniqueIdThreads, InitRankOverTcp) {
  int n = GetParam();
  ncclUniqueId id;
  NCCL_OK(ncclGetUniqueId(&id));
  std::vector<ncclComm_t> comms(static_cast<size_t>(n), nullptr);
  std::vector<ncclResult_t> res(static_cast<size_t>(n));
  runThreads(n, [&](int r) { res[r] = ncclCommInitRank(&comms[r], n, id, r); });
  for (int r = 0; r < n; ++r) ASSERT_EQ(res[r], ncclSuccess) << ncclGetLastError(nullptr);
  // A split over the TCP bootstrap: two halves.
  std::vector<ncclComm_t> kids(static_cast<size_t>(n), nullptr);
  runThreads(n, [&](int r) { res[r] = ncclCommSplit(comms[r], r < n / 2, r, &kids[r], nullptr); });
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(res[r], ncclSuccess) << ncclGetLastError(comms[r]);
    int count;
    NCCL_OK(ncclCommCount(kids[r], &count));
    EXPECT_EQ(count, r < n / 2 ? n / 2 : n - n / 2);
  }
  destroyComms(kids);
  destroyComms(comms);
}

TEST_P(UniqueIdThreads, ScalableInitWithSeveralIds) {
  int n = GetParam();
  int nId = std::min(n, 3);
  std::vector<ncclUniqueId> ids(static_cast<size_t>(nId));
  for (auto& id : ids) NCCL_OK(ncclGetUniqueId(&id));
  std::vector<ncclComm_t> comms(static_cast<size_t>(n), nullptr);
  std::vector<ncclResult_t> res(static_cast<size_t>(n));
  runThreads(n, [&](int r) {
    res[r] = ncclCommInitRankScalable(&comms[r], n, r, nId, ids.data(), nullptr);
  });
  for (int r = 0; r < n; ++r) ASSERT_EQ(res[r], ncclSuccess) << ncclGetLastError(nullptr);
  destroyComms(comms);
}

TEST_P(UniqueIdThreads, NonblockingInitPolled) {
  int n = GetParam();
  ncclUniqueId id;
  NCCL_OK(ncclGetUniqueId(&id));
  std::vector<ncclComm_t> comms(static_cast<size_t>(n), nullptr);
  std::vector<ncclResult_t> res(static_cast<size_t>(n));
  runThreads(n, [&](int r) {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclResult_t rc = ncclCommInitRankConfig(&comms[r], n, id, r, &cfg);
    if (rc != ncclSuccess && rc != ncclInProgress) {
      res[r] = rc;
      return;
    }
    ncclResult_t state = ncclInProgress;
    auto t0 = std::chrono::steady_clock::now();
    while (state == ncclInProgress &&
           std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
      ncclCommGetAsyncError(comms[r], &state);
    res[r] = state;
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(res[r], ncclSuccess);
  destroyComms(comms);
}

TEST_P(UniqueIdThreads, GroupedInitFromOneThread) {
  // The guide's multi-device-per-thread pattern: one thread inits every rank in a group.
  int n = GetParam();
  ncclUniqueId id;
  NCCL_OK(ncclGetUniqueId(&id));
  std::vector<ncclComm_t> comms(static_cast<size_t>(n), nullptr);
  NCCL_OK(ncclGroupStart());
  for (int r = 0; r < n; ++r) NCCL_OK(ncclCommInitRank(&comms[r], n, id, r));
  NCCL_OK(ncclGroupEnd());
  for (int r = 0; r < n; ++r) {
    int rank;
    NCCL_OK(ncclCommUserRank(comms[r], &rank));
    EXPECT_EQ(rank, r);
  }
  destroyComms(comms);
}

INSTANTIATE_TEST_SUITE_P(Ranks, UniqueIdThreads, testing::Values(1, 2, 3, 8));

TEST(UniqueIdThreads, AbortWhileOthersNeverArrive) {
  // Two of three ranks start a nonblocking init; the third never comes. Aborting them
  // must return promptly.
  ncclUniqueId id;
  NCCL_OK(ncclGetUniqueId(&id));
  ncclComm_t comms[2] = {nullptr, nullptr};
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  for (int r = 0; r < 2; ++r) {
    ncclResult_t rc = ncclCommInitRankConfig(&comms[r], 3, id, r, &cfg);
    EXPECT_TRUE(rc == ncclInProgress || rc == ncclSuccess);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ncclResult_t state;
  NCCL_OK(ncclCommGetAsyncError(comms[0], &state));
  EXPECT_EQ(state, ncclInProgress);
  auto t0 = std::chrono::steady_clock::now();
  for (ncclComm_t c : comms) NCCL_EXPECT_OK(ncclCommAbort(c));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0);
}
