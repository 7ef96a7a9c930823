// The schedules, checked by simulating every rank: each element carries the set of ranks
// that contributed to it, messages travel through FIFO queues per connection, and at the
// end every output must hold exactly the contributions the collective defines — each rank
// once, no rank twice, nothing read before it was written, and no deadlock.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/schedule.h"
#include "algorithms/schedule_dump.h"

using namespace mccl;

namespace {

struct Val {
  uint32_t mask = 0;  // ranks that contributed
  int64_t elem = -1;  // which element of the global vector
  bool valid = false;
};

Val combine(const Val& a, const Val& b, std::string* err) {
  if (!a.valid || !b.valid) *err = "combine of an unwritten value";
  else if (a.elem != b.elem) *err = "combine of different elements " + std::to_string(a.elem) + "/" + std::to_string(b.elem);
  else if (a.mask & b.mask) *err = "a rank contributed twice";
  return Val{a.mask | b.mask, a.elem, true};
}

struct Sim {
  Schedule base;
  int n;
  std::vector<std::vector<Val>> in, out;
  std::vector<std::vector<std::vector<Val>>> scratch;  // rank -> channel*lanes -> chunk
  std::map<std::tuple<int, int, int>, std::deque<std::vector<Val>>> queues;  // from,to,channel
  std::string err;

  Schedule forRank(int r) const {
    Schedule s = base;
    s.rank = r;
    return s;
  }

  std::vector<Val>* buffer(int r, Buf b, int slot) {
    if (b == Buf::Input) return &in[r];
    if (b == Buf::Output) return &out[r];
    return &scratch[r][slot];
  }

  // Tries one step; returns true if it ran.
  bool tryStep(int r, int c, int lane, int64_t i) {
    Schedule s = forRank(r);
    Step st = stepAt(s, c, lane, i);
    if (st.count == 0) return true;
    for (int k = 0; k < st.nrecv; ++k) {
      auto& q = queues[{st.recvPeer[k], r, c}];
      if (q.empty()) return false;
    }
    std::vector<Val> acc(static_cast<size_t>(st.count));
    bool have = false;
    int slot = c * 2 + lane;
    if (st.src != Buf::None) {
      auto* src = buffer(r, st.src, slot);
      for (int64_t e = 0; e < st.count; ++e) {
        int64_t idx = st.srcOffset + e;
        if (idx < 0 || idx >= static_cast<int64_t>(src->size())) {
          err = "src index out of range";
          return true;
        }
        acc[e] = (*src)[idx];
        if (!acc[e].valid) err = "read of an unwritten element (rank " + std::to_string(r) + ")";
      }
      have = true;
    }
    for (int k = 0; k < st.nrecv; ++k) {
      auto& q = queues[{st.recvPeer[k], r, c}];
      std::vector<Val> msg = std::move(q.front());
      q.pop_front();
      if (static_cast<int64_t>(msg.size()) != st.count) {
        err = "message of " + std::to_string(msg.size()) + " elements, expected " + std::to_string(st.count);
        return true;
      }
      for (int64_t e = 0; e < st.count; ++e) acc[e] = have ? combine(acc[e], msg[e], &err) : msg[e];
      have = true;
    }
    if (!have) err = "a step with neither input nor receive";
    if (st.dst != Buf::None) {
      auto* dst = buffer(r, st.dst, slot);
      for (int64_t e = 0; e < st.count; ++e) {
        int64_t idx = st.dstOffset + e;
        if (idx < 0 || idx >= static_cast<int64_t>(dst->size())) {
          err = "dst index out of range";
          return true;
        }
        (*dst)[idx] = acc[e];
      }
    }
    for (int k = 0; k < st.nsend; ++k) {
      if (st.sendPeer[k] == r) err = "send to self";
      queues[{r, st.sendPeer[k], c}].push_back(acc);
    }
    return true;
  }

