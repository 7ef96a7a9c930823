// The GPU LL protocol's plan, checked without a GPU: the all-pairs pattern every rank
// follows (each send has its receive on the peer, every contribution reaches whoever
// needs it exactly once), and the planner's protocol choice (NCCL_PROTO, the traffic
// threshold, the rank limit, network peers, host communicators).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>

#include <vector>

#include "algorithms/schedule.h"
#include "core/comm.h"
#include "core/knobs.h"
#include "core/planner.h"

using namespace mccl;

namespace {

Schedule allPairs(Coll coll, int n, int rank, int root) {
  Schedule s{};
  s.coll = coll;
  s.algo = coll == Coll::Send || coll == Coll::Recv ? Algo::P2p : Algo::Ring;
  s.nranks = n;
  s.rank = rank;
  s.root = root;
  s.nchannels = 1;
  return s;
}

// Which ranks' data ends up combined or stored at rank `at`: its own (where the collective
// uses it) plus every rank it receives from.
std::vector<int> contributors(Coll coll, int n, int at, int root) {
  std::vector<int> got;
  for (int r = 0; r < n; ++r)
    if (allPairsRecvsFrom(allPairs(coll, n, at, root), r)) got.push_back(r);
  return got;
}

}  // namespace

TEST(LlAllPairs, EverySendHasItsReceive) {
  for (Coll coll : {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::Broadcast, Coll::Reduce})
    for (int n = 1; n <= kLlMaxRanks; ++n)
      for (int root = 0; root < n; ++root)
        for (int a = 0; a < n; ++a)
          for (int b = 0; b < n; ++b) {
            const bool sends = allPairsSendsTo(allPairs(coll, n, a, root), b);
            const bool recvs = allPairsRecvsFrom(allPairs(coll, n, b, root), a);
            EXPECT_EQ(sends, recvs) << "coll " << static_cast<int>(coll) << " n " << n << " root " << root << " " << a
                                    << " -> " << b;
            if (a == b) EXPECT_FALSE(sends) << "a collective never sends to itself";
          }
}

TEST(LlAllPairs, ContributionsReachWhoNeedsThem) {
  for (int n = 1; n <= kLlMaxRanks; ++n)
    for (int root = 0; root < n; ++root)
      for (int at = 0; at < n; ++at) {
        // AllReduce, AllGather, ReduceScatter: every other rank; Reduce: the root hears
        // everyone, the others nobody; Broadcast: everyone but the root hears the root.
        for (Coll coll : {Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter})
          EXPECT_EQ(contributors(coll, n, at, root).size(), static_cast<size_t>(n - 1));
        EXPECT_EQ(contributors(Coll::Reduce, n, at, root).size(), at == root ? static_cast<size_t>(n - 1) : 0u);
        std::vector<int> b = contributors(Coll::Broadcast, n, at, root);
        if (at == root) EXPECT_TRUE(b.empty());
        else EXPECT_EQ(b, std::vector<int>{root});
      }
}

TEST(LlAllPairs, PointToPointIncludesSelf) {
  EXPECT_TRUE(allPairsSendsTo(allPairs(Coll::Send, 3, 1, 1), 1));
  EXPECT_TRUE(allPairsRecvsFrom(allPairs(Coll::Recv, 3, 1, 1), 1));
  EXPECT_FALSE(allPairsSendsTo(allPairs(Coll::Send, 3, 1, 2), 0));
  EXPECT_FALSE(allPairsRecvsFrom(allPairs(Coll::Send, 3, 1, 2), 2));
}

namespace {

struct FakeGpuComm {
  ncclComm comm;
  FakeGpuComm(int n, bool net) {
    comm.rank = 0;
    comm.nranks = n;
    comm.cudaDev = 0;
    comm.gpuNet = net;
  }
};

OpDesc opOf(OpKind kind, size_t bytes) {
  OpDesc op;
  op.kind = kind;
  op.datatype = ncclFloat32;
  op.count = bytes / 4;
  op.root = 1;
  return op;
}

class ProtoEnv : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("NCCL_PROTO");
    unsetenv("NCCL_ALGO");
    unsetenv("MCCL_LL_MAX_BYTES");
    unsetenv("MCCL_LL128_MAX_BYTES");
    unsetenv("NCCL_MAX_NCHANNELS");
    unsetenv("MCCL_SIMPLE_UNITS");
    unsetenv("MCCL_SIMPLE_UNIT_STEPS");
    unsetenv("MCCL_LL128_TWO_SHOT");
    unsetenv("MCCL_P2P_BLOCK_BOTH_WAYS");
    unsetenv("NCCL_NTHREADS");
    unsetenv("MCCL_LL_MAX_CHANNELS");
    unsetenv("MCCL_LL_CHANNEL_BYTES");
    knobsReload();
  }
  static void set(const char* k, const char* v) {
    setenv(k, v, 1);
    knobsReload();
  }
};

}  // namespace

