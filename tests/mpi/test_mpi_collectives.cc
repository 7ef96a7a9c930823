// Every collective x datatype x operator x in-place form x count x root between processes
// over UCX, on a communicator made from MPI_COMM_WORLD; point-to-point patterns; groups
// mixing collectives and point-to-point; two communicators and a split child used
// concurrently from two threads; a seeded random soak.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "coll_check.h"
#include "host_engine/host_datapath.h"
#include "mccl_mpi.h"
#include "mpi_util.h"
#include "test_util.h"

using namespace mccl_test;

namespace {


class WorldComm : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_EQ(mcclCommInitFromMpi(&comm_, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr), ncclSuccess)
        << ncclGetLastError(nullptr);
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(ncclCommDestroy(comm_), ncclSuccess);
    comm_ = nullptr;
  }
  // Runs cases; every rank runs every case even after a failure, so nobody hangs.
  void run(const std::vector<CollCase>& cases) {
    int r = worldRank(), n = worldSize();
    std::string errs;
    for (const CollCase& c : cases) {
      std::string e = runCollCase(comm_, r, n, c);
      if (!e.empty() && errs.size() < 4000) errs += e;
    }
    EXPECT_TRUE(errs.empty()) << errs;
  }
  static ncclComm_t comm_;
};
ncclComm_t WorldComm::comm_ = nullptr;

std::vector<size_t> kCounts = {0, 1, 7, 100, 1023, (1 << 20) + 3};

// MCCL_HOST_SHM_MAX_BYTES: messages up to this size go through shared memory on one node.
size_t shmMaxBytes() {
  const char* v = std::getenv("MCCL_HOST_SHM_MAX_BYTES");
  return v ? static_cast<size_t>(std::strtoull(v, nullptr, 0)) : 65536;
}

// Whether every rank is on this node (tests/mpi/fake_nodes.sh spreads them over fake nodes
// of MCCL_RANKS_PER_NODE ranks), where small messages go through shared memory.
bool oneNode() {
  if (std::getenv("MCCL_HOST_ID") == nullptr) return true;
  const char* per = std::getenv("MCCL_RANKS_PER_NODE");
  return worldSize() <= (per ? std::atoi(per) : 2);
}

}  // namespace

TEST_F(WorldComm, AllReduceAndReduceScatterEveryTypeOp) {
  std::vector<CollCase> cases;
  uint64_t seed = 1;
  for (size_t count : kCounts)
    for (ncclDataType_t t : kAllTypes)
      for (bool inPlace : {false, true}) {
        // The largest count (pipelined through several FIFO slots) once per type and form
        // with Sum, Avg (each element divided once, however it is chunked) and PreMulSum
        // (scaled once). Max, Min, Prod and the device-resident scalar are elementwise
        // choices on the same pipeline, checked at the smaller counts: at this size they
        // cost a third of the test (the reference is computed for every element).
        const bool big = count > 100000;
        for (ncclRedOp_t op : kBuiltinOps) {
          if (big && op != ncclSum && op != ncclAvg) continue;
          cases.push_back(CollCase{CollKind::AllReduce, t, op, false, false, count, 0, inPlace, seed++});
          cases.push_back(CollCase{CollKind::ReduceScatter, t, op, false, false, count / 2, 0, inPlace, seed++});
        }
        cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, false, count, 0, inPlace, seed++});
        if (!big) cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, true, count, 0, inPlace, seed++});
        cases.push_back(CollCase{CollKind::ReduceScatter, t, ncclSum, true, false, count / 2, 0, inPlace, seed++});
      }
  run(cases);
}

TEST_F(WorldComm, RootedEveryRoot) {
  std::vector<CollCase> cases;
  uint64_t seed = 5000;
  int n = worldSize();
  for (size_t count : kCounts)
    for (ncclDataType_t t : kAllTypes)
      for (bool inPlace : {false, true})
        for (int root = 0; root < n; ++root) {
          bool big = count > 100000;
          if (big && root != n - 1 && t != ncclFloat32) continue;
          cases.push_back(CollCase{CollKind::Broadcast, t, ncclSum, false, false, count, root, inPlace, seed++});
          for (ncclRedOp_t op : kBuiltinOps) {
            if (big && op != ncclSum) continue;
            cases.push_back(CollCase{CollKind::Reduce, t, op, false, false, count, root, inPlace, seed++});
          }
          cases.push_back(CollCase{CollKind::Reduce, t, ncclSum, true, false, count, root, inPlace, seed++});
        }
  run(cases);
}

