// Simple works with units (DevWork::units, kernels/work/dev_work.h), checked without a GPU: which
// works take them (unitsOf), that each collective runs in a Simple launch of its own
// whatever else a rank's group holds and the Sends and Recvs in one after those
// (launchParts), and the invariant the kernel relies on: every rank
// learns the unit word the leader names (the unit that follows) from the messages of the
// current unit, before that unit ends, for rings and chains of any size.
#ifdef MCCL_HAVE_CUDA
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/knobs.h"
#include "kernels/work/dev_work.h"
#include "kernels/plan/gpu_plan.h"

using namespace mccl;

namespace {

DevWork simpleWork(Coll coll, Algo algo, int n, int64_t count, int nchannels, int64_t chunk) {
  DevWork w{};
  w.s.coll = coll;
  w.s.algo = algo;
  w.s.nranks = n;
  w.s.rank = 0;
  w.s.root = algo == Algo::P2p ? 1 : 0;
  w.s.nchannels = nchannels;
  w.s.count = count;
  w.s.chunk = chunk;
  w.s.align = 16;
  w.proto = kProtoSimple;
  w.type = ncclFloat32;
  return w;
}

DevQueue queueOf(int peer, int channel, int send) {
  DevQueue q{};
  q.channel = static_cast<int16_t>(channel);
  q.peer = static_cast<int16_t>(peer);
  q.send = static_cast<int8_t>(send);
  return q;
}

class UnitsEnv : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("MCCL_SIMPLE_UNITS");
    unsetenv("MCCL_SIMPLE_KERNEL");
    unsetenv("MCCL_P2P_BLOCK_BOTH_WAYS");
    unsetenv("MCCL_P2P_DIRECT_RECV_THREADS");
    unsetenv("NCCL_NTHREADS");
    knobsReload();
  }
  static void set(const char* k, const char* v) {
    setenv(k, v, 1);
    knobsReload();
  }
};

}  // namespace