TEST_F(ProtoEnv, SmallMessagesOnOneNodeUseLl) {
  FakeGpuComm two(2, false);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 8), 1 << 19).proto, Proto::LL);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::Send, 4096), 1 << 19).proto, Proto::LL);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 256u << 20), 1 << 19).proto, Proto::Simple);
  // The thresholds count the bytes the busiest rank sends: (n - 1) copies of one-shot data,
  // against limits measured on two ranks and raised on more (LL n / 2, LL128 n - 1 times).
  FakeGpuComm eight(8, false);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 512u << 10), 1 << 19).proto, Proto::LL);
  EXPECT_EQ(choosePlan(&eight.comm, opOf(OpKind::AllReduce, 512u << 10), 1 << 19).proto, Proto::LL128);
  EXPECT_EQ(choosePlan(&eight.comm, opOf(OpKind::AllReduce, 4u << 20), 1 << 19).proto, Proto::LL128);  // two hops
  EXPECT_EQ(choosePlan(&eight.comm, opOf(OpKind::AllReduce, 8u << 20), 1 << 19).proto, Proto::Simple);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 1u << 20), 1 << 19).proto, Proto::LL128);
  EXPECT_EQ(choosePlan(&eight.comm, opOf(OpKind::AllGather, 1u << 20), 1 << 19).proto, Proto::Simple);
}

// Four ranks (4 x H100, bench/results/gpu-4x-2026-11-27 call 2, each protocol forced): the
// all-pairs protocols keep sizes that the two-rank limits would give to a three-step ring.
TEST_F(ProtoEnv, MoreRanksKeepTheAllPairsProtocolsLonger) {
  FakeGpuComm four(4, false);
  auto proto = [&](OpKind k, size_t bytes) { return choosePlan(&four.comm, opOf(k, bytes), 1 << 19).proto; };
  EXPECT_EQ(proto(OpKind::AllReduce, 256u << 10), Proto::LL);
  EXPECT_EQ(proto(OpKind::AllReduce, 512u << 10), Proto::LL128);
  EXPECT_EQ(proto(OpKind::AllReduce, 1u << 20), Proto::LL128);
  EXPECT_EQ(proto(OpKind::AllReduce, 2u << 20), Proto::LL128);  // two hops: 1.5 times the data sent
  EXPECT_EQ(proto(OpKind::AllReduce, 4u << 20), Proto::Simple);
  EXPECT_EQ(proto(OpKind::AllGather, 128u << 10), Proto::LL);  // bytes a rank
  EXPECT_EQ(proto(OpKind::AllGather, 512u << 10), Proto::LL128);
  EXPECT_EQ(proto(OpKind::AllGather, 1u << 20), Proto::Simple);
  EXPECT_EQ(proto(OpKind::ReduceScatter, 256u << 10), Proto::LL);
  EXPECT_EQ(proto(OpKind::ReduceScatter, 512u << 10), Proto::Simple);
  EXPECT_EQ(proto(OpKind::Reduce, 256u << 10), Proto::LL);
  EXPECT_EQ(proto(OpKind::Reduce, 512u << 10), Proto::Simple);
  EXPECT_EQ(proto(OpKind::Broadcast, 256u << 10), Proto::LL);
  EXPECT_EQ(proto(OpKind::Broadcast, 512u << 10), Proto::Simple);
  // Point-to-point: one message, the two-rank limits, but Sends and Recvs both ways (an
  // AlltoAll's, every peer's at once) keep LL to 128 KiB (LL's doubled bytes on links that
  // more peers share: measured only on two ranks).
  EXPECT_EQ(proto(OpKind::Send, 128u << 10), Proto::LL);
  EXPECT_EQ(proto(OpKind::Send, (128u << 10) + 4), Proto::LL128);
  EXPECT_EQ(proto(OpKind::Send, 1u << 20), Proto::LL128);
  EXPECT_EQ(proto(OpKind::Send, 2u << 20), Proto::Simple);
  // Without LL128, LL's crossover with Simple is the two-rank one.
  set("NCCL_PROTO", "LL,Simple");
  EXPECT_EQ(proto(OpKind::AllReduce, 512u << 10), Proto::LL);
  EXPECT_EQ(proto(OpKind::AllReduce, 1u << 20), Proto::Simple);
}