TEST_F(WorldComm, AllGatherEveryType) {
  std::vector<CollCase> cases;
  uint64_t seed = 9000;
  for (size_t count : kCounts)
    for (ncclDataType_t t : kAllTypes)
      for (bool inPlace : {false, true})
        cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count / 2 + (count & 1), 0, inPlace, seed++});
  run(cases);
}

TEST_F(WorldComm, PointToPointPatterns) {
  int r = worldRank(), n = worldSize();
  std::string errs;
  for (const char* p : {"ring", "neighbor", "alltoall", "scatter", "gather"})
    for (size_t count : {size_t{0}, size_t{1}, size_t{4099}, size_t{1} << 20})
      for (ncclDataType_t t : {ncclInt8, ncclFloat64, ncclBfloat16})
        errs += runP2pPattern(comm_, r, n, p, count, t, n - 1, count * 7 + 3);
  EXPECT_TRUE(errs.empty()) << errs;
}

TEST_F(WorldComm, GroupMixesCollectivesAndPointToPoint) {
  int r = worldRank(), n = worldSize();
  const size_t count = 5000;
  std::vector<double> a(count), b(count, -1), c(count, -1), sendv(count), recvv(count, -1);
  for (size_t i = 0; i < count; ++i) a[i] = r + i, sendv[i] = 1000.0 * r + i;
  std::vector<float> bc(count, r == 0 ? 3.5f : 0.f);
  NCCL_OK(ncclGroupStart());
  NCCL_OK(ncclRecv(recvv.data(), count, ncclDouble, (r + n - 1) % n, comm_, nullptr));
  NCCL_OK(ncclAllReduce(a.data(), b.data(), count, ncclDouble, ncclSum, comm_, nullptr));
  NCCL_OK(ncclBroadcast(bc.data(), bc.data(), count, ncclFloat, 0, comm_, nullptr));
  NCCL_OK(ncclSend(sendv.data(), count, ncclDouble, (r + 1) % n, comm_, nullptr));
  NCCL_OK(ncclAllReduce(a.data(), c.data(), count, ncclDouble, ncclMax, comm_, nullptr));
  NCCL_OK(ncclGroupEnd());
  int prev = (r + n - 1) % n;
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(b[i], n * (n - 1) / 2.0 + n * static_cast<double>(i));
    ASSERT_EQ(c[i], (n - 1) + static_cast<double>(i));
    ASSERT_EQ(recvv[i], 1000.0 * prev + i);
    ASSERT_EQ(bc[i], 3.5f);
  }
}

// NCCL 2.28's AlltoAll, Gather, Scatter and mccl's AlltoAllv between processes.
TEST_F(WorldComm, AlltoAllGatherScatterAlltoAllv) { run(alltoallFamilyCases(worldSize(), 40000 + 1)); }

