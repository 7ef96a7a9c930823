// The team arithmetic of nccl_device.h (host-and-device inline functions) against teams
// taken as explicit sets of world ranks.
#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>
#include <vector>

#include "nccl_device.h"

namespace {

// The world ranks of team t as seen from world rank me, in team order.
std::vector<int> members(ncclTeam t, int me) {
  std::vector<int> v;
  for (int i = 0; i < t.nRanks; i++) v.push_back(me + (i - t.rank) * t.stride);
  return v;
}

int indexOf(const std::vector<int>& v, int x) {
  for (size_t i = 0; i < v.size(); i++)
    if (v[i] == x) return static_cast<int>(i);
  return -1;
}

// Every (world of n ranks, this rank, inner block size) with n a multiple of the block.
template <typename F>
void forEachLayout(F f) {
  for (int n = 1; n <= 12; n++)
    for (int inner = 1; inner <= n; inner++) {
      if (n % inner != 0) continue;
      for (int me = 0; me < n; me++) {
        ncclTeam world{n, me, 1};
        f(world, me, inner);
      }
    }
}

}  // namespace

TEST(DeviceTeams, FactorsPartitionTheWorld) {
  forEachLayout([](ncclTeam world, int me, int inner) {
    ncclTeam in = ncclTeamInnerFactor(world, inner), out = ncclTeamOuterFactor(world, inner);
    std::vector<int> mi = members(in, me), mo = members(out, me);
    // inner: the block of `inner` consecutive ranks holding me; outer: my place in every block.
    for (int i = 0; i < inner; i++) EXPECT_EQ(mi[i], me / inner * inner + i);
    for (int j = 0; j < world.nRanks / inner; j++) EXPECT_EQ(mo[j], j * inner + me % inner);
    EXPECT_EQ(mi[in.rank], me);
    EXPECT_EQ(mo[out.rank], me);
  });
}

TEST(DeviceTeams, MembershipAndTranslation) {
  forEachLayout([](ncclTeam world, int me, int inner) {
    ncclTeam in = ncclTeamInnerFactor(world, inner), out = ncclTeamOuterFactor(world, inner);
    const ncclTeam teams[3] = {world, in, out};
    for (const ncclTeam& a : teams)
      for (const ncclTeam& b : teams) {
        std::vector<int> ma = members(a, me), mb = members(b, me);
        for (int bp = 0; bp < b.nRanks; bp++) {
          const int ia = indexOf(ma, mb[bp]);
          EXPECT_EQ(ncclTeamRankIsMember(a, b, bp), ia >= 0);
          if (ia >= 0) EXPECT_EQ(ncclTeamRankToTeam(a, b, bp), ia);
        }
      }
  });
}

TEST(DeviceTeams, RankInDifference) {
  forEachLayout([](ncclTeam world, int me, int inner) {
    ncclTeam in = ncclTeamInnerFactor(world, inner), out = ncclTeamOuterFactor(world, inner);
    for (const ncclTeam& sub : {in, out}) {
      std::vector<int> ms = members(sub, me), rest;
      for (int r = 0; r < world.nRanks; r++)
        if (indexOf(ms, r) < 0) rest.push_back(r);  // parent index = world rank here
      for (size_t k = 0; k < rest.size(); k++)
        EXPECT_EQ(ncclTeamRankInDifference(world, sub, static_cast<int>(k)), rest[k])
            << "n " << world.nRanks << " me " << me << " inner " << inner << " sub stride " << sub.stride;
    }
  });
}