// LL128 AllReduce in two hops (DevWork::twoShot): by default on four ranks or more from
// 1 MiB (where it measured faster), at every size of more than two ranks under
// MCCL_LL128_TWO_SHOT=2, never under 0; its traffic, 2 (n - 1) / n of the data, is what the
// LL128 limit weighs.
TEST_F(ProtoEnv, Ll128AllReduceTwoShotOnMoreThanTwoRanks) {
  auto plan = [](const FakeGpuComm& c, OpDesc op) { return choosePlan(&c.comm, op, 1 << 19); };
  FakeGpuComm two(2, false), three(3, false), four(4, false), eight(8, false);
  EXPECT_TRUE(plan(four, opOf(OpKind::AllReduce, 1u << 20)).twoShot);
  EXPECT_TRUE(plan(four, opOf(OpKind::AllReduce, 2u << 20)).twoShot);
  EXPECT_FALSE(plan(four, opOf(OpKind::AllReduce, 512u << 10)).twoShot);  // one hop: LL128
  EXPECT_EQ(plan(four, opOf(OpKind::AllReduce, 512u << 10)).proto, Proto::LL128);
  EXPECT_FALSE(plan(four, opOf(OpKind::AllReduce, 4u << 20)).twoShot);  // Simple
  EXPECT_TRUE(plan(eight, opOf(OpKind::AllReduce, 1u << 20)).twoShot);
  EXPECT_FALSE(plan(three, opOf(OpKind::AllReduce, 1u << 20)).twoShot);
  set("NCCL_PROTO", "LL128");
  EXPECT_FALSE(plan(two, opOf(OpKind::AllReduce, 1u << 20)).twoShot);  // the same bytes either way
  for (OpKind k : {OpKind::ReduceScatter, OpKind::AllGather, OpKind::Reduce, OpKind::Broadcast})
    EXPECT_FALSE(plan(four, opOf(k, 1u << 20)).twoShot);
  set("MCCL_LL128_TWO_SHOT", "2");
  OpDesc op = opOf(OpKind::AllReduce, 64u << 10);
  EXPECT_FALSE(plan(two, op).twoShot);
  EXPECT_TRUE(plan(four, op).twoShot);
  EXPECT_TRUE(plan(three, op).twoShot);  // 16384 = 3 * 5461 + 1: the last element one hop
  op.count = 3;
  EXPECT_TRUE(plan(three, op).twoShot);
  op.count = 2;  // fewer elements than ranks
  EXPECT_FALSE(plan(three, op).twoShot);
  set("MCCL_LL128_TWO_SHOT", "0");
  EXPECT_FALSE(plan(four, opOf(OpKind::AllReduce, 1u << 20)).twoShot);
  unsetenv("NCCL_PROTO");
  knobsReload();
  EXPECT_EQ(plan(four, opOf(OpKind::AllReduce, 2u << 20)).proto, Proto::Simple);  // one hop: 3 times the data
  set("MCCL_LL128_TWO_SHOT", "1");
  set("NCCL_PROTO", "LL,Simple");  // not LL128: never two hops
  EXPECT_FALSE(plan(four, opOf(OpKind::AllReduce, 1u << 20)).twoShot);
  EXPECT_FALSE(plan(four, opOf(OpKind::AllReduce, 64u << 20)).twoShot);
}

// On one node a GPU communicator's Simple collectives run the ring and the chain (the tree
// and the binomial schedule lost at every size measured); NCCL_ALGO still picks them, and
// host communicators and those over the network keep the model's choice.
TEST_F(ProtoEnv, OneNodeGpuCommunicatorsRunTheRingAndTheChain) {
  for (int n : {3, 4, 8}) {
    FakeGpuComm gpu(n, false);
    for (size_t bytes : {size_t{8}, size_t{64} << 10, size_t{2} << 20, size_t{64} << 20}) {
      set("NCCL_PROTO", "Simple");
      EXPECT_EQ(choosePlan(&gpu.comm, opOf(OpKind::AllReduce, bytes), 1 << 19).algo, Algo::Ring) << n << " " << bytes;
      EXPECT_EQ(choosePlan(&gpu.comm, opOf(OpKind::Broadcast, bytes), 1 << 19).algo, Algo::Chain) << n << " " << bytes;
      EXPECT_EQ(choosePlan(&gpu.comm, opOf(OpKind::Reduce, bytes), 1 << 19).algo, Algo::Chain) << n << " " << bytes;
      set("NCCL_ALGO", "Tree");
      EXPECT_EQ(choosePlan(&gpu.comm, opOf(OpKind::AllReduce, bytes), 1 << 19).algo, Algo::Tree);
      EXPECT_EQ(choosePlan(&gpu.comm, opOf(OpKind::Broadcast, bytes), 1 << 19).algo, Algo::Binomial);
      unsetenv("NCCL_ALGO");
      knobsReload();
    }
  }
  FakeGpuComm net(4, true);
  EXPECT_EQ(choosePlan(&net.comm, opOf(OpKind::AllReduce, 8), 1 << 19).algo, Algo::Tree);
  EXPECT_EQ(choosePlan(&net.comm, opOf(OpKind::Broadcast, 8), 1 << 19).algo, Algo::Binomial);
  unsetenv("NCCL_PROTO");
  knobsReload();
}

