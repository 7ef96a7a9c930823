// The init exchange (issue 17): a rank sends its PeerInfo to every rank of its node (MPI
// exchange by node) or of the communicator (full exchange), so it must stay small; the liveness records go only to the watch peers, which must pair up (a rank waits
// for the record of each of its watch peers, so the relation has to be symmetric).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "core/comm.h"
#include "core/peer_info.h"
#include "core/watchdog.h"

using namespace mccl;

TEST(InitRecord, PeerInfoIsCompact) {
  // The whole record crosses the allgather L - 1 (by node) or N - 1 times per rank: 64 B (56 B and the host shared-memory token), was 1,200 B (a UCX
  // address slot, the host name and the watchdog address: sent lazily now).
  EXPECT_LE(sizeof(PeerInfo), 64u);
  EXPECT_EQ(sizeof(PeerInfo) % 8, 0u);
}

TEST(InitRecord, BusIdRoundTrip) {
  EXPECT_EQ(busIdString(busIdToInt64("0000:19:00.0")), "0000:19:00.0");
  EXPECT_EQ(busIdString(busIdToInt64("0000:1A:00.0")), "0000:1a:00.0");
  EXPECT_EQ(busIdString(busIdToInt64("0001:c1:1f.7")), "0001:c1:1f.7");
  EXPECT_EQ(busIdToInt64("0000:19:00.0"), 0x19000);
  EXPECT_NE(busIdToInt64("0000:19:00.0"), busIdToInt64("0000:1a:00.0"));
  EXPECT_EQ(busIdToInt64("none"), -1);
  EXPECT_EQ(busIdToInt64("unknown"), -1);
  EXPECT_EQ(busIdToInt64(""), -1);
  EXPECT_EQ(busIdToInt64(nullptr), -1);
  EXPECT_EQ(busIdString(-1), "");
}

TEST(InitRecord, UuidHash) {
  uint8_t a[16] = {0}, b[16] = {0};
  b[15] = 1;
  EXPECT_NE(uuidHash(a), 0u);  // 0 means "no device"
  EXPECT_NE(uuidHash(a), uuidHash(b));
  EXPECT_EQ(uuidHash(b), uuidHash(b));
}

TEST(InitRecord, PeerHostsLearntLazily) {
  PeerHosts h;
  EXPECT_EQ(h.name(3), "unknown");
  h.set(3, "node-a");
  h.set(4, "");  // an empty name teaches nothing
  EXPECT_EQ(h.name(3), "node-a");
  EXPECT_EQ(h.name(4), "unknown");
  EXPECT_EQ(h.known(), 1u);
}

namespace {

// Reference: the ranks of other processes at ring distance 2^k (either side) from r.
std::set<int> expectedWatch(int n, int r, const std::vector<uint64_t>& proc) {
  std::set<int> s;
  for (long d = 1; d < n; d *= 2) {
    for (int q : {static_cast<int>((r + d) % n), static_cast<int>(((r - d) % n + n) % n)})
      if (q != r && proc[q] != proc[r]) s.insert(q);
  }
  return s;
}

}  // namespace

TEST(InitRecord, WatchPeersAreSymmetricAndLogarithmic) {
  for (int ranksPerProcess : {1, 2}) {
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 31, 33, 100, 1024}) {
      ncclComm comm;
      comm.nranks = n;
      std::vector<PeerInfo> peers(static_cast<size_t>(n));
      std::vector<uint64_t> proc(static_cast<size_t>(n));
      for (int r = 0; r < n; ++r) {
        peers[r].rank = r;
        proc[r] = peers[r].processHash = 1000 + static_cast<uint64_t>(r / ranksPerProcess);
      }
      std::vector<std::set<int>> of(static_cast<size_t>(n));
      int logn = 0;
      while ((1 << logn) < n) ++logn;
      for (int r = 0; r < n; ++r) {
        comm.rank = r;
        comm.topo = Topology::fromAll(peers, r);
        std::vector<int> w = Watchdog::watchPeers(&comm);
        std::set<int> s(w.begin(), w.end());
        ASSERT_EQ(s.size(), w.size()) << "duplicates, n " << n << " rank " << r;
        EXPECT_EQ(s, expectedWatch(n, r, proc)) << "n " << n << " rank " << r;
        EXPECT_LE(static_cast<int>(w.size()), 2 * logn) << "n " << n;
        if (n <= 5 && ranksPerProcess == 1) EXPECT_EQ(static_cast<int>(w.size()), n - 1);
        of[r] = s;
      }
      for (int r = 0; r < n; ++r)
        for (int q : of[r]) EXPECT_TRUE(of[q].count(r)) << "n " << n << ": " << r << " watches " << q << ", not back";
    }
  }
}