TEST_F(UnitsEnv, LargeRingAndChainCollectivesOverIpcTakeUnits) {
  const int64_t chunk = (1 << 20) / 4;  // a 1 MiB slot of floats
  // AllReduce on 2 ranks: a unit is a loop of 2 chunks; 24 channels need 4 units each.
  EXPECT_EQ(unitsOf(simpleWork(Coll::AllReduce, Algo::Ring, 2, (4 * 24 - 1) * 2 * chunk, 24, chunk), 4, false, false), 0);
  EXPECT_EQ(unitsOf(simpleWork(Coll::AllReduce, Algo::Ring, 2, (4 * 24 - 1) * 2 * chunk + 1, 24, chunk), 4, false, false), kUnitsOn);
  for (Coll c : {Coll::AllGather, Coll::ReduceScatter})
    EXPECT_EQ(unitsOf(simpleWork(c, Algo::Ring, 3, 96 * chunk, 24, chunk), 4, false, false), kUnitsOn);
  for (Coll c : {Coll::Broadcast, Coll::Reduce})
    EXPECT_EQ(unitsOf(simpleWork(c, Algo::Chain, 5, 96 * chunk, 24, chunk), 4, false, false), kUnitsOn);
  const DevWork big = simpleWork(Coll::AllReduce, Algo::Ring, 2, 1 << 28, 24, chunk);
  EXPECT_EQ(unitsOf(big, 4, true, false), 0) << "network peers: no unit words in a proxy's FIFO";
  EXPECT_EQ(unitsOf(big, kUnitSlots + 1, false, false), 0) << "a unit word per slot, kUnitSlots of them";
  EXPECT_EQ(unitsOf(big, kUnitSlots, false, false), kUnitsOn);
  // Sends and Recvs with another rank: known to both ends where the group allows it
  // (GpuWork::init: two ranks, at most kSmallLaunch operations with the peer), else by
  // agreement at run time; never to itself.
  for (Coll c : {Coll::Send, Coll::Recv}) {
    const DevWork p2p = simpleWork(c, Algo::P2p, 2, 1 << 28, 24, chunk);
    EXPECT_EQ(unitsOf(p2p, 4, false, false), kUnitsAgree) << "beyond two ranks: agreed at run time";
    EXPECT_EQ(unitsOf(p2p, 4, false, true), kUnitsOn);
    EXPECT_EQ(unitsOf(p2p, 4, false, false, true), 0) << "a Gather's or Scatter's: fixed ranges beyond two ranks";
    EXPECT_EQ(unitsOf(p2p, 4, false, true, true), kUnitsOn) << "... and units on two";
    // By agreement from eight units a channel (four where both ends know).
    const DevWork eight = simpleWork(c, Algo::P2p, 4, 8 * 24 * chunk, 24, chunk);
    EXPECT_EQ(unitsOf(eight, 4, false, false), kUnitsAgree);
    const DevWork seven = simpleWork(c, Algo::P2p, 4, 8 * 24 * chunk - 1 - chunk, 24, chunk);
    EXPECT_EQ(unitsOf(seven, 4, false, false), 0);
    EXPECT_EQ(unitsOf(seven, 4, false, true), kUnitsOn);
    EXPECT_EQ(unitsOf(simpleWork(c, Algo::P2p, 2, (4 * 24 - 1) * chunk, 24, chunk), 4, false, true), 0);
    DevWork self = p2p;
    self.s.root = self.s.rank;
    EXPECT_EQ(unitsOf(self, 4, false, true), 0) << "a connection to itself";
  }
  DevWork copy = simpleWork(Coll::Send, Algo::P2p, 2, 1 << 28, 24, chunk);
  copy.s.root = 0;
  copy.selfCopy = 1;
  EXPECT_EQ(unitsOf(copy, 4, false, true), 0) << "a copy into its own Recv's buffer has no connection";
  EXPECT_EQ(unitsOf(simpleWork(Coll::AllReduce, Algo::Tree, 4, 1 << 28, 24, chunk), 4, false, false), 0);
  DevWork avg = big;
  avg.postDiv = 2;  // the integer average runs in the generic kernel
  EXPECT_EQ(unitsOf(avg, 4, false, false), 0);
  DevWork ll = big;
  ll.proto = kProtoLl;
  EXPECT_EQ(unitsOf(ll, 4, false, false), 0);
  set("MCCL_SIMPLE_UNITS", "0");
  EXPECT_EQ(unitsOf(big, 4, false, false), 0);
  unsetenv("MCCL_SIMPLE_UNITS");
  set("MCCL_SIMPLE_KERNEL", "0");
  EXPECT_EQ(unitsOf(big, 4, false, false), 0) << "only the Simple kernel follows unit words";
}

// The lean LL kernel of one work takes only the communicator and the work as parameters
// (LeanOneArgs, 264 bytes against TinyArgs' 672): a launch of one small LL work whose blocks
// are its channels in order. Not two works, not blocks that are not its channels, not a work
// too large for the lean kernel's one step (those launch with a TinyArgs).
TEST(Units, LoneSmallLlWorkLaunchesWithTheCommunicatorAndTheWorkAlone) {
  DevWork ar = simpleWork(Coll::AllReduce, Algo::Ring, 2, 2, 2, 2);  // 8 bytes on 2 channels
  ar.proto = kProtoLl;
  std::vector<GpuPlan::LaunchPart> parts = launchParts({ar}, 2, -1, true);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].spec.kind, LaunchKind::LlReduce);
  EXPECT_TRUE(parts[0].spec.tiny);
  EXPECT_TRUE(parts[0].spec.leanOne);
  DevWork bc = ar;  // data movement only: the lean copy kernel
  bc.s.coll = Coll::Broadcast;
  EXPECT_TRUE(launchParts({bc}, 2, -1, true)[0].spec.leanOne);
  EXPECT_FALSE(launchParts({ar}, 2, -1, false)[0].spec.leanOne);  // queues not channels 0, 1, ...
  EXPECT_FALSE(launchParts({ar}, 3, -1, true)[0].spec.leanOne);   // a block more than its channels
  parts = launchParts({ar, bc}, 2, -1, true);                      // two works
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_TRUE(parts[0].spec.tiny);
  EXPECT_FALSE(parts[0].spec.leanOne);
  DevWork big = ar;  // 64 KiB a channel: more than one LL step (kLlPayload)
  big.s.count = 2 * (64 << 10) / 4;
  parts = launchParts({big}, 2, -1, true);
  EXPECT_TRUE(parts[0].spec.tiny);
  EXPECT_FALSE(parts[0].spec.leanOne);
}