// The measured crossovers (2 x H100, 2026-11-25; point-to-point 2 x H200, 2026-11-26;
// Broadcast 2 x H200, 2026-11-26h; ReduceScatter and two ranks' Sends and Recvs both ways
// 2 x H200, 2026-11-28e, after the LL reads were batched; AllGather's second LL range
// 2026-11-28f; bytes sent per rank): LL, LL128 where it wins (AllGather, point-to-point,
// and AllReduce at 1 MiB), on two ranks LL again where LL128 loses (AllGather), Simple.
TEST_F(ProtoEnv, ProtocolThresholdsFollowTheMeasuredCrossovers) {
  FakeGpuComm two(2, false);
  struct Edge {
    OpKind k;
    size_t llMax, ll128Max;  // 0: no LL128
    size_t llAgainMax;       // LL again above LL128, up to this (0: none)
  };
  for (const Edge& e :
       {Edge{OpKind::AllReduce, 512u << 10, 1u << 20, 0}, Edge{OpKind::ReduceScatter, 512u << 10, 0, 0},
        Edge{OpKind::Reduce, 512u << 10, 0, 0}, Edge{OpKind::AllGather, 256u << 10, 512u << 10, 1u << 20},
        Edge{OpKind::Broadcast, 512u << 10, 0, 0}, Edge{OpKind::Send, 512u << 10, 1u << 20, 0},
        Edge{OpKind::Recv, 512u << 10, 1u << 20, 0}}) {
    const int k = static_cast<int>(e.k);
    auto proto = [&](size_t bytes) { return choosePlan(&two.comm, opOf(e.k, bytes), 1 << 19).proto; };
    EXPECT_EQ(proto(e.llMax), Proto::LL) << k;
    size_t last = e.llMax;
    if (e.ll128Max) {
      EXPECT_EQ(proto(e.llMax + 4), Proto::LL128) << k;
      EXPECT_EQ(proto(e.ll128Max), Proto::LL128) << k;
      last = e.ll128Max;
    }
    if (e.llAgainMax) {
      EXPECT_EQ(proto(last + 4), Proto::LL) << k;
      EXPECT_EQ(proto(e.llAgainMax), Proto::LL) << k;
      last = e.llAgainMax;
    }
    EXPECT_EQ(proto(last + 4), Proto::Simple) << k;
  }
  // LL's second range is a two-rank one (four ranks: MoreRanksKeepTheAllPairsProtocolsLonger),
  // and MCCL_LL_MAX_BYTES, where set, is LL's whole range.
  set("MCCL_LL_MAX_BYTES", "256K");
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllGather, 1u << 20), 1 << 19).proto, Proto::Simple);
  unsetenv("MCCL_LL_MAX_BYTES");
  knobsReload();
  // A Gather's or Scatter's Sends and Recvs (one way): LL to 512 KiB a peer, then Simple.
  for (OpKind k : {OpKind::Send, OpKind::Recv}) {
    OpDesc oneWay = opOf(k, 512u << 10);
    oneWay.call = P2pCall::Gather;
    EXPECT_EQ(choosePlan(&two.comm, oneWay, 1 << 19).proto, Proto::LL);
    oneWay.count += 1;
    EXPECT_EQ(choosePlan(&two.comm, oneWay, 1 << 19).proto, Proto::Simple);
    // Both ends decide alike, and forcing a protocol still holds.
    set("NCCL_PROTO", "LL128");
    EXPECT_EQ(choosePlan(&two.comm, oneWay, 1 << 19).proto, Proto::LL128);
    unsetenv("NCCL_PROTO");
    knobsReload();
  }
  // fp8 reductions never take LL128 (the kernels have none); fp8 data movement may.
  OpDesc fp8 = opOf(OpKind::AllReduce, 4096);
  fp8.datatype = ncclFloat8e4m3;
  fp8.count = 4096;
  OpDesc fp8Mid = fp8;  // where other types take LL128: LL up to its crossover with Simple
  fp8Mid.count = 1u << 20;
  EXPECT_EQ(choosePlan(&two.comm, fp8Mid, 1 << 19).proto, Proto::LL);
  fp8Mid.count = 4u << 20;
  EXPECT_EQ(choosePlan(&two.comm, fp8Mid, 1 << 19).proto, Proto::Simple);
  set("NCCL_PROTO", "LL128");
  EXPECT_EQ(choosePlan(&two.comm, fp8, 1 << 19).proto, Proto::LL);
  fp8.kind = OpKind::AllGather;
  EXPECT_EQ(choosePlan(&two.comm, fp8, 1 << 19).proto, Proto::LL128);
  set("NCCL_PROTO", "");
  set("MCCL_LL128_MAX_BYTES", "32M");
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::Broadcast, 16u << 20), 1 << 19).proto, Proto::LL128);
  set("MCCL_LL_MAX_BYTES", "8388608");
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::Broadcast, 4u << 20), 1 << 19).proto, Proto::LL);
  // Without LL128, LL keeps its crossover with Simple (AllReduce 2 MiB, the others 1 MiB).
  unsetenv("MCCL_LL_MAX_BYTES");
  unsetenv("MCCL_LL128_MAX_BYTES");
  set("NCCL_PROTO", "LL,Simple");
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 2u << 20), 1 << 19).proto, Proto::LL);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 4u << 20), 1 << 19).proto, Proto::Simple);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::Broadcast, 1u << 20), 1 << 19).proto, Proto::LL);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::Broadcast, 2u << 20), 1 << 19).proto, Proto::Simple);
}

