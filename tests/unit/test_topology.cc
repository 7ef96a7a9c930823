// The compact Topology (core/peer_info.h, issue 17): built from every rank's record or from
// one node's records and the MPI facts, it gives every rank the same ring, groups ranks
// by node, and keeps only this node's records (plus O(N) int tables for scattered
// mappings only).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/peer_info.h"

using namespace mccl;

namespace {

std::vector<PeerInfo> records(const std::vector<uint64_t>& hosts) {
  std::vector<PeerInfo> peers(hosts.size());
  for (size_t r = 0; r < hosts.size(); ++r) {
    peers[r].rank = static_cast<int>(r);
    peers[r].hostHash = hosts[r];
    peers[r].processHash = 100 + r;
    peers[r].devHash = 7;
    peers[r].liveSecret = 1000 + r;
  }
  return peers;
}

// The reference: nodes by first appearance, the ring their ranks in order, node by node.
std::vector<int> referenceRing(const std::vector<uint64_t>& hosts) {
  std::vector<uint64_t> order;
  for (uint64_t h : hosts)
    if (std::find(order.begin(), order.end(), h) == order.end()) order.push_back(h);
  std::vector<int> ring;
  for (uint64_t h : order)
    for (size_t r = 0; r < hosts.size(); ++r)
      if (hosts[r] == h) ring.push_back(static_cast<int>(r));
  return ring;
}

void checkAgainstReference(const std::vector<uint64_t>& hosts, bool arithmetic) {
  const int n = static_cast<int>(hosts.size());
  const std::vector<PeerInfo> peers = records(hosts);
  const std::vector<int> ring = referenceRing(hosts);
  for (int me = 0; me < n; ++me) {
    Topology t = Topology::fromAll(peers, me);
    ASSERT_TRUE(t.built());
    EXPECT_EQ(t.arithmetic(), arithmetic) << "rank " << me;
    EXPECT_EQ(t.liveSecret(), 1000u);
    EXPECT_EQ(t.exchangeBytes(), sizeof(PeerInfo) * static_cast<size_t>(n - 1));
    for (int p = 0; p < n; ++p) {
      EXPECT_EQ(t.ringRank(p), ring[p]) << "rank " << me << " position " << p;
      EXPECT_EQ(t.ringPos(ring[p]), p);
      EXPECT_EQ(t.onMyNode(p), hosts[p] == hosts[me]);
      EXPECT_EQ(t.sameProcess(p), p == me);
      EXPECT_EQ(t.nodeOf(p) == t.node(), hosts[p] == hosts[me]);
    }
    EXPECT_EQ(t.ringRank(-1), ring[n - 1]);
    EXPECT_EQ(t.ringVector(), std::vector<int32_t>(ring.begin(), ring.end()));
    // nodeFirst: nNodes + 1 ring positions, each node's ranks between two of them.
    ASSERT_EQ(static_cast<int>(t.nodeFirst().size()), t.nNodes() + 1);
    EXPECT_EQ(t.nodeFirst().back(), n);
    for (int k = 0; k < t.nNodes(); ++k)
      for (int p = t.nodeFirst()[k]; p < t.nodeFirst()[k + 1]; ++p) EXPECT_EQ(t.nodeOf(t.ringRank(p)), k);
    // This node's records only, in rank order, this rank among them.
    int local = 0;
    for (uint64_t h : hosts) local += h == hosts[me];
    EXPECT_EQ(t.localRanks(), local);
    EXPECT_EQ(t.me().rank, me);
    EXPECT_EQ(t.localPeers()[static_cast<size_t>(t.localRank())].rank, me);
    EXPECT_EQ(t.localPeer(me), &t.me());
    // Memory: the node's records, nodeFirst, and the fallback tables only when scattered.
    const size_t tables = arithmetic ? 0 : 3 * sizeof(int32_t) * static_cast<size_t>(n);
    EXPECT_EQ(t.memoryBytes(),
              sizeof(PeerInfo) * static_cast<size_t>(local) + sizeof(int32_t) * (t.nNodes() + 1) + tables);
  }
}

}  // namespace

