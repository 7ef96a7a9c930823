// Every collective, datatype and operator with ranks as threads of one process
// (ncclCommInitAll: in-process bootstrap, loopback transport), checked against the
// double-precision reference of coll_check.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll_check.h"
#include "mccl.h"
#include "test_util.h"

using namespace mccl_test;

namespace {

// Runs cases on every rank (thread) and reports the first failures.
void runOnThreads(std::vector<ncclComm_t>& comms, const std::vector<CollCase>& cases) {
  int n = static_cast<int>(comms.size());
  std::vector<std::string> errs(static_cast<size_t>(n));
  runThreads(n, [&](int r) {
    for (const CollCase& c : cases) {
      std::string e = runCollCase(comms[r], r, n, c);
      if (!e.empty() && errs[r].size() < 4000) errs[r] += e;
    }
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
}

std::vector<CollCase> everyCase(int n, std::vector<size_t> counts) {
  std::vector<CollCase> cases;
  uint64_t seed = 100;
  for (size_t count : counts)
    for (ncclDataType_t t : kAllTypes)
      for (bool inPlace : {false, true}) {
        for (ncclRedOp_t op : kBuiltinOps) {
          for (CollKind k : {CollKind::AllReduce, CollKind::ReduceScatter})
            cases.push_back(CollCase{k, t, op, false, false, count, 0, inPlace, seed++});
          cases.push_back(CollCase{CollKind::Reduce, t, op, false, false, count, n - 1, inPlace, seed++});
        }
        cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, false, count, 0, inPlace, seed++});
        cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, true, count, 0, inPlace, seed++});
        cases.push_back(CollCase{CollKind::ReduceScatter, t, ncclSum, true, false, count, 0, inPlace, seed++});
        for (int root = 0; root < n; ++root) {
          cases.push_back(CollCase{CollKind::Broadcast, t, ncclSum, false, false, count, root, inPlace, seed++});
          cases.push_back(CollCase{CollKind::Reduce, t, ncclSum, root % 2 == 1, false, count, root, inPlace, seed++});
        }
        cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count, 0, inPlace, seed++});
      }
  return cases;
}

}  // namespace

class ThreadCollectives : public testing::TestWithParam<int> {};

TEST_P(ThreadCollectives, EveryTypeOpAndForm) {
  int n = GetParam();
  std::vector<ncclComm_t> comms = makeHostComms(n);
  runOnThreads(comms, everyCase(n, {0, 1, 7, 1023}));
  destroyComms(comms);
}

TEST_P(ThreadCollectives, LargeCounts) {
  int n = GetParam();
  std::vector<ncclComm_t> comms = makeHostComms(n);
  std::vector<CollCase> cases;
  const size_t big = (1 << 20) + 3;
  for (ncclDataType_t t : {ncclFloat32, ncclInt64, ncclFloat16, ncclFloat8e4m3}) {
    cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, false, false, big, 0, false, 7});
    cases.push_back(CollCase{CollKind::AllReduce, t, ncclMax, false, false, big, 0, true, 8});
    cases.push_back(CollCase{CollKind::Broadcast, t, ncclSum, false, false, big, n - 1, false, 9});
    cases.push_back(CollCase{CollKind::Reduce, t, ncclSum, false, false, big, 0, true, 10});
    cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, big / n, 0, false, 11});
    cases.push_back(CollCase{CollKind::ReduceScatter, t, ncclSum, false, false, big / n, 0, true, 12});
  }
  runOnThreads(comms, cases);
  destroyComms(comms);
}