TEST_F(ProtoEnv, LlNeedsIpcPeersAndAtMostEightRanksForCollectives) {
  FakeGpuComm net(2, true);
  EXPECT_EQ(choosePlan(&net.comm, opOf(OpKind::AllReduce, 8), 1 << 19).proto, Proto::Simple);
  FakeGpuComm nine(9, false);
  EXPECT_EQ(choosePlan(&nine.comm, opOf(OpKind::AllReduce, 8), 1 << 19).proto, Proto::Simple);
  EXPECT_EQ(choosePlan(&nine.comm, opOf(OpKind::Send, 8), 1 << 19).proto, Proto::LL);
  ncclComm host;
  host.nranks = 2;
  EXPECT_EQ(choosePlan(&host, opOf(OpKind::AllReduce, 8), 1 << 19).proto, Proto::Simple);
}

TEST_F(ProtoEnv, NcclProtoAndThresholdKnobs) {
  FakeGpuComm two(2, false);
  set("NCCL_PROTO", "Simple");
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 8), 1 << 19).proto, Proto::Simple);
  set("NCCL_PROTO", "^LL");  // LL128 stays allowed, as in NCCL
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 8), 1 << 19).proto, Proto::LL128);
  set("NCCL_PROTO", "^LL,LL128");
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 8), 1 << 19).proto, Proto::Simple);
  set("NCCL_PROTO", "LL");  // the only protocol allowed: every size
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 1u << 30), 1 << 19).proto, Proto::LL);
  set("NCCL_PROTO", "LL128");
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 8), 1 << 19).proto, Proto::LL128);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 1u << 30), 1 << 19).proto, Proto::LL128);
  set("NCCL_PROTO", "LL,LL128");  // no Simple: LL128 above LL's threshold
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 1u << 30), 1 << 19).proto, Proto::LL128);
  set("NCCL_PROTO", "");
  set("MCCL_LL_MAX_BYTES", "4K");
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 4096), 1 << 19).proto, Proto::LL);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 8192), 1 << 19).proto, Proto::LL128);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::ReduceScatter, 8192), 1 << 19).proto, Proto::Simple);
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::Send, 8192), 1 << 19).proto, Proto::LL128);
}

TEST_F(ProtoEnv, LlChannelsGrowWithSizeWithinLimits) {
  FakeGpuComm two(2, false);
  set("MCCL_LL_MAX_BYTES", "64M");
  int last = 0;
  for (size_t bytes = 8; bytes <= (64u << 20); bytes *= 4) {
    PlanChoice c = choosePlan(&two.comm, opOf(OpKind::AllReduce, bytes), 1 << 19);
    ASSERT_EQ(c.proto, Proto::LL);
    EXPECT_GE(c.nchannels, last);
    EXPECT_GE(c.nchannels, 1);
    EXPECT_LE(c.nchannels, kLlMaxChannels);
    last = c.nchannels;
  }
  set("NCCL_MAX_NCHANNELS", "2");
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::AllReduce, 32u << 20), 1 << 19).nchannels, 2);
}

