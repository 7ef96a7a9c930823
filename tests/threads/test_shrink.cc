// ncclCommShrink and ncclCommRevoke with ranks as threads: in-process (ncclCommInitAll)
// and TCP (unique id) parents. The survivors' communicator is checked for its size, the
// renumbering, a checked AllReduce and a split of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "coll_check.h"
#include "mccl.h"
#include "test_util.h"

using namespace mccl_test;

namespace {

std::vector<ncclComm_t> makeTcpComms(int n) {
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(static_cast<size_t>(n), nullptr);
  std::vector<ncclResult_t> res(static_cast<size_t>(n));
  runThreads(n, [&](int r) { res[r] = ncclCommInitRank(&comms[r], n, id, r); });
  for (int r = 0; r < n; ++r) EXPECT_EQ(res[r], ncclSuccess) << ncclGetLastError(nullptr);
  return comms;
}

// Shrinks comms (one per thread) without excluded; survivors check their new communicator
// with an AllReduce and a split into two halves. Returns "" or the failures.
std::string shrinkAndCheck(std::vector<ncclComm_t>& comms, std::vector<int> excluded, int flags) {
  const int n = static_cast<int>(comms.size());
  std::vector<int> survivors;
  for (int r = 0; r < n; ++r)
    if (std::find(excluded.begin(), excluded.end(), r) == excluded.end()) survivors.push_back(r);
  const int m = static_cast<int>(survivors.size());
  std::vector<std::string> errs(static_cast<size_t>(n));
  std::vector<ncclComm_t> kids(static_cast<size_t>(n), nullptr);
  runThreads(n, [&](int r) {
    auto it = std::find(survivors.begin(), survivors.end(), r);
    if (it == survivors.end()) return;  // excluded ranks do not call shrink
    int expectRank = static_cast<int>(it - survivors.begin());
    std::string& e = errs[r];
    ncclResult_t res = ncclCommShrink(comms[r], excluded.empty() ? nullptr : excluded.data(),
                                      static_cast<int>(excluded.size()), &kids[r], nullptr, flags);
    if (res != ncclSuccess || kids[r] == nullptr) {
      e = std::string("shrink: ") + ncclGetErrorString(res) + ": " + ncclGetLastError(comms[r]);
      return;
    }
    int count = -1, rank = -1;
    ncclCommCount(kids[r], &count);
    ncclCommUserRank(kids[r], &rank);
    if (count != m || rank != expectRank) {
      e = "new comm is rank " + std::to_string(rank) + " of " + std::to_string(count) + ", expected " +
          std::to_string(expectRank) + " of " + std::to_string(m);
      return;
    }
    CollCase c{CollKind::AllReduce, ncclFloat32, ncclSum, false, false, 1001, 0, false, 7};
    e += runCollCase(kids[r], rank, m, c);
    ncclComm_t half = nullptr;
    res = ncclCommSplit(kids[r], rank % 2, rank, &half, nullptr);
    if (res != ncclSuccess || half == nullptr) {
      e += std::string("split of the shrunk comm: ") + ncclGetErrorString(res);
      return;
    }
    int hc = -1;
    ncclCommCount(half, &hc);
    if (hc != (rank % 2 == 0 ? (m + 1) / 2 : m / 2)) e += "split half has " + std::to_string(hc) + " ranks";
    CollCase d{CollKind::AllReduce, ncclInt32, ncclMax, false, false, 33, 0, true, 8};
    e += runCollCase(half, rank / 2, hc, d);
    ncclCommDestroy(half);
  });
  std::string all;
  for (int r = 0; r < n; ++r)
    if (!errs[r].empty()) all += "rank " + std::to_string(r) + ": " + errs[r] + "\n";
  for (ncclComm_t k : kids)
    if (k && ncclCommDestroy(k) != ncclSuccess) all += "destroy of a shrunk comm failed\n";
  return all;
}

}  // namespace

TEST(Shrink, InProcExcludeOneSeveralAndNone) {
  std::vector<ncclComm_t> comms = makeHostComms(4);
  EXPECT_EQ(shrinkAndCheck(comms, {1}, NCCL_SHRINK_DEFAULT), "");
  EXPECT_EQ(shrinkAndCheck(comms, {3, 0}, NCCL_SHRINK_DEFAULT), "");  // unsorted list
  EXPECT_EQ(shrinkAndCheck(comms, {}, NCCL_SHRINK_DEFAULT), "");
  // The parent is still usable after default shrinks.
  std::vector<std::string> errs(4);
  runThreads(4, [&](int r) {
    errs[r] = runCollCase(comms[r], r, 4, CollCase{CollKind::AllReduce, ncclFloat64, ncclSum, false, false, 17, 0, false, 3});
  });
  for (int r = 0; r < 4; ++r) EXPECT_EQ(errs[r], "") << "rank " << r;
  destroyComms(comms);
}

