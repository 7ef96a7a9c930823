// How the two ends of a Send/Recv on the copy engines meet (ipc_transport/p2p_engine.h
// meetInRing), checked without a GPU: two threads play the two ranks over one pair's rings,
// running one program's operations of both directions in the same order (as matching Sends
// and Recvs come; a rank whose every direction ran the ring's length ahead in an order the
// other cannot follow would wait forever, as two NCCL streams would), each at its own pace
// (one often far ahead, so the rings fill and it waits), each offering or not at random.
// For every operation exactly one end comes first and the other second, and the second reads
// exactly what the first offered: both ends then decide alike.
#ifdef MCCL_HAVE_CUDA
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "ipc_transport/p2p_engine.h"
#include "kernels/plan/p2p_order.h"

using namespace mccl;

namespace {

struct Seen {
  int met = 0;           // 1 first, 2 second
  uint64_t offer = 0;    // what this end offered
  uint64_t theirs = 0;   // second: what it read
};

}  // namespace

TEST(P2pMeet, EveryOperationHasOneFirstAndOneSecondThatReadsItsOffer) {
  constexpr uint64_t kOps = 20000;  // per direction
  alignas(64) static unsigned char rings[kMeetRingBytes];
  std::fill(std::begin(rings), std::end(rings), 0);
  // seen[role][dir][k - 1]
  std::vector<Seen> seen[2][2];
  for (auto& r : seen)
    for (auto& d : r) d.assign(kOps, Seen{});
  std::atomic<int> outOfStep{0};
  std::vector<int> program;  // the direction of each operation, in call order
  {
    std::mt19937_64 rng(10);
    uint64_t left[2] = {kOps, kOps};
    while (left[0] + left[1] > 0) {
      int dir = static_cast<int>(rng() & 1);
      if (left[dir] == 0) dir = 1 - dir;
      left[dir]--;
      program.push_back(dir);
    }
  }
  auto end = [&](int role, unsigned seed) {
    std::mt19937_64 rng(seed);
    uint64_t next[2] = {1, 1};
    for (size_t i = 0; i < program.size(); ++i) {
      // Each end stops once for a long while (role 0 a third of the way, role 1 at two
      // thirds): the other runs past it until its rings are full, and comes first there.
      if (i == program.size() * static_cast<size_t>(role + 1) / 3) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const int dir = program[i];
      const uint64_t k = next[dir]++;
      Seen& s = seen[role][dir][k - 1];
      s.offer = (rng() % 3 == 0) ? 0 : (rng() | 1);
      int met;
      while ((met = meetInRing(rings, dir, role, k, s.offer, &s.theirs)) == 0) std::this_thread::yield();
      if (met < 0) outOfStep++;
      s.met = met;
      if (rng() % 4096 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  std::thread a(end, 0, 11u), b(end, 1, 12u);
  a.join();
  b.join();
  ASSERT_EQ(outOfStep.load(), 0);
  size_t firstsA = 0, bad = 0;
  for (int dir = 0; dir < 2; ++dir)
    for (uint64_t i = 0; i < kOps; ++i) {
      const Seen& x = seen[0][dir][i];
      const Seen& y = seen[1][dir][i];
      const bool ok = (x.met == 1 && y.met == 2 && y.theirs == x.offer) || (x.met == 2 && y.met == 1 && x.theirs == y.offer);
      if (!ok && bad++ < 5)
        ADD_FAILURE() << "direction " << dir << " operation " << i + 1 << ": met " << x.met << "/" << y.met;
      firstsA += x.met == 1;
    }
  EXPECT_EQ(bad, 0u);
  // Both orders happened (the check above is not about one end always first).
  EXPECT_GT(firstsA, 0u);
  EXPECT_LT(firstsA, 2 * kOps);
}

// An end that comes a kMeetSlots operations ahead finds the slot still taken (0: nothing
// written), and a third arrival at one operation is out of step (-1).
TEST(P2pMeet, AFullRingWaitsAndAThirdArrivalIsOutOfStep) {
  alignas(64) static unsigned char rings[kMeetRingBytes];
  std::fill(std::begin(rings), std::end(rings), 0);
  uint64_t theirs = 0;
  for (uint64_t k = 1; k <= kMeetSlots; ++k) EXPECT_EQ(meetInRing(rings, 0, 0, k, k, &theirs), 1);
  EXPECT_EQ(meetInRing(rings, 0, 0, kMeetSlots + 1, 7, &theirs), 0) << "the ring was full";
  EXPECT_EQ(meetInRing(rings, 0, 1, 1, 0, &theirs), 2);
  EXPECT_EQ(theirs, 1u);
  EXPECT_EQ(meetInRing(rings, 0, 0, kMeetSlots + 1, 7, &theirs), 1) << "slot 1 is free after its second end";
  EXPECT_EQ(meetInRing(rings, 0, 1, 2, 0, &theirs), 2);
  EXPECT_EQ(meetInRing(rings, 0, 0, 2, 5, &theirs), -1) << "a third arrival at operation 2";
  // The other direction's ring is its own.
  EXPECT_EQ(meetInRing(rings, 1, 1, 1, 9, &theirs), 1);
}

// Both ends of a transfer name the same lane (the Send's rank and the Recv's see it from
// opposite sides), its direction by the ranks' order; a user's Sends and Recvs and a
// collective's take lanes of their own, so that ranks ordering the two kinds differently in
// a group never pair one kind's Send with the other's Recv.
TEST(P2pMeet, BothEndsNameOneLaneAndAUsersAndACollectivesDiffer) {
  for (P2pCall call : {P2pCall::User, P2pCall::AlltoAll, P2pCall::Gather, P2pCall::Scatter, P2pCall::AllGather,
                       P2pCall::Broadcast})
    for (int a = 0; a < 5; ++a)
      for (int b = 0; b < 5; ++b) {
        if (a == b) continue;
        OpDesc send, recv;
        send.kind = OpKind::Send;
        send.root = b;
        send.call = call;
        recv.kind = OpKind::Recv;
        recv.root = a;
        recv.call = call;
        const int lane = meetLane(send, a);
        EXPECT_EQ(lane, meetLane(recv, b)) << "ranks " << a << " -> " << b;
        EXPECT_EQ(lane % 2, a < b ? 0 : 1) << "the direction of " << a << " -> " << b;
        EXPECT_EQ(lane >= 2, call != P2pCall::User) << p2pCallName(call);
        EXPECT_LT(lane, kMeetLanes);
      }
}

// On the FIFOs a pair's transfers match in the order each end posts them: two ranks that put
// a cut AllGather's transfers and a ring of their own Sends and Recvs in one group, in
// opposite orders, must still post them to each other in one order, the collective's first
// (madeTransfersFirst); other operations keep their places relative to their own kind.
TEST(P2pMeet, TheFifosSeeACollectivesTransfersBeforeTheUsers) {
  auto op = [](OpKind kind, int peer, P2pCall call, size_t count) {
    OpDesc d;
    d.kind = kind;
    d.root = peer;
    d.call = call;
    d.count = count;
    return d;
  };
  auto group = [&](int me, bool userFirst) {
    const int peer = 1 - me;
    std::vector<OpDesc> gather = {op(OpKind::Send, peer, P2pCall::AllGather, 10),
                                  op(OpKind::Recv, peer, P2pCall::AllGather, 10)};
    std::vector<OpDesc> ring = {op(OpKind::Send, peer, P2pCall::User, 20), op(OpKind::Recv, peer, P2pCall::User, 20),
                                op(OpKind::Send, peer, P2pCall::User, 21), op(OpKind::Recv, peer, P2pCall::User, 21)};
    std::vector<OpDesc> ops = {op(OpKind::AllReduce, -1, P2pCall::User, 30)};
    for (const auto& part : userFirst ? std::vector<std::vector<OpDesc>>{ring, gather}
                                      : std::vector<std::vector<OpDesc>>{gather, ring})
      ops.insert(ops.end(), part.begin(), part.end());
    madeTransfersFirst(&ops);
    return ops;
  };
  // What each end posts to its peer, in order: (kind, count).
  auto posted = [](const std::vector<OpDesc>& ops, OpKind kind) {
    std::vector<size_t> v;
    for (const OpDesc& d : ops)
      if (d.kind == kind) v.push_back(d.count);
    return v;
  };
  const std::vector<OpDesc> even = group(0, false), odd = group(1, true);
  EXPECT_EQ(posted(even, OpKind::Send), posted(odd, OpKind::Recv)) << "rank 0's Sends against rank 1's Recvs";
  EXPECT_EQ(posted(odd, OpKind::Send), posted(even, OpKind::Recv)) << "rank 1's Sends against rank 0's Recvs";
  EXPECT_EQ(posted(odd, OpKind::Send), (std::vector<size_t>{10, 20, 21}));
  EXPECT_EQ(odd.front().kind, OpKind::AllReduce) << "a collective keeps its place";
  // A group of the user's Sends and Recvs alone is left in its order.
  std::vector<OpDesc> mine = {op(OpKind::Recv, 1, P2pCall::User, 2), op(OpKind::Send, 1, P2pCall::User, 1)};
  madeTransfersFirst(&mine);
  EXPECT_EQ(mine[0].count, 2u);
}
#endif