// Simple on GPUs: no more channels than NCCL takes (24; point-to-point 32 blocks both ways,
// 8 to itself), all of them for collectives from 768 KiB moved, a channel a 64 KiB for
// point-to-point; and steps small enough (not under 256 KiB) that every channel has
// kUnitsPerChannel units to take as it frees up.
TEST_F(ProtoEnv, SimpleChannelsStopAtNcclsAndStepsLeaveUnitsForEach) {
  FakeGpuComm two(2, false), eight(8, false), net(2, true);
  const size_t slot = 1 << 20;
  auto plan = [&](FakeGpuComm& c, OpKind k, size_t bytes) { return choosePlan(&c.comm, opOf(k, bytes), slot); };
  for (size_t bytes = 4u << 20; bytes <= (size_t{2} << 30); bytes *= 4)
    for (OpKind k : {OpKind::AllReduce, OpKind::AllGather, OpKind::ReduceScatter, OpKind::Broadcast, OpKind::Reduce})
      EXPECT_EQ(plan(two, k, bytes).nchannels, 24) << bytes;
  set("NCCL_PROTO", "Simple");
  for (OpKind k : {OpKind::AllReduce, OpKind::AllGather, OpKind::ReduceScatter, OpKind::Broadcast, OpKind::Reduce})
    EXPECT_EQ(plan(two, k, 1u << 20).nchannels, 24) << static_cast<int>(k);
  EXPECT_EQ(plan(two, OpKind::AllReduce, 64u << 10).nchannels, 2);
  EXPECT_EQ(plan(two, OpKind::AllReduce, 8).nchannels, 1);
  // Point-to-point: a channel a 64 KiB up to NCCL's 32, each block serving a peer both ways
  // (MCCL_P2P_BLOCK_BOTH_WAYS); without that, a channel a 128 KiB up to 24.
  EXPECT_EQ(plan(two, OpKind::Send, 1u << 20).nchannels, 16);
  EXPECT_EQ(plan(two, OpKind::Send, 2u << 20).nchannels, 32);
  EXPECT_EQ(plan(two, OpKind::Recv, size_t{1} << 30).nchannels, 32);
  EXPECT_EQ(plan(eight, OpKind::Send, size_t{1} << 30).nchannels, 8) << "64 / n a peer";
  // To itself (rank 0): a copy within the GPU, on 8 channels at most, both ends alike.
  for (OpKind k : {OpKind::Send, OpKind::Recv}) {
    OpDesc self = opOf(k, size_t{1} << 30);
    self.root = 0;
    EXPECT_EQ(choosePlan(&two.comm, self, slot).nchannels, 8);
    self.count = (256u << 10) / 4;  // 256 KiB on Simple: a channel a 64 KiB
    set("NCCL_PROTO", "Simple");
    EXPECT_EQ(choosePlan(&two.comm, self, slot).nchannels, 4);
  }
  set("MCCL_P2P_BLOCK_BOTH_WAYS", "0");
  EXPECT_EQ(plan(two, OpKind::Send, 2u << 20).nchannels, 16);
  EXPECT_EQ(plan(two, OpKind::Recv, size_t{1} << 30).nchannels, 24);
  unsetenv("MCCL_P2P_BLOCK_BOTH_WAYS");
  // Blocks of fewer than 256 threads serve one direction (no two halves of a posting warp
  // and movers): a block a channel and direction, so 24 channels as without joining.
  for (const char* threads : {"128", "255"}) {
    set("NCCL_NTHREADS", threads);
    EXPECT_EQ(plan(two, OpKind::Send, 2u << 20).nchannels, 16) << threads;
    EXPECT_EQ(plan(two, OpKind::Recv, size_t{1} << 30).nchannels, 24) << threads;
  }
  set("NCCL_NTHREADS", "256");
  EXPECT_EQ(plan(two, OpKind::Recv, size_t{1} << 30).nchannels, 32);
  unsetenv("NCCL_NTHREADS");
  unsetenv("NCCL_PROTO");
  knobsReload();
  // Large: slot-sized steps already leave 4 units a channel (2 GiB AllReduce: 1,024 of 2 MiB).
  EXPECT_EQ(plan(two, OpKind::AllReduce, size_t{2} << 30).chunk * 4, static_cast<int64_t>(slot));
  // 128 MiB AllReduce: 64 units of 2 MiB would leave channels idle; 96 of 1.33 MiB do not.
  PlanChoice c = plan(two, OpKind::AllReduce, 128u << 20);
  const int64_t count = (128 << 20) / 4;
  EXPECT_LT(c.chunk * 4, static_cast<int64_t>(slot));
  EXPECT_GE(c.chunk * 4, 256 << 10);
  EXPECT_GE(divUp(count, c.chunk * 2), kUnitsPerChannel * c.nchannels);
  // A chain's unit is one step, a ring AllGather's one step of each rank's block.
  c = plan(two, OpKind::Broadcast, 64u << 20);
  EXPECT_GE(divUp((64 << 20) / 4, c.chunk), kUnitsPerChannel * c.nchannels);
  c = plan(eight, OpKind::AllGather, 256u << 20);
  EXPECT_GE(divUp((256 << 20) / 4, c.chunk), kUnitsPerChannel * c.nchannels);
  // Too small for 256 KiB units (32 MiB AllReduce: 170 KiB each): slot-sized steps, fixed ranges.
  EXPECT_EQ(plan(two, OpKind::AllReduce, 32u << 20).chunk * 4, static_cast<int64_t>(slot));
  // Network peers (no units there) and MCCL_SIMPLE_UNITS=0 keep slot-sized steps.
  EXPECT_EQ(plan(net, OpKind::AllReduce, 128u << 20).chunk * 4, static_cast<int64_t>(slot));
  set("MCCL_SIMPLE_UNITS", "0");
  EXPECT_EQ(plan(two, OpKind::AllReduce, 128u << 20).chunk * 4, static_cast<int64_t>(slot));
}