// The lean LL kernel's two-work form (LeanTwoArgs) takes the launches of one or two small LL
// works whose blocks it can tell from the block index: a Send/Recv pair (the second work's
// blocks after the first's, in the queues' order whatever the works' order), two
// collectives (the same blocks), a collective and a Send (the Send's queues first), a work
// that a group's other queues leave blocks beyond, two Sends to one peer (its queues shared).
// Queues it cannot tell (not in channel order) take TinyArgs and the general LL kernel.
TEST(Units, SmallLlPairsLaunchWithTheirFirstBlocksAndNoQueues) {
  auto ll = [](Coll c, Algo a, int nch) {
    DevWork w = simpleWork(c, a, 2, 2, nch, 2);
    w.proto = kProtoLl;
    return w;
  };
  auto lean = [](const std::vector<DevWork>& works, const std::vector<DevQueue>& queues, int32_t first0,
                 int32_t first1) {
    std::vector<GpuPlan::LaunchPart> parts = launchParts(works, queues.size(), -1, false, &queues);
    EXPECT_EQ(parts.size(), 1u);
    if (parts.size() != 1) return;
    const LaunchSpec& spec = parts[0].spec;
    EXPECT_TRUE(spec.tiny);
    EXPECT_FALSE(spec.leanOne);
    EXPECT_TRUE(spec.leanTwo);
    EXPECT_EQ(spec.leanFirst[0], first0);
    EXPECT_EQ(spec.leanFirst[1], first1);
    EXPECT_TRUE(leanLlLaunch(spec, works.data(), static_cast<int>(works.size())));
  };
  const DevWork send = ll(Coll::Send, Algo::P2p, 2), recv = ll(Coll::Recv, Algo::P2p, 3);
  const std::vector<DevQueue> pair = {queueOf(1, 0, 1), queueOf(1, 1, 1), queueOf(1, 0, 0), queueOf(1, 1, 0),
                                      queueOf(1, 2, 0)};
  lean({send, recv}, pair, 0, 2);
  lean({recv, send}, pair, 2, 0);
  const DevWork ar = ll(Coll::AllReduce, Algo::Ring, 1), ag = ll(Coll::AllGather, Algo::Ring, 3);
  const std::vector<DevQueue> colls = {queueOf(-1, 0, 0), queueOf(-1, 1, 0), queueOf(-1, 2, 0)};
  lean({ar, ag}, colls, 0, 0);
  const std::vector<DevQueue> mixed = {queueOf(1, 0, 1), queueOf(1, 1, 1), queueOf(-1, 0, 0)};
  lean({ar, send}, mixed, 2, 0);
  lean({send, ar}, mixed, 0, 2);
  lean({ar}, mixed, 2, 0);  // the Send's blocks belong to another launch of the group
  DevWork send3 = ll(Coll::Send, Algo::P2p, 3);
  const std::vector<DevQueue> sends = {queueOf(1, 0, 1), queueOf(1, 1, 1), queueOf(1, 2, 1)};
  lean({send, send3}, sends, 0, 0);

  // Queues out of channel order, or a Recv's channel 0 missing: the general kernel.
  const std::vector<DevQueue> shuffled = {queueOf(-1, 1, 0), queueOf(-1, 0, 0), queueOf(-1, 2, 0)};
  std::vector<GpuPlan::LaunchPart> parts = launchParts({ar, ag}, shuffled.size(), -1, false, &shuffled);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_TRUE(parts[0].spec.tiny);
  EXPECT_FALSE(parts[0].spec.leanTwo);
  const std::vector<DevQueue> noRecv = {queueOf(1, 0, 1), queueOf(1, 1, 1), queueOf(1, 1, 0), queueOf(1, 2, 0)};
  EXPECT_FALSE(launchParts({send, recv}, noRecv.size(), -1, false, &noRecv)[0].spec.leanTwo);
  EXPECT_FALSE(launchParts({send, recv}, pair.size(), -1, false)[0].spec.leanTwo) << "no queues given";
  DevWork big = ar;  // more than the lean kernel's one step a channel
  big.s.count = 2 * (64 << 10) / 4;
  EXPECT_FALSE(launchParts({big, ag}, colls.size(), -1, false, &colls)[0].spec.leanTwo);
  int32_t first[2];
  EXPECT_TRUE(leanTwoLayout(&send, 1, pair, first));  // Recv's queues: no work of this launch
  EXPECT_FALSE(leanTwoLayout(&recv, 1, sends, first)) << "no queue runs the Recv";
}