  // Runs all ranks to completion; false on deadlock.
  bool run() {
    int lanes = numLanes(base);
    std::vector<int64_t> cursor(static_cast<size_t>(n * base.nchannels * lanes), 0);
    for (;;) {
      bool progressed = false, unfinished = false;
      for (int r = 0; r < n && err.empty(); ++r)
        for (int c = 0; c < base.nchannels; ++c)
          for (int l = 0; l < lanes; ++l) {
            int64_t& cur = cursor[(r * base.nchannels + c) * lanes + l];
            int64_t total = numSteps(forRank(r), c, l);
            while (cur < total && tryStep(r, c, l, cur)) {
              ++cur;
              progressed = true;
            }
            if (cur < total) unfinished = true;
          }
      if (!err.empty()) return true;
      if (!unfinished) break;
      if (!progressed) return false;
    }
    for (auto& kv : queues)
      if (!kv.second.empty()) err = "messages left unreceived";
    return true;
  }
};

uint32_t allMask(int n) { return n >= 32 ? ~0u : ((1u << n) - 1); }

void simulate(Coll coll, Algo algo, int n, int64_t count, int nch, int64_t chunk, int64_t align,
              int root, const std::vector<int32_t>* ring = nullptr,
              const std::vector<int32_t>* nodeFirst = nullptr) {
  SCOPED_TRACE(std::string(collName(coll)) + "/" + algoName(algo) + " n=" + std::to_string(n) +
               " count=" + std::to_string(count) + " ch=" + std::to_string(nch) +
               " chunk=" + std::to_string(chunk) + " root=" + std::to_string(root));
  Sim sim;
  std::vector<int32_t> pos;
  if (ring) {
    pos.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) pos[(*ring)[i]] = i;
  }
  sim.base = Schedule{coll, algo, n, 0, root, nch, count, chunk, align,
                      ring ? ring->data() : nullptr, ring ? pos.data() : nullptr,
                      nodeFirst ? static_cast<int32_t>(nodeFirst->size()) - 1 : 0,
                      nodeFirst ? nodeFirst->data() : nullptr};
  sim.n = n;
  int64_t inSize = coll == Coll::ReduceScatter ? count * n : count;
  int64_t outSize = coll == Coll::AllGather ? count * n : count;
  sim.in.assign(n, std::vector<Val>(static_cast<size_t>(inSize)));
  sim.out.assign(n, std::vector<Val>(static_cast<size_t>(outSize)));
  sim.scratch.assign(n, std::vector<std::vector<Val>>(static_cast<size_t>(nch * 2),
                                                     std::vector<Val>(static_cast<size_t>(chunk))));
  for (int r = 0; r < n; ++r)
    for (int64_t e = 0; e < inSize; ++e) {
      bool hasInput = !(coll == Coll::Broadcast && r != root);
      if (hasInput) sim.in[r][e] = Val{1u << r, e, true};
    }
  ASSERT_TRUE(sim.run()) << "deadlock";
  ASSERT_TRUE(sim.err.empty()) << sim.err;
  for (int r = 0; r < n; ++r) {
    for (int64_t e = 0; e < outSize; ++e) {
      Val want{0, e, true};
      const Val& got = sim.out[r][e];
      switch (coll) {
        case Coll::AllReduce: want.mask = allMask(n); break;
        case Coll::AllGather: want.mask = 1u << (e / count); want.elem = e % count; break;
        case Coll::ReduceScatter: want.mask = allMask(n); want.elem = r * count + e; break;
        case Coll::Broadcast: want.mask = 1u << root; break;
        case Coll::Reduce:
          if (r != root) continue;
          want.mask = allMask(n);
          break;
        default: break;
      }
      ASSERT_TRUE(got.valid) << "rank " << r << " element " << e << " never written";
      ASSERT_EQ(got.mask, want.mask) << "rank " << r << " element " << e;
      ASSERT_EQ(got.elem, want.elem) << "rank " << r << " element " << e;
    }
  }
}

const int64_t kCounts[] = {0, 1, 3, 7, 64, 1023};

}  // namespace

TEST(Schedule, RingAllReduce) {
  for (int n = 1; n <= 16; ++n)
    for (int64_t count : kCounts)
      for (int nch : {1, 3})
        for (int64_t chunk : {1, 8}) simulate(Coll::AllReduce, Algo::Ring, n, count, nch, chunk, 1, 0);
}

TEST(Schedule, RingAllReduceAligned) {
  for (int n : {2, 5, 8})
    for (int64_t count : {0, 5, 100, 1023}) simulate(Coll::AllReduce, Algo::Ring, n, count, 2, 16, 4, 0);
}

TEST(Schedule, TreeAllReduce) {
  for (int n = 1; n <= 16; ++n)
    for (int64_t count : kCounts)
      for (int nch : {1, 2, 4}) simulate(Coll::AllReduce, Algo::Tree, n, count, nch, 8, 1, 0);
}

// Random node layouts (1..n nodes of uneven sizes, ranks shuffled into the ring): the
// hierarchical tree is a tree (one root, each parent lists its child, at most two
// children), every edge between nodes starts or ends at a node's first or last rank,
// each node's ranks form a chain, and the AllReduce is exact.
std::vector<int32_t> randomNodes(int n, std::mt19937& rng) {
  std::vector<int32_t> first{0};
  while (first.back() < n) {
    int size = 1 + static_cast<int>(rng() % 4);
    first.push_back(std::min(n, first.back() + size));
  }
  return first;
}