TEST(Shrink, TcpExcludeOneAndAbortMode) {
  std::vector<ncclComm_t> comms = makeTcpComms(3);
  EXPECT_EQ(shrinkAndCheck(comms, {0}, NCCL_SHRINK_DEFAULT), "");
  // NCCL_SHRINK_ABORT on a healthy parent: works, and the parent is revoked afterwards.
  EXPECT_EQ(shrinkAndCheck(comms, {2}, NCCL_SHRINK_ABORT), "");
  float x = 1, y = 0;
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, comms[r], nullptr), ncclInvalidUsage);
  destroyComms(comms);
}

TEST(Shrink, ShrinkOfASplitCommunicator) {
  std::vector<ncclComm_t> comms = makeHostComms(5);
  std::vector<ncclComm_t> kids(5, nullptr);
  runThreads(5, [&](int r) { EXPECT_EQ(ncclCommSplit(comms[r], r % 2, r, &kids[r], nullptr), ncclSuccess); });
  // Even ranks 0,2,4 form a 3-rank child; odd ones a 2-rank child. Drop child rank 1 of each
  // (in each child's own rank numbers) by shrinking each child on its own threads.
  std::vector<ncclComm_t> evens = {kids[0], kids[2], kids[4]}, odds = {kids[1], kids[3]};
  std::string e1, e2;
  std::thread t([&] { e1 = shrinkAndCheck(evens, {1}, NCCL_SHRINK_DEFAULT); });
  e2 = shrinkAndCheck(odds, {1}, NCCL_SHRINK_DEFAULT);
  t.join();
  EXPECT_EQ(e1, "");
  EXPECT_EQ(e2, "");
  destroyComms(kids);
  destroyComms(comms);
}

TEST(Revoke, StopsOperationsAndAllowsShrinkSplitDestroy) {
  std::vector<ncclComm_t> comms = makeHostComms(3);
  for (ncclComm_t c : comms) EXPECT_EQ(ncclCommRevoke(c, NCCL_REVOKE_DEFAULT), ncclSuccess);
  float x = 1, y = 0;
  for (ncclComm_t c : comms) {
    ncclResult_t st = ncclInProgress;
    EXPECT_EQ(ncclCommGetAsyncError(c, &st), ncclSuccess);
    EXPECT_EQ(st, ncclSuccess);  // quiescent
    EXPECT_EQ(ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, c, nullptr), ncclInvalidUsage);
    EXPECT_TRUE(contains(ncclGetLastError(c), "revoked")) << ncclGetLastError(c);
    EXPECT_EQ(ncclSend(&x, 1, ncclFloat32, 0, c, nullptr), ncclInvalidUsage);
    EXPECT_EQ(ncclCommFinalize(c), ncclInvalidUsage);
    EXPECT_EQ(ncclCommRevoke(c, NCCL_REVOKE_DEFAULT), ncclInvalidArgument);
    EXPECT_TRUE(contains(ncclGetLastError(c), "already revoked")) << ncclGetLastError(c);
  }
  EXPECT_EQ(y, 0.0f);
  // Management still works: a split and a shrink of the revoked parent.
  std::vector<ncclComm_t> kids(3, nullptr);
  runThreads(3, [&](int r) { EXPECT_EQ(ncclCommSplit(comms[r], 0, r, &kids[r], nullptr), ncclSuccess); });
  destroyComms(kids);
  EXPECT_EQ(shrinkAndCheck(comms, {1}, NCCL_SHRINK_DEFAULT), "");
  destroyComms(comms);
}

TEST(Shrink, NonblockingConfigIsPolledToSuccess) {
  std::vector<ncclComm_t> comms = makeHostComms(3);
  std::vector<ncclComm_t> kids(3, nullptr);
  std::vector<std::string> errs(3);
  int out[] = {0};
  runThreads(3, [&](int r) {
    if (r == 0) return;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclResult_t res = ncclCommShrink(comms[r], out, 1, &kids[r], &cfg, NCCL_SHRINK_DEFAULT);
    if (res != ncclSuccess && res != ncclInProgress) {
      errs[r] = std::string("shrink: ") + ncclGetErrorString(res);
      return;
    }
    ncclResult_t st = ncclInProgress;
    while (st == ncclInProgress) ncclCommGetAsyncError(kids[r], &st);
    if (st != ncclSuccess) {
      errs[r] = std::string("async: ") + ncclGetErrorString(st);
      return;
    }
    errs[r] = runCollCase(kids[r], r - 1, 2, CollCase{CollKind::AllReduce, ncclFloat32, ncclSum, false, false, 64, 0, false, 21});
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(errs[r], "") << "rank " << r;
  EXPECT_EQ(kids[0], nullptr);
  destroyComms(kids);
  destroyComms(comms);
}