TEST(Units, EachRunsInASimpleLaunchOfItsOwnFirst) {
  const int64_t chunk = (1 << 20) / 4;
  DevWork units = simpleWork(Coll::AllReduce, Algo::Ring, 2, 1 << 28, 24, chunk);
  units.units = 1;
  DevWork units2 = simpleWork(Coll::AllGather, Algo::Ring, 2, 1 << 26, 24, chunk);
  units2.units = 1;
  DevWork small = simpleWork(Coll::AllReduce, Algo::Ring, 2, 1 << 10, 1, chunk);
  DevWork tree = simpleWork(Coll::AllReduce, Algo::Tree, 2, 1 << 10, 1, chunk);  // only the generic kernel runs trees
  // One rank's group: [tree AllReduce, units AllReduce, small AllReduce, units AllGather].
  std::vector<GpuPlan::LaunchPart> parts = launchParts({tree, units, small, units2}, 24, -1);
  ASSERT_EQ(parts.size(), 3u);
  ASSERT_EQ(parts[0].works.size(), 1u);
  EXPECT_EQ(parts[0].works[0].s.coll, Coll::AllReduce);
  EXPECT_EQ(parts[0].spec.kind, LaunchKind::Simple);
  ASSERT_EQ(parts[1].works.size(), 1u);
  EXPECT_EQ(parts[1].works[0].s.coll, Coll::AllGather);
  EXPECT_EQ(parts[1].spec.kind, LaunchKind::Simple);
  ASSERT_EQ(parts[2].works.size(), 2u);
  EXPECT_EQ(parts[2].spec.kind, LaunchKind::Generic);
  // Another rank's group, without the tree: the same launches for the others.
  parts = launchParts({units, small, units2}, 24, -1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].works[0].s.coll, Coll::AllReduce);
  EXPECT_EQ(parts[1].works[0].s.coll, Coll::AllGather);
  EXPECT_EQ(parts[2].works[0].s.count, small.s.count);
  // Sends and Recvs with units: one launch for all of them, after the collectives' own,
  // wherever the calls stand in the group (the peer's order of calls may differ).
  DevWork send = simpleWork(Coll::Send, Algo::P2p, 2, 1 << 28, 24, chunk);
  send.units = 1;
  DevWork recv = simpleWork(Coll::Recv, Algo::P2p, 2, 1 << 27, 24, chunk);
  recv.units = 1;
  DevWork smallSend = simpleWork(Coll::Send, Algo::P2p, 2, 1 << 10, 1, chunk);
  parts = launchParts({send, units, smallSend, recv, small}, 24 * 3 + 1, -1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].works[0].s.coll, Coll::AllReduce);
  ASSERT_EQ(parts[1].works.size(), 2u);
  EXPECT_EQ(parts[1].works[0].s.coll, Coll::Send);
  EXPECT_EQ(parts[1].works[1].s.coll, Coll::Recv);
  EXPECT_EQ(parts[1].spec.kind, LaunchKind::Simple);
  ASSERT_EQ(parts[2].works.size(), 2u);  // the small Send and AllReduce
  // A Gather's root: its copy to itself joins the Recv's launch.
  DevWork copy = simpleWork(Coll::Send, Algo::P2p, 2, 1 << 27, 24, chunk);
  copy.s.root = 0;
  copy.selfCopy = 1;
  parts = launchParts({units, copy, recv, send}, 24 * 3, -1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].works[0].s.coll, Coll::AllReduce);
  ASSERT_EQ(parts[1].works.size(), 3u);
  EXPECT_EQ(parts[1].works[2].selfCopy, 1);
  EXPECT_EQ(parts[1].spec.kind, LaunchKind::Simple);
  // Without units the copy stays with the rest.
  parts = launchParts({copy, smallSend}, 24 * 2, -1);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].works.size(), 2u);
  // Units by agreement stay with the rest (either kernel may run them): here the generic
  // one, beside a tree.
  DevWork agreeSend = send, agreeRecv = recv;
  agreeSend.units = agreeRecv.units = kUnitsAgree;
  parts = launchParts({agreeSend, units, tree, agreeRecv}, 24 * 3 + 1, -1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].works[0].s.coll, Coll::AllReduce);
  ASSERT_EQ(parts[1].works.size(), 3u);
  EXPECT_EQ(parts[1].spec.kind, LaunchKind::Generic);
  // And in the Simple kernel where everything of the rest fits it.
  parts = launchParts({agreeSend, agreeRecv, smallSend}, 24 * 3, -1);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].works.size(), 3u);
  EXPECT_EQ(parts[0].spec.kind, LaunchKind::Simple);
  // No units: one launch, as before.
  parts = launchParts({tree, small}, 24, -1);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].works.size(), 2u);
}