// The bytes of a step of a float operation of `bytes` on c with FIFO slots of `slot`.
static int64_t stepBytes(FakeGpuComm& c, OpKind k, size_t bytes, size_t slot) {
  return choosePlan(&c.comm, opOf(k, bytes), slot).chunk * 4;
}

// A two-rank chain (Broadcast, Reduce) aims at 16 units a channel where the ring keeps 4,
// never below 256 KiB steps and only where 4 units a channel already needed smaller steps;
// a chain of more ranks keeps its 128 KiB steps; MCCL_SIMPLE_UNIT_STEPS sets both.
TEST_F(ProtoEnv, TwoRankChainsTakeMoreUnitsThanRings) {
  FakeGpuComm two(2, false), four(4, false);
  const size_t slot = 1 << 20;
  auto chunkBytes = [&](FakeGpuComm& c, OpKind k, size_t bytes) { return stepBytes(c, k, bytes, slot); };
  for (OpKind k : {OpKind::Broadcast, OpKind::Reduce}) {
    // 128 MiB on 24 channels: 16 units of 341.3 KiB each (4 units would be slot-sized).
    EXPECT_EQ(chunkBytes(two, k, 128u << 20), (128 << 20) / (16 * 24) / 64 * 64);
    // 32 MiB: 16 units would be 85 KiB; 256 KiB steps instead (128 units).
    EXPECT_EQ(chunkBytes(two, k, 32u << 20), 256 << 10);
    // 16 MiB: too small for 4 units of 256 KiB a channel: slot-sized steps, fixed ranges.
    EXPECT_EQ(chunkBytes(two, k, 16u << 20), static_cast<int64_t>(slot));
    // 1 GiB: 16 units of 2.7 MiB, so slot-sized steps (43 units a channel).
    EXPECT_EQ(chunkBytes(two, k, size_t{1} << 30), static_cast<int64_t>(slot));
    EXPECT_EQ(chunkBytes(four, k, 128u << 20), 128 << 10);
  }
  // The ring keeps 4 units a channel: 128 MiB AllReduce 96 units of 2 x 682.7 KiB.
  EXPECT_EQ(chunkBytes(two, OpKind::AllReduce, 128u << 20), (128 << 20) / (4 * 24 * 2) / 64 * 64);
  EXPECT_EQ(chunkBytes(two, OpKind::AllGather, 64u << 20), (64 << 20) / (4 * 24) / 64 * 64);
  set("MCCL_SIMPLE_UNIT_STEPS", "4");
  EXPECT_EQ(chunkBytes(two, OpKind::Broadcast, 128u << 20), static_cast<int64_t>(slot));
  EXPECT_EQ(chunkBytes(two, OpKind::Broadcast, 64u << 20), (64 << 20) / (4 * 24) / 64 * 64);
  set("MCCL_SIMPLE_UNIT_STEPS", "8");
  EXPECT_EQ(chunkBytes(two, OpKind::AllReduce, 128u << 20), (128 << 20) / (8 * 24 * 2) / 64 * 64);
  EXPECT_EQ(chunkBytes(four, OpKind::Broadcast, 128u << 20), 128 << 10);
}

// Two ranks' Sends and Recvs: a quarter of a channel's bytes a step (at least 256 KiB, at
// most a slot), and 128 KiB steps from 32 MiB; more ranks half a channel's;
// MCCL_SIMPLE_UNIT_STEPS sets the steps a channel instead.
TEST_F(ProtoEnv, TwoRankPointToPointStepsFineFrom32MiB) {
  FakeGpuComm two(2, false), four(4, false);
  const size_t slot = 512 << 10;
  auto chunkBytes = [&](FakeGpuComm& c, OpKind k, size_t bytes) { return stepBytes(c, k, bytes, slot); };
  for (OpKind k : {OpKind::Send, OpKind::Recv}) {
    EXPECT_EQ(chunkBytes(two, k, 16u << 20), 256 << 10);
    EXPECT_EQ(chunkBytes(two, k, (32u << 20) - 64), 256 << 10);  // 32 channels, 4 steps each: the floor
    EXPECT_EQ(chunkBytes(two, k, 32u << 20), 128 << 10);
    EXPECT_EQ(chunkBytes(two, k, size_t{1} << 30), 128 << 10);
    EXPECT_EQ(chunkBytes(four, k, 64u << 20), static_cast<int64_t>(slot));  // 16 channels, 2 steps
  }
  set("MCCL_SIMPLE_UNIT_STEPS", "2");
  EXPECT_EQ(chunkBytes(two, OpKind::Send, 32u << 20), 512 << 10);  // 32 channels, 2 steps
  EXPECT_EQ(chunkBytes(two, OpKind::Send, 64u << 20), static_cast<int64_t>(slot));
  // A block a direction (24 channels).
  set("MCCL_P2P_BLOCK_BOTH_WAYS", "0");
  set("MCCL_SIMPLE_UNIT_STEPS", "0");
  EXPECT_EQ(chunkBytes(two, OpKind::Recv, (32u << 20) - 64), 349504);  // 24 channels, 4 steps each
  set("MCCL_SIMPLE_UNIT_STEPS", "4");
  EXPECT_EQ(chunkBytes(two, OpKind::Send, 32u << 20), 349504);
  unsetenv("MCCL_P2P_BLOCK_BOTH_WAYS");
}