TEST_P(ThreadCollectives, PointToPointPatterns) {
  int n = GetParam();
  std::vector<ncclComm_t> comms = makeHostComms(n);
  std::vector<std::string> errs(static_cast<size_t>(n));
  runThreads(n, [&](int r) {
    for (const char* p : {"ring", "neighbor", "alltoall", "scatter", "gather"})
      for (size_t count : {size_t{0}, size_t{1}, size_t{1000}, size_t{300000}})
        errs[r] += runP2pPattern(comms[r], r, n, p, count, ncclInt32, n / 2, count + 1);
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
  destroyComms(comms);
}

// NCCL 2.28's AlltoAll, Gather, Scatter and mccl's AlltoAllv (grouped Send/Recv inside).
TEST_P(ThreadCollectives, AlltoAllGatherScatterAlltoAllv) {
  int n = GetParam();
  std::vector<ncclComm_t> comms = makeHostComms(n);
  runOnThreads(comms, alltoallFamilyCases(n, 1000 + 3));
  destroyComms(comms);
}

TEST_P(ThreadCollectives, GroupMixingOldAndNewCalls) {
  int n = GetParam();
  std::vector<ncclComm_t> comms = makeHostComms(n);
  std::vector<std::string> errs(static_cast<size_t>(n));
  runThreads(n, [&](int r) { errs[r] = runMixedGroup(comms[r], r, n); });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
  destroyComms(comms);
}

// AlltoAll in place (sendbuff == recvbuff), alone and inside a group with another
// operation: block q of rank r ends as rank q's block r (on several ranks mccl sends from a
// staged copy of the input), as nccl-tests runs it.
TEST_P(ThreadCollectives, AlltoAllInPlace) {
  int n = GetParam();
  std::vector<ncclComm_t> comms = makeHostComms(n);
  const size_t count = 5;
  for (bool grouped : {false, true}) {
    std::vector<std::vector<int>> buf(n), other(n, std::vector<int>(3, 0));
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count * n; ++i) buf[r].push_back(1000 * r + static_cast<int>(i));
    const std::vector<std::vector<int>> before = buf;
    std::vector<ncclResult_t> rc(static_cast<size_t>(n));
    runThreads(n, [&](int r) {
      if (!grouped) {
        rc[r] = ncclAlltoAll(buf[r].data(), buf[r].data(), count, ncclInt32, comms[r], nullptr);
        return;
      }
      ncclGroupStart();
      ncclResult_t a = ncclAlltoAll(buf[r].data(), buf[r].data(), count, ncclInt32, comms[r], nullptr);
      std::vector<int> one(3, r + 1);
      ncclResult_t b = ncclAllReduce(one.data(), other[r].data(), 3, ncclInt32, ncclSum, comms[r], nullptr);
      ncclResult_t e = ncclGroupEnd();
      rc[r] = a != ncclSuccess ? a : b != ncclSuccess ? b : e;
    });
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(rc[r], ncclSuccess) << "rank " << r << ": " << ncclGetLastError(comms[r]);
      for (int q = 0; q < n; ++q)
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(buf[r][q * count + i], before[q][r * count + i])
              << (grouped ? "grouped" : "alone") << " rank " << r << " block " << q << " element " << i;
      if (grouped) EXPECT_EQ(other[r][2], n * (n + 1) / 2) << "rank " << r;
    }
  }
  destroyComms(comms);
}

INSTANTIATE_TEST_SUITE_P(Ranks, ThreadCollectives, testing::Values(1, 2, 3, 4, 8));

// ncclGroupSimulateEnd: an estimate, nothing run, nothing left queued.
TEST(ThreadCollectives, GroupSimulateEndRunsNothing) {
  const int n = 3;
  std::vector<ncclComm_t> comms = makeHostComms(n);
  const size_t count = 1000;
  std::vector<std::vector<int>> in(n, std::vector<int>(count * n, 5)), out(n, std::vector<int>(count * n, -1));
  float estimate[2] = {-1, -1};
  for (int k = 0; k < 2; ++k) {  // a small and a 16x larger group
    size_t c = k == 0 ? count / 16 : count;
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    NCCL_OK(ncclGroupStart());
    for (int r = 0; r < n; ++r) {
      NCCL_OK(ncclAlltoAll(in[r].data(), out[r].data(), c, ncclInt32, comms[r], nullptr));
      NCCL_OK(ncclAllReduce(in[r].data(), out[r].data(), c, ncclInt32, ncclSum, comms[r], nullptr));
    }
    NCCL_OK(ncclGroupSimulateEnd(&sim));
    estimate[k] = sim.estimatedTime;
  }
  EXPECT_GT(estimate[0], 0.0f);
  EXPECT_GT(estimate[1], estimate[0]);
  for (int r = 0; r < n; ++r)
    for (int v : out[r]) ASSERT_EQ(v, -1) << "a simulated group wrote its output";
  // Nothing stayed queued: a plain group runs only its own operation.
  NCCL_OK(ncclGroupStart());
  for (int r = 0; r < n; ++r)
    NCCL_OK(ncclAllReduce(in[r].data(), out[r].data(), 1, ncclInt32, ncclSum, comms[r], nullptr));
  NCCL_OK(ncclGroupEnd());
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(out[r][0], 5 * n);
    EXPECT_EQ(out[r][1], -1);
  }
  destroyComms(comms);
}

TEST(ThreadCollectives, OneThreadDrivesAllRanksInAGroup) {
  // The guide's single-process pattern: one thread, every communicator, one group.
  const int n = 4;
  std::vector<ncclComm_t> comms = makeHostComms(n);
  const size_t count = 10000;
  std::vector<std::vector<float>> in(n, std::vector<float>(count)), out(n, std::vector<float>(count, -1));
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) in[r][i] = static_cast<float>(r + i % 13);
  NCCL_OK(ncclGroupStart());
  for (int r = 0; r < n; ++r)
    NCCL_OK(ncclAllReduce(in[r].data(), out[r].data(), count, ncclFloat, ncclSum, comms[r], nullptr));
  NCCL_OK(ncclGroupEnd());
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[r][i], 6.0f + 4 * (i % 13)) << r << " " << i;
  destroyComms(comms);
}