// MCCL_P2P_BLOCK_BOTH_WAYS (the default): a Simple launch's Sends to a peer and Recvs from
// it on one channel share a block (kQueueBothWays); queues with works one way only,
// collectives' queues, launches that reduce and the other kernels' keep their blocks.
TEST_F(UnitsEnv, BothWaysOfAPeerShareABlockInSimpleLaunches) {
  const int64_t chunk = (1 << 20) / 4;
  DevWork send = simpleWork(Coll::Send, Algo::P2p, 3, 1 << 28, 4, chunk);
  send.units = kUnitsOn;
  DevWork recv = simpleWork(Coll::Recv, Algo::P2p, 3, 1 << 27, 3, chunk);  // three channels
  recv.units = kUnitsOn;
  DevWork toTwo = simpleWork(Coll::Send, Algo::P2p, 3, 1 << 27, 2, chunk);
  toTwo.s.root = 2;
  toTwo.units = kUnitsOn;
  std::vector<DevQueue> queues;
  auto queue = [&](int peer, int c, int send) { queues.push_back(queueOf(peer, c, send)); };
  for (int c = 0; c < 4; ++c) queue(1, c, 1);
  for (int c = 0; c < 3; ++c) queue(1, c, 0);
  for (int c = 0; c < 2; ++c) queue(2, c, 1);
  queue(-1, 0, 0);  // a collective's channel
  std::vector<GpuPlan::LaunchPart> parts = launchParts({send, recv, toTwo}, queues.size(), -1);
  ASSERT_EQ(parts.size(), 1u);
  ASSERT_EQ(parts[0].spec.kind, LaunchKind::Simple);
  set("MCCL_P2P_BLOCK_BOTH_WAYS", "0");
  joinBothWays(&parts, queues);
  EXPECT_TRUE(parts[0].queues.empty()) << "a block a direction";
  EXPECT_EQ(parts[0].spec.blocks, static_cast<int>(queues.size()));
  unsetenv("MCCL_P2P_BLOCK_BOTH_WAYS");
  knobsReload();
  joinBothWays(&parts, queues);  // the default
  ASSERT_EQ(parts[0].queues.size(), queues.size() - 3);
  EXPECT_EQ(parts[0].spec.blocks, static_cast<int>(queues.size()) - 3);
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(parts[0].queues[c].peer, 1);
    EXPECT_EQ(parts[0].queues[c].channel, c);
    EXPECT_EQ(parts[0].queues[c].send, kQueueBothWays);
  }
  EXPECT_EQ(parts[0].queues[3].send, 1) << "channel 3 sends only";
  EXPECT_EQ(parts[0].queues[3].channel, 3);
  EXPECT_EQ(parts[0].queues[4].peer, 2);
  EXPECT_EQ(parts[0].queues[4].send, 1);
  EXPECT_EQ(parts[0].queues[6].peer, -1);
  // Both directions in the generic kernel: one block each, as always.
  DevWork tree = simpleWork(Coll::AllReduce, Algo::Tree, 3, 1 << 10, 1, chunk);
  send.units = recv.units = 0;
  parts = launchParts({send, recv, tree}, queues.size(), -1);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].spec.kind, LaunchKind::Generic);
  joinBothWays(&parts, queues);
  EXPECT_TRUE(parts[0].queues.empty());
  // Nor where the launch reduces (only the data-moving kernel splits its blocks) ...
  DevWork ar = simpleWork(Coll::AllReduce, Algo::Ring, 3, 1 << 10, 1, chunk);
  parts = launchParts({send, recv, ar}, queues.size(), -1);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].spec.kind, LaunchKind::Simple);
  joinBothWays(&parts, queues);
  EXPECT_TRUE(parts[0].queues.empty());
  // ... or where a half would be too small for a posting warp and its movers.
  set("NCCL_NTHREADS", "192");
  parts = launchParts({send, recv}, queues.size(), -1);
  joinBothWays(&parts, queues);
  EXPECT_TRUE(parts[0].queues.empty());
}