TEST(Schedule, HierarchicalTreeIsATreeWithChainsInsideNodes) {
  std::mt19937 rng(11);
  for (int n = 1; n <= 24; ++n)
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<int32_t> ring(static_cast<size_t>(n)), pos(static_cast<size_t>(n));
      std::iota(ring.begin(), ring.end(), 0);
      std::shuffle(ring.begin(), ring.end(), rng);
      for (int i = 0; i < n; ++i) pos[ring[i]] = i;
      std::vector<int32_t> first = randomNodes(n, rng);
      Schedule s{Coll::AllReduce, Algo::Tree, n, 0, 0, 2, 100, 8, 1, ring.data(), pos.data(),
                 static_cast<int32_t>(first.size()) - 1, first.data()};
      auto nodeOf = [&](int rank) { return nodeOfPos(s, pos[rank]); };
      for (int tree = 0; tree < 2; ++tree) {
        int roots = 0;
        for (int r = 0; r < n; ++r) {
          TreeNode t = treeNodeOf(s, tree, r);
          ASSERT_LE(t.nchild, 2);
          if (t.parent < 0) {
            ++roots;
            continue;
          }
          TreeNode p = treeNodeOf(s, tree, t.parent);
          bool listed = false;
          for (int k = 0; k < p.nchild; ++k) listed |= p.child[k] == r;
          ASSERT_TRUE(listed) << "n=" << n << " tree " << tree << " rank " << r;
          if (first.size() == 2) continue;  // one node: the double binary tree over ranks
          if (nodeOf(t.parent) == nodeOf(r)) {
            ASSERT_EQ(pos[t.parent] + 1, pos[r]) << "inside a node the tree is the ring's chain";
          } else {
            ASSERT_EQ(pos[r], first[nodeOf(r)]) << "a node is entered at its first rank";
          }
        }
        ASSERT_EQ(roots, 1) << n;
      }
      // Edges between nodes: at most (nodes - 1) per tree, i.e. each tree edge once.
      for (int tree = 0; tree < 2; ++tree) {
        int cross = 0;
        for (int r = 0; r < n; ++r) {
          TreeNode t = treeNodeOf(s, tree, r);
          cross += t.parent >= 0 && nodeOf(t.parent) != nodeOf(r);
        }
        ASSERT_EQ(cross, std::max(0, static_cast<int>(first.size()) - 2));
      }
      for (int nch : {1, 2})
        simulate(Coll::AllReduce, Algo::Tree, n, trial % 2 ? 7 : 300, nch, 8, 1, 0, &ring, &first);
    }
}

TEST(Schedule, RingAllGatherAndReduceScatter) {
  for (int n = 1; n <= 16; ++n)
    for (int64_t count : {0, 1, 5, 100})
      for (int nch : {1, 2}) {
        simulate(Coll::AllGather, Algo::Ring, n, count, nch, 16, 1, 0);
        simulate(Coll::ReduceScatter, Algo::Ring, n, count, nch, 16, 1, 0);
      }
}

TEST(Schedule, ChainAndBinomialRooted) {
  for (int n = 1; n <= 16; ++n)
    for (int root : {0, n / 2, n - 1})
      for (int64_t count : {0, 1, 7, 300})
        for (Algo a : {Algo::Chain, Algo::Binomial}) {
          simulate(Coll::Broadcast, a, n, count, 2, 16, 1, root);
          simulate(Coll::Reduce, a, n, count, 2, 16, 1, root);
        }
}

TEST(Schedule, PermutedRing) {
  std::mt19937 rng(3);
  for (int n : {3, 6, 9}) {
    std::vector<int32_t> ring(static_cast<size_t>(n));
    std::iota(ring.begin(), ring.end(), 0);
    std::shuffle(ring.begin(), ring.end(), rng);
    simulate(Coll::AllReduce, Algo::Ring, n, 200, 2, 8, 1, 0, &ring);
    simulate(Coll::AllGather, Algo::Ring, n, 50, 2, 8, 1, 0, &ring);
    simulate(Coll::ReduceScatter, Algo::Ring, n, 50, 2, 8, 1, 0, &ring);
    simulate(Coll::Broadcast, Algo::Chain, n, 50, 1, 8, 1, 1, &ring);
    simulate(Coll::Reduce, Algo::Chain, n, 50, 1, 8, 1, 2, &ring);
  }
}