// A rank's Sends to itself and Recvs from itself in one group pair in call order and run as
// copies (no FIFO): in either order in the group, several pairs, beside messages to the
// other ranks and a collective; a message to itself left from an earlier group is received
// first (no pairing overtakes it); a pair whose sizes differ is refused, nothing written.
TEST_F(WorldComm, SelfSendRecvPairsAreCopiesInCallOrder) {
  const int r = worldRank(), n = worldSize(), next = (r + 1) % n, prev = (r + n - 1) % n;
  for (size_t count : {size_t{1}, size_t{3000}, (size_t{1} << 18) + 3}) {  // shared memory, both, the engine
    SCOPED_TRACE("count " + std::to_string(count));
    auto fill = [&](int tag) {
      std::vector<int32_t> v(count);
      for (size_t i = 0; i < count; ++i) v[i] = tag * 1000003 + r * 7919 + static_cast<int32_t>(i);
      return v;
    };
    const std::vector<int32_t> a = fill(1), b = fill(2), c = fill(3);
    std::vector<int32_t> x(count, -1), y(count, -1), z(count, -1);
    uint64_t before = mccl::hostSelfCopyCount();
    // Recv first, then its Send; then two pairs whose Sends come first.
    NCCL_OK(ncclGroupStart());
    NCCL_OK(ncclRecv(x.data(), count, ncclInt32, r, comm_, nullptr));
    NCCL_OK(ncclSend(a.data(), count, ncclInt32, r, comm_, nullptr));
    NCCL_OK(ncclGroupEnd());
    NCCL_OK(ncclGroupStart());
    NCCL_OK(ncclSend(b.data(), count, ncclInt32, r, comm_, nullptr));
    NCCL_OK(ncclSend(c.data(), count, ncclInt32, r, comm_, nullptr));
    NCCL_OK(ncclRecv(y.data(), count, ncclInt32, r, comm_, nullptr));
    NCCL_OK(ncclRecv(z.data(), count, ncclInt32, r, comm_, nullptr));
    NCCL_OK(ncclGroupEnd());
    EXPECT_EQ(mccl::hostSelfCopyCount() - before, 3u);
    EXPECT_EQ(x, a);
    EXPECT_EQ(y, b);
    EXPECT_EQ(z, c);
    // Beside a ring of messages (on one rank: itself too, paired in call order) and an
    // AllReduce in the same group.
    std::vector<int32_t> ringIn(count, -1), sum(count, -1), ones(count, 1);
    std::fill(x.begin(), x.end(), -1);
    NCCL_OK(ncclGroupStart());
    NCCL_OK(ncclSend(c.data(), count, ncclInt32, next, comm_, nullptr));
    NCCL_OK(ncclRecv(x.data(), count, ncclInt32, r, comm_, nullptr));
    NCCL_OK(ncclAllReduce(ones.data(), sum.data(), count, ncclInt32, ncclSum, comm_, nullptr));
    NCCL_OK(ncclRecv(ringIn.data(), count, ncclInt32, prev, comm_, nullptr));
    NCCL_OK(ncclSend(b.data(), count, ncclInt32, r, comm_, nullptr));
    NCCL_OK(ncclGroupEnd());
    EXPECT_EQ(x, n == 1 ? c : b);
    EXPECT_EQ(sum, std::vector<int32_t>(count, n));
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(ringIn[i], (n == 1 ? 2000006 : 3000009) + prev * 7919 + static_cast<int32_t>(i)) << "element " << i;
    // A Send to itself alone, eager in shared memory (where it waits as a message; on the
    // engine it would wait for its Recv, as NCCL's does), then a group whose Recv must take
    // it, not the Send beside it.
    if (n > 1 && count * sizeof(int32_t) <= shmMaxBytes() && oneNode()) {
      std::fill(x.begin(), x.end(), -1);
      std::fill(y.begin(), y.end(), -1);
      before = mccl::hostSelfCopyCount();
      NCCL_OK(ncclSend(a.data(), count, ncclInt32, r, comm_, nullptr));
      NCCL_OK(ncclGroupStart());
      NCCL_OK(ncclRecv(x.data(), count, ncclInt32, r, comm_, nullptr));
      NCCL_OK(ncclSend(b.data(), count, ncclInt32, r, comm_, nullptr));
      NCCL_OK(ncclRecv(y.data(), count, ncclInt32, r, comm_, nullptr));
      NCCL_OK(ncclGroupEnd());
      EXPECT_EQ(mccl::hostSelfCopyCount() - before, 0u);
      EXPECT_EQ(x, a);
      EXPECT_EQ(y, b);
    }
    // Sizes that differ: refused with a sentence, the Recv's buffer untouched, the
    // communicator usable after.
    std::fill(x.begin(), x.end(), -1);
    NCCL_OK(ncclGroupStart());
    NCCL_OK(ncclSend(a.data(), count, ncclInt8, r, comm_, nullptr));
    NCCL_OK(ncclRecv(x.data(), count, ncclInt32, r, comm_, nullptr));
    EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
    const std::string e = ncclGetLastError(comm_);
    EXPECT_NE(e.find("(itself)"), std::string::npos) << e;
    EXPECT_EQ(x, std::vector<int32_t>(count, -1));
    std::fill(sum.begin(), sum.end(), -1);
    NCCL_OK(ncclAllReduce(ones.data(), sum.data(), count, ncclInt32, ncclSum, comm_, nullptr));
    EXPECT_EQ(sum, std::vector<int32_t>(count, n));
  }
}