// A joined block's Recv half keeps MCCL_P2P_DIRECT_RECV_THREADS (64) where every Recv of its
// queue takes the user-buffer path with an offer (the peer writes the output; the half only
// waits), and the Send half the rest; else the halves are even (DevQueue::sendWarps 0).
TEST_F(UnitsEnv, RecvHalfThatOnlyWaitsKeepsFewThreads) {
  const int64_t chunk = (1 << 20) / 4;
  DevWork send = simpleWork(Coll::Send, Algo::P2p, 2, 1 << 24, 2, chunk);
  DevWork recv = simpleWork(Coll::Recv, Algo::P2p, 2, 1 << 24, 2, chunk);
  DevWork recv2 = simpleWork(Coll::Recv, Algo::P2p, 2, 1 << 20, 1, chunk);  // channel 0 only
  send.xchg = kXchgSend;
  recv.xchg = recv2.xchg = kXchgRecv;
  int out = 0;
  std::vector<DevQueue> queues;
  for (int c = 0; c < 2; ++c) queues.push_back(queueOf(1, c, 1));
  for (int c = 0; c < 2; ++c) queues.push_back(queueOf(1, c, 0));
  auto sendWarps = [&](const std::vector<DevWork>& works) {
    std::vector<GpuPlan::LaunchPart> parts = launchParts(works, queues.size(), -1);
    EXPECT_EQ(parts.size(), 1u);
    joinBothWays(&parts, queues);
    std::vector<int> warps;
    for (const DevQueue& q : parts[0].queues) warps.push_back(q.send == kQueueBothWays ? q.sendWarps : -1);
    return std::make_pair(parts[0].spec.threads, warps);
  };
  // No offer (a plain output's first use; or the FIFO): even halves.
  auto [threads, warps] = sendWarps({send, recv});
  ASSERT_GE(threads, 2 * kPostWarpMin);
  EXPECT_EQ(warps, (std::vector<int>{0, 0}));
  recv.offer = &out;
  std::tie(threads, warps) = sendWarps({send, recv});
  const int uneven = (threads - 64) / 32;
  EXPECT_EQ(warps, (std::vector<int>{uneven, uneven}));
  // Every Recv of the queue must offer: channel 0 also runs recv2, which offers null.
  std::tie(threads, warps) = sendWarps({send, recv, recv2});
  EXPECT_EQ(warps, (std::vector<int>{0, uneven}));
  recv2.offer = &out;
  std::tie(threads, warps) = sendWarps({send, recv, recv2});
  EXPECT_EQ(warps, (std::vector<int>{uneven, uneven}));
  // The knob: other multiples of 32 (rounded down), 0 for even halves, and never a Send half
  // too small for a posting warp and movers.
  set("MCCL_P2P_DIRECT_RECV_THREADS", "100");
  std::tie(threads, warps) = sendWarps({send, recv});
  EXPECT_EQ(warps, (std::vector<int>{(threads - 96) / 32, (threads - 96) / 32}));
  set("MCCL_P2P_DIRECT_RECV_THREADS", "0");
  std::tie(threads, warps) = sendWarps({send, recv});
  EXPECT_EQ(warps, (std::vector<int>{0, 0}));
  set("MCCL_P2P_DIRECT_RECV_THREADS", std::to_string(threads - kPostWarpMin + 32).c_str());
  std::tie(threads, warps) = sendWarps({send, recv});
  EXPECT_EQ(warps, (std::vector<int>{0, 0}));
}