// Below the channel cap, LL gives a channel at most 4 KiB of each peer's data: what the lean
// LL kernel moves in one step with a line per thread (llLeanLines), 1.5-2.5 us faster than
// the general kernel.
TEST_F(ProtoEnv, LlChannelsKeepTheLeanKernelsStep) {
  FakeGpuComm two(2, false);
  for (size_t bytes = 8; bytes <= (64u << 10); bytes *= 2) {
    for (OpKind k : {OpKind::AllReduce, OpKind::Broadcast, OpKind::Reduce}) {
      PlanChoice c = choosePlan(&two.comm, opOf(k, bytes), 1 << 19);
      ASSERT_EQ(c.proto, Proto::LL) << bytes;
      EXPECT_LE((bytes + c.nchannels - 1) / c.nchannels, 4096u) << bytes << " bytes on " << c.nchannels;
      EXPECT_EQ(c.nchannels, static_cast<int>((bytes + 4095) / 4096)) << bytes;
    }
  }
}

// No LL or LL128 collective takes more channels (blocks) than NCCL's own LL collectives on
// 2 x H200 (24) unless MCCL_LL_MAX_CHANNELS asks (up to kLlMaxChannels); NCCL_MAX_NCHANNELS
// caps it further. MCCL_LL_CHANNEL_BYTES sets a channel's share below the cap.
TEST_F(ProtoEnv, LlChannelsAtMostNcclsBlocks) {
  for (int n : {2, 3, 4, 8}) {
    FakeGpuComm comm(n, false);
    int most = 0;
    for (size_t bytes = 8; bytes <= (4u << 20); bytes *= 2) {
      for (OpKind k : {OpKind::AllReduce, OpKind::AllGather, OpKind::ReduceScatter, OpKind::Broadcast, OpKind::Reduce}) {
        const PlanChoice c = choosePlan(&comm.comm, opOf(k, bytes), 1 << 19);
        if (c.proto == Proto::Simple) continue;
        EXPECT_LE(c.nchannels, 24) << n << " ranks, " << bytes << " bytes";
        EXPECT_GE(c.nchannels, 1);
        most = std::max(most, c.nchannels);
      }
    }
    EXPECT_EQ(most, 24) << n << " ranks: the cap is reached";
  }
  FakeGpuComm two(2, false);
  auto channels = [&](size_t bytes) { return choosePlan(&two.comm, opOf(OpKind::AllReduce, bytes), 1 << 19).nchannels; };
  EXPECT_EQ(channels(96u << 10), 24);
  EXPECT_EQ(channels(128u << 10), 24);
  set("MCCL_LL_MAX_CHANNELS", "32");
  EXPECT_EQ(channels(128u << 10), 32);
  set("MCCL_LL_MAX_CHANNELS", "100");  // clamped to kLlMaxChannels
  EXPECT_EQ(channels(256u << 10), kLlMaxChannels);
  set("MCCL_LL_MAX_CHANNELS", "16");
  EXPECT_EQ(channels(128u << 10), 16);
  EXPECT_EQ(channels(32u << 10), 8);
  set("NCCL_MAX_NCHANNELS", "8");
  EXPECT_EQ(channels(128u << 10), 8);
  unsetenv("NCCL_MAX_NCHANNELS");
  set("MCCL_LL_MAX_CHANNELS", "24");
  set("MCCL_LL_CHANNEL_BYTES", "8192");
  EXPECT_EQ(channels(32u << 10), 4);
  EXPECT_EQ(channels(128u << 10), 16);
  EXPECT_EQ(channels(512u << 10), 24);
  // Point-to-point keeps its own rule (4 KiB a channel, 32 / n channels, at least 4).
  EXPECT_EQ(choosePlan(&two.comm, opOf(OpKind::Send, 64u << 10), 1 << 19).nchannels, 16);
}