TEST(DeviceTeams, DevCommTeams) {
  ncclDevComm c;
  std::memset(&c, 0, sizeof c);
  c.rank = 5, c.nRanks = 8, c.lsaRank = 1, c.lsaSize = 4;
  ncclTeam w = ncclTeamWorld(c), l = ncclTeamLsa(c), r = ncclTeamRail(c);
  EXPECT_EQ(w.nRanks, 8);
  EXPECT_EQ(w.rank, 5);
  EXPECT_EQ(w.stride, 1);
  EXPECT_EQ(l.nRanks, 4);
  EXPECT_EQ(l.rank, 1);
  EXPECT_EQ(l.stride, 1);
  EXPECT_EQ(r.nRanks, 2);
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.stride, 4);
  EXPECT_EQ(ncclTeamRankToWorld(c, l, 0), 4);
  EXPECT_EQ(ncclTeamRankToWorld(c, r, 0), 1);
  EXPECT_EQ(ncclTeamRankToLsa(c, w, 7), 3);
  EXPECT_EQ(ncclGetResourceBufferOffset(3), 384u);
}

// ncclSymPtr's arithmetic (host and device alike): element steps of every integer type,
// back and forth, across zero and past 2^63; conversion keeps the byte offset; differences
// count elements; equality needs the same window.
TEST(DeviceSymPtr, ArithmeticMovesByElements) {
  ncclWindow_t w = reinterpret_cast<ncclWindow_t>(uintptr_t{0x1000});
  ncclWindow_t other = reinterpret_cast<ncclWindow_t>(uintptr_t{0x2000});
  struct Elem {
    char bytes[12];
  };
  ncclSymPtr<Elem> p(w, 48);
  EXPECT_EQ(p.window, w);
  EXPECT_EQ(p.offset, 48u);
  p += 3;
  EXPECT_EQ(p.offset, 84u);
  p += 2u;
  p += 1l;
  p += 1ul;
  p += 1ll;
  p += 1ull;
  EXPECT_EQ(p.offset, 84u + 6 * 12);
  p -= 6;
  EXPECT_EQ(p.offset, 84u);
  p -= 2u;
  p -= 1l;
  p -= 1ul;
  p -= 1ll;
  p -= 1ull;
  EXPECT_EQ(p.offset, 12u);
  p += -1;  // negative steps go back
  EXPECT_EQ(p.offset, 0u);
  p -= -5;
  EXPECT_EQ(p.offset, 60u);
  // Below zero and back, as an address would wrap.
  ncclSymPtr<Elem> q = p - 10;
  EXPECT_EQ(q.offset, static_cast<size_t>(60) - 120);
  EXPECT_EQ((q + 10).offset, 60u);
  EXPECT_EQ(p - q, 10);
  EXPECT_EQ(q - p, -10);
  // Large steps (past 2^32 elements).
  ncclSymPtr<double> big(w, 0);
  big += 3000000000ll;
  EXPECT_EQ(big.offset, 24000000000ull);
  EXPECT_EQ(big - ncclSymPtr<double>(w, 8), 2999999999ll);
  // Conversion keeps the place; steps then count the new type.
  ncclSymPtr<char> c = ncclSymPtr<float>(w, 40);
  EXPECT_EQ(c.offset, 40u);
  EXPECT_EQ((c + 3).offset, 43u);
  ncclSymPtr<float> f = c + 4;
  EXPECT_EQ((f + 1).offset, 48u);
  // Equality: window and offset.
  EXPECT_TRUE(ncclSymPtr<int>(w, 8) == ncclSymPtr<int>(w, 8));
  EXPECT_FALSE(ncclSymPtr<int>(w, 8) == ncclSymPtr<int>(other, 8));
  EXPECT_TRUE(ncclSymPtr<int>(w, 8) != ncclSymPtr<int>(w, 12));
  EXPECT_FALSE(ncclSymPtr<int>(w, 8) != ncclSymPtr<int>(w, 8));
  // Default: no window, offset 0.
  ncclSymPtr<int> none;
  EXPECT_EQ(none.window, nullptr);
  EXPECT_EQ(none.offset, 0u);
  static_assert(sizeof(ncclSymPtr<int>) == 16, "a window and an offset");
  static_assert(std::is_same<ncclSymPtr<int>::ElementType, int>::value, "ElementType");
}