TEST(Schedule, TreesAreTrees) {
  // Every rank but the root has exactly one parent, which lists it as a child; the
  // double binary tree's two roots differ.
  for (int n = 1; n <= 64; ++n)
    for (int tree = 0; tree < 2; ++tree) {
      int roots = 0;
      for (int r = 0; r < n; ++r) {
        TreeNode t = dtreeNode(n, tree, r);
        if (t.parent < 0) {
          ++roots;
          continue;
        }
        TreeNode p = dtreeNode(n, tree, t.parent);
        bool listed = false;
        for (int k = 0; k < p.nchild; ++k) listed |= p.child[k] == r;
        ASSERT_TRUE(listed) << "n=" << n << " tree " << tree << " rank " << r;
      }
      ASSERT_EQ(roots, 1) << n;
    }
  for (int n = 2; n <= 64; ++n)
    for (int root = 0; root < n; ++root)
      for (int r = 0; r < n; ++r) {
        int p = binomialParent(n, root, r);
        if (p < 0) continue;
        bool listed = false;
        for (int k = 0; k < binomialNumChildren(n, root, p); ++k) listed |= binomialChild(n, root, p, k) == r;
        ASSERT_TRUE(listed) << n << " " << root << " " << r;
      }
}

TEST(Schedule, HugeCountsHaveNoOverflow) {
  // 3 * 2^30 elements: every byte offset above 2^31 elements. Sum the elements each rank
  // completes (its final steps) and the ranges must tile the whole vector.
  const int64_t count = 3ll << 30;
  for (int n : {2, 3, 7}) {
    Schedule s{Coll::AllReduce, Algo::Ring, n, 0, 0, 4, count, 1 << 20, 16, nullptr, nullptr};
    int64_t covered = 0, maxEnd = 0;
    for (int r = 0; r < n; ++r) {
      s.rank = r;
      for (int c = 0; c < s.nchannels; ++c) {
        int64_t steps = numSteps(s, c, 0);
        for (int64_t i = 0; i < steps; ++i) {
          Step st = stepAt(s, c, 0, i);
          ASSERT_GE(st.srcOffset, 0);
          ASSERT_LE(st.srcOffset + st.count, count);
          if (st.final) covered += st.count;
          maxEnd = std::max(maxEnd, st.dstOffset + st.count);
        }
      }
    }
    EXPECT_EQ(covered, count) << n;
    EXPECT_EQ(maxEnd, count) << n;
  }
  Schedule ag{Coll::AllGather, Algo::Ring, 4, 1, 0, 2, count, 1 << 22, 16, nullptr, nullptr};
  int64_t last = numSteps(ag, 1, 0) - 1;
  Step st = stepAt(ag, 1, 0, last);
  EXPECT_LE(st.dstOffset + st.count, 4 * count);
  EXPECT_GT(st.dstOffset, INT32_MAX);
}

TEST(Schedule, GoldenDump) {
  Schedule s{Coll::AllReduce, Algo::Ring, 3, 1, 0, 1, 6, 2, 1, nullptr, nullptr};
  EXPECT_EQ(dumpSchedule(s),
            "AllReduce/ring rank 1/3 root 0 count 6 chunk 2 channels 1\n"
            "  ch0 lane0: 5 steps\n"
            "    0: in[2:4) -> send 2\n"
            "    1: recv 0 + in[0:2) -> send 2\n"
            "    2: recv 0 + in[4:6) -> out[4:6) send 2 final\n"
            "    3: recv 0 -> out[2:4) send 2\n"
            "    4: recv 0 -> out[0:2)\n");
  Schedule t{Coll::AllReduce, Algo::Tree, 4, 2, 0, 1, 4, 4, 1, nullptr, nullptr};
  EXPECT_EQ(dumpSchedule(t),
            "AllReduce/tree rank 2/4 root 0 count 4 chunk 4 channels 1\n"
            "  ch0 lane0: 1 steps\n"
            "    0: recv 1 + recv 3 + in[0:4) -> send 0\n"
            "  ch0 lane1: 1 steps\n"
            "    0: recv 0 -> out[0:4) send 1 send 3\n");
  Schedule b{Coll::Broadcast, Algo::Binomial, 8, 0, 0, 1, 4, 4, 1, nullptr, nullptr};
  EXPECT_EQ(dumpSchedule(b),
            "Broadcast/binomial rank 0/8 root 0 count 4 chunk 4 channels 1\n"
            "  ch0 lane0: 2 steps\n"
            "    0: in[0:4) -> out[0:4) send 4 send 2\n"
            "    1: out[0:4) -> send 1\n");
}