TEST_F(WorldComm, GroupMixesOldAndNewCollectives) {
  std::string e = runMixedGroup(comm_, worldRank(), worldSize());
  EXPECT_TRUE(e.empty()) << e;
}

TEST_F(WorldComm, RandomSoak) {
  // >= 1,000 operations of random kind, size, type, op and root; the seed is printed on
  // failure (MCCL_SOAK_SEED replays it).
  uint64_t seed = 12345;
  if (const char* s = std::getenv("MCCL_SOAK_SEED")) seed = std::strtoull(s, nullptr, 0);
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::mt19937_64 rng(seed);
  int n = worldSize();
  std::vector<CollCase> cases;
  for (int i = 0; i < 1000; ++i) {
    CollCase c;
    c.kind = static_cast<CollKind>(rng() % 5);
    c.type = kAllTypes[rng() % 12];
    c.op = kBuiltinOps[rng() % 5];
    c.preMulSum = rng() % 8 == 0;
    c.scalarOnDevice = rng() % 2 == 0;
    c.count = rng() % 4 == 0 ? rng() % 200000 : rng() % 300;
    c.root = static_cast<int>(rng() % n);
    c.inPlace = rng() % 2 == 0;
    c.seed = rng();
    cases.push_back(c);
  }
  SCOPED_TRACE("soak seed " + std::to_string(seed));
  run(cases);
}

TEST(MpiThreads, TwoCommunicatorsAndASplitChildFromThreads) {
  // Separate communicators driven from separate threads at the same time. They bootstrap
  // through unique ids (TCP), so the threads never call MPI.
  int r = worldRank(), n = worldSize();
  ncclUniqueId ids[2];
  if (r == 0)
    for (auto& id : ids) NCCL_OK(ncclGetUniqueId(&id));
  MPI_Bcast(ids, sizeof ids, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t a, b, child;
  NCCL_OK(ncclCommInitRank(&a, n, ids[0], r));
  NCCL_OK(ncclCommInitRank(&b, n, ids[1], r));
  NCCL_OK(ncclCommSplit(a, r % 2, r, &child, nullptr));
  int cn, cr;
  NCCL_OK(ncclCommCount(child, &cn));
  NCCL_OK(ncclCommUserRank(child, &cr));
  std::string errs[3];
  std::thread t0([&] {
    for (int i = 0; i < 20; ++i)
      errs[0] += runCollCase(a, r, n, CollCase{CollKind::AllReduce, ncclFloat32, ncclSum, false, false, 40000, 0, false, 77u + i});
  });
  std::thread t1([&] {
    for (int i = 0; i < 20; ++i)
      errs[1] += runCollCase(b, r, n, CollCase{CollKind::AllGather, ncclInt32, ncclSum, false, false, 10000, 0, i % 2 == 0, 99u + i});
  });
  std::thread t2([&] {
    for (int i = 0; i < 20; ++i)
      errs[2] += runCollCase(child, cr, cn, CollCase{CollKind::ReduceScatter, ncclFloat64, ncclMax, false, false, 3000, 0, false, 55u + i});
  });
  t0.join();
  t1.join();
  t2.join();
  for (auto& e : errs) EXPECT_TRUE(e.empty()) << e;
  NCCL_OK(ncclCommDestroy(child));
  NCCL_OK(ncclCommDestroy(b));
  NCCL_OK(ncclCommDestroy(a));
}