TEST(Topology, NodesFromHostHashes) {
  const std::vector<uint64_t> hosts = {10, 20, 10, 30, 20};
  Topology t = Topology::fromAll(records(hosts), 4);
  EXPECT_EQ(t.nNodes(), 3);
  EXPECT_EQ(t.node(), 1);
  EXPECT_EQ(t.localRank(), 1);
  EXPECT_EQ(t.localRanks(), 2);
  EXPECT_EQ(t.maxLocalRanks(), 2);
  EXPECT_EQ(t.nodeOf(3), 2);
  EXPECT_EQ(t.nodeOf(2), 0);
  EXPECT_FALSE(t.arithmetic());
}

TEST(Topology, ContiguousNodesAreArithmetic) {
  checkAgainstReference({1, 1, 1, 1}, true);
  checkAgainstReference({1, 1, 2, 2, 3, 3}, true);
  checkAgainstReference({1, 1, 1, 2, 2, 2, 3}, true);  // the last node smaller
  checkAgainstReference({1, 2, 3, 4, 5}, true);        // one rank per node
  checkAgainstReference({5}, true);
}

TEST(Topology, ScatteredAndUnequalNodesUseTheFallbackTables) {
  checkAgainstReference({1, 2, 1, 2}, false);           // round robin
  checkAgainstReference({1, 2, 3, 1, 2, 3, 1}, false);
  checkAgainstReference({1, 2, 2, 2, 3, 3}, false);     // contiguous, a smaller node first
  checkAgainstReference({4, 4, 9, 4, 9, 9, 4, 1}, false);
}

// The MPI builder (one node's records and the facts) gives what the full exchange gives.
TEST(Topology, FromNodeMatchesFromAll) {
  for (const std::vector<uint64_t>& hosts :
       {std::vector<uint64_t>{1, 1, 2, 2, 3}, std::vector<uint64_t>{1, 2, 1, 2, 3, 3}}) {
    const int n = static_cast<int>(hosts.size());
    const std::vector<PeerInfo> peers = records(hosts);
    for (int me = 0; me < n; ++me) {
      Topology all = Topology::fromAll(peers, me);
      std::vector<PeerInfo> local;
      std::vector<int32_t> leaderOf(static_cast<size_t>(n));
      for (int r = 0; r < n; ++r) {
        if (hosts[r] == hosts[me]) local.push_back(peers[r]);
        int first = 0;
        while (hosts[first] != hosts[r]) ++first;
        leaderOf[r] = first;
      }
      Topology::Facts f;
      f.arithmetic = all.arithmetic();
      f.nodeSize = all.maxLocalRanks();
      f.nNodes = all.nNodes();
      f.liveSecret = 1000;
      Topology t = Topology::fromNode(local, n, me, f, f.arithmetic ? std::vector<int32_t>() : leaderOf);
      EXPECT_EQ(t.nNodes(), all.nNodes());
      EXPECT_EQ(t.node(), all.node());
      EXPECT_EQ(t.localRank(), all.localRank());
      EXPECT_EQ(t.localRanks(), all.localRanks());
      EXPECT_EQ(t.maxLocalRanks(), all.maxLocalRanks());
      EXPECT_EQ(t.ringVector(), all.ringVector());
      EXPECT_EQ(t.ringPosVector(), all.ringPosVector());
      EXPECT_EQ(t.nodeFirst(), all.nodeFirst());
      EXPECT_EQ(t.liveSecret(), 1000u);
    }
  }
}

TEST(Topology, ProcessSharingADeviceIsSeenEverywhere) {
  std::vector<PeerInfo> peers = records({1, 1, 2, 2});
  for (int me = 0; me < 4; ++me) EXPECT_FALSE(Topology::fromAll(peers, me).processSharesDevice());
  peers[3].processHash = peers[2].processHash;  // two ranks of one process on one device
  for (int me = 0; me < 4; ++me) EXPECT_TRUE(Topology::fromAll(peers, me).processSharesDevice());
  peers[3].devHash = 8;
  for (int me = 0; me < 4; ++me) EXPECT_FALSE(Topology::fromAll(peers, me).processSharesDevice());
}