// Simple launches whose data is not all 16-byte aligned run the kernels with the wide
// unaligned paths (LaunchSpec::unaligned): buffers at odd addresses, or a ring AllGather's
// or ReduceScatter's blocks (count a rank) at offsets that are no multiple of 16 bytes.
TEST(Units, UnalignedSimpleLaunchesTakeTheWideKernels) {
  alignas(16) static uint8_t buf[256];
  DevWork ar = simpleWork(Coll::AllReduce, Algo::Ring, 3, 1 << 20, 2, 1 << 16);
  ar.in = buf;
  ar.out = buf + 64;
  EXPECT_FALSE(simpleWorkUnaligned(ar));
  EXPECT_FALSE(specFor({ar}, 2).unaligned);
  ar.out = buf + 66;
  EXPECT_TRUE(simpleWorkUnaligned(ar));
  LaunchSpec spec = specFor({ar}, 2);
  EXPECT_EQ(spec.kind, LaunchKind::Simple);
  EXPECT_TRUE(spec.unaligned);
  // An AllReduce's odd count: its channels' ranges and steps stay aligned (the planner's
  // align), its tail is the last bytes: the aligned kernels.
  ar.out = buf + 64;
  ar.s.count = (1 << 20) + 3;
  EXPECT_FALSE(simpleWorkUnaligned(ar));
  // Three ranks of 2^20 floats: blocks of 349525.33 elements, 349526 a rank, 1,398,104 bytes
  // (8 past a multiple of 16).
  DevWork ag = simpleWork(Coll::AllGather, Algo::Ring, 3, 349526, 2, 1 << 16);
  ag.in = buf;
  ag.out = buf + 128;
  EXPECT_TRUE(simpleWorkUnaligned(ag));
  ag.s.count = 349528;
  EXPECT_FALSE(simpleWorkUnaligned(ag));
  DevWork rs = ag;
  rs.s.coll = Coll::ReduceScatter;
  rs.s.count = 349526;
  EXPECT_TRUE(specFor({ar, rs}, 2).unaligned);  // one work is enough
  // Only Simple launches: LL works are never sent to the Simple kernels.
  DevWork ll = ar;
  ll.proto = kProtoLl;
  ll.out = buf + 1;
  EXPECT_FALSE(specFor({ll}, 2).unaligned);
}

// The steps of one unit of a ring collective as simple_kernel.cu runs them, per ring
// position: which steps receive (from the previous rank, the message it sent one step
// earlier) and send. Each send carries what the sender knows; a receive teaches the
// receiver. Every rank must know the word by its last step; the leader (position 0) knows
// it from the start. (A chain's ranks other than the head receive the unit's one message,
// which their predecessor sent after receiving it: they always learn it.)
TEST(Units, EveryRankOfARingLearnsTheNextUnitWithinTheUnit) {
  for (int n = 2; n <= 64; ++n) {
    struct Shape {
      const char* name;
      int steps;                 // steps per unit
      bool (*recv)(int k, int n);
      bool (*send)(int k, int n);
    };
    const Shape rings[] = {
        {"ring AllReduce", 2 * n - 1, [](int k, int) { return k > 0; }, [](int k, int n) { return k < 2 * n - 2; }},
        {"ring AllGather/ReduceScatter", n, [](int k, int) { return k > 0; }, [](int k, int n) { return k < n - 1; }},
    };
    for (const Shape& sh : rings) {
      std::vector<std::vector<char>> sent(n, std::vector<char>(sh.steps, 0));  // what p sent at step k knew
      std::vector<char> known(n, 0);
      known[0] = 1;
      // Lockstep order is enough: p's step k receives what p-1 sent at step k-1.
      for (int k = 0; k < sh.steps; ++k)
        for (int p = 0; p < n; ++p) {
          if (sh.recv(k, n) && sent[(p + n - 1) % n][k - 1]) known[p] = 1;
          if (sh.send(k, n)) sent[p][k] = known[p];
        }
      for (int p = 0; p < n; ++p) EXPECT_TRUE(known[p]) << sh.name << " n " << n << " position " << p;
    }
  }
}
#endif  // MCCL_HAVE_CUDA
