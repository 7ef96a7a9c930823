// Schedules: which chunk a rank sends, receives, reduces or copies at each step of a
// collective, on which channel, from pure rank arithmetic. No I/O, no allocation: the
// same functions compile for the host (host engine, tests, dumps) and for the device
// (GPU kernels), so both executors follow one schedule.
//
// Vocabulary
//   channel  an independent slice of the data with its own connections (one CUDA block
//            on the GPU); channels split the buffer into contiguous ranges.
//   lane     an independent stream of steps inside a channel (the tree's reduce-up and
//            broadcast-down run as two lanes); most schedules have one lane.
//   step     one chunk through one primitive: combine the local input and up to two
//            received messages, then write the output buffer and/or send to up to two
//            peers. NCCL's primitives are special cases:
//              send              = src              -> send
//              recvReduceSend    = src + recv       -> send
//              recvReduceCopySend= src + recv       -> dst + send   (final)
//              recvCopySend      = recv             -> dst + send
//              recv              = recv             -> dst
//   chunk    at most `chunk` elements: one FIFO slot of a connection.
//
// All counts and offsets are 64-bit: counts above 2^31 elements are fine.
#pragma once

#include <stdint.h>

#if defined(__CUDACC__)
#define MCCL_HD __host__ __device__ __forceinline__
#else
#define MCCL_HD inline
#endif

namespace mccl {

enum class Coll : uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, Send, Recv };
enum class Algo : uint8_t {
  Ring,      // ring AllReduce (reduce-scatter + all-gather), AllGather, ReduceScatter
  Tree,      // double binary tree AllReduce (reduce up, broadcast down)
  Chain,     // pipelined chain along the ring for Broadcast and Reduce
  Binomial,  // binomial tree Broadcast and Reduce (latency)
  P2p,       // Send / Recv
};

// Which connections a schedule uses (connections are per peer, channel, direction, class).
// Ll and LlP2p are the GPU LL protocol's connections (small slots of flagged lines) for
// collectives and for Send/Recv; Ll128 and Ll128P2p the LL128 protocol's.
enum class ConnClass : uint8_t { Ring = 0, Tree = 1, P2p = 2, Ll = 3, LlP2p = 4, Ll128 = 5, Ll128P2p = 6 };
constexpr int kNumConnClasses = 7;

// The GPU LL protocol's all-pairs collectives: every rank exchanges with every other one,
// on at most this many ranks, over at most this many channels.
constexpr int kLlMaxRanks = 8;
constexpr int kLlMaxChannels = 32;

// Buffers a step reads its local contribution from or writes to.
enum class Buf : uint8_t { None = 0, Input = 1, Output = 2, Scratch = 3 };

constexpr int kMaxStepPeers = 2;

struct Step {
  int64_t srcOffset;  // element offset in src buffer
  int64_t dstOffset;  // element offset in dst buffer
  int64_t count;      // elements (0: nothing moves; both sides skip the step)
  int32_t recvPeer[kMaxStepPeers];
  int32_t sendPeer[kMaxStepPeers];
  uint8_t nrecv;
  uint8_t nsend;
  Buf src;            // local contribution (None: only received data)
  Buf dst;            // where the result is stored (None: only sent)
  bool final;         // the result is complete: apply the post-op (integer average)
};

struct Schedule {
  Coll coll;
  Algo algo;
  int32_t nranks;
  int32_t rank;
  int32_t root;       // Broadcast/Reduce root; Send/Recv peer
  int32_t nchannels;
  int64_t count;      // AllReduce/Broadcast/Reduce: whole vector; AllGather/ReduceScatter:
                      // per rank; Send/Recv: the message
  int64_t chunk;      // elements per step (one FIFO slot)
  int64_t align;      // chunk boundaries are multiples of this many elements
  const int32_t* ring;     // position -> rank (nullptr: identity)
  const int32_t* ringPos;  // rank -> position (nullptr: identity)
  int32_t nnodes;             // nodes (hosts); the ring holds each node's ranks together
  const int32_t* nodeFirst;   // nnodes + 1 ring positions: node k is [nodeFirst[k], nodeFirst[k+1])
                              // (nullptr, or nnodes <= 1: one node)
};

// ---- Small helpers -----------------------------------------------------------------------

MCCL_HD int64_t divUp(int64_t a, int64_t b) { return (a + b - 1) / b; }
MCCL_HD int64_t roundUp(int64_t a, int64_t b) { return divUp(a, b) * b; }
MCCL_HD int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
MCCL_HD int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
MCCL_HD int mod(int a, int n) { return ((a % n) + n) % n; }

MCCL_HD int ringRank(const Schedule& s, int pos) { return s.ring ? s.ring[mod(pos, s.nranks)] : mod(pos, s.nranks); }
MCCL_HD int ringPosOf(const Schedule& s, int rank) { return s.ringPos ? s.ringPos[rank] : rank; }

MCCL_HD ConnClass connClassOf(Algo a) {
  return (a == Algo::Ring || a == Algo::Chain) ? ConnClass::Ring
         : a == Algo::P2p                      ? ConnClass::P2p
                                               : ConnClass::Tree;
}

MCCL_HD Step makeStep(Buf src, Buf dst, int64_t srcOff, int64_t dstOff, int64_t count) {
  Step s;
  s.srcOffset = srcOff;
  s.dstOffset = dstOff;
  s.count = count < 0 ? 0 : count;
  s.recvPeer[0] = s.recvPeer[1] = -1;
  s.sendPeer[0] = s.sendPeer[1] = -1;
  s.nrecv = s.nsend = 0;
  s.src = src;
  s.dst = dst;
  s.final = false;
  return s;
}
MCCL_HD void addRecv(Step* s, int peer) { s->recvPeer[s->nrecv++] = peer; }
MCCL_HD void addSend(Step* s, int peer) { s->sendPeer[s->nsend++] = peer; }

// The element range of channel c: contiguous slices, boundaries aligned.
MCCL_HD void channelRange(int64_t total, int nchannels, int64_t align, int c, int64_t* off, int64_t* cnt) {
  int64_t per = roundUp(divUp(total, nchannels), align);
  int64_t o = min64(per * c, total);
  *off = o;
  *cnt = min64(per, total - o);
}

// ---- Trees -------------------------------------------------------------------------------

// A balanced binary tree over positions 0..n-1 laid out in order: a node's level is the
// lowest set bit of its position; the children of node x with lowest bit b are x - b/2
// and the first of x + b/2, x + b/4, ... that exists. Position 0 is the root; its single
// child is the largest power of two below n.
struct TreeNode {
  int parent;    // -1 at the root
  int child[2];  // -1 when absent
  int nchild;
};

MCCL_HD int lowBit(int x) { return x & -x; }

MCCL_HD int highestPow2Below(int n) {  // largest power of two < n (n >= 2)
  int p = 1;
  while (p * 2 < n) p *= 2;
  return p;
}

MCCL_HD TreeNode binaryTreeNode(int n, int x) {
  TreeNode t;
  t.parent = -1;
  t.child[0] = t.child[1] = -1;
  t.nchild = 0;
  if (n <= 1) return t;
  const int top = highestPow2Below(n);
  if (x == 0) {
    t.child[t.nchild++] = top;
    return t;
  }
  const int b = lowBit(x);
  if (b > 1) {
    t.child[t.nchild++] = x - b / 2;  // always below n
    for (int d = b / 2; d >= 1; d /= 2)
      if (x + d < n) {
        t.child[t.nchild++] = x + d;
        break;
      }
  }
  if (x == top) {
    t.parent = 0;
    return t;
  }
  // In the untruncated in-order tree, v is the left child of v + bb when bit 2bb of v is
  // clear, else the right child of v - bb. A missing parent (>= n) was replaced by its
  // subtree, so keep climbing from it.
  int v = x, bb = b;
  for (;;) {
    int up = (v & (2 * bb)) == 0 ? v + bb : v - bb;
    if (up < n) {
      t.parent = up;
      break;
    }
    v = up;
    bb *= 2;
  }
  return t;
}

// The two trees of the double binary tree, over ranks. Tree 1 reverses the positions so
// that most ranks are a leaf in one tree and an inner node in the other (and each tree's
// root is a different rank).
MCCL_HD int dtreePosition(int n, int tree, int rank) { return tree == 0 ? rank : n - 1 - rank; }

MCCL_HD TreeNode dtreeNode(int n, int tree, int rank) {
  TreeNode t = binaryTreeNode(n, dtreePosition(n, tree, rank));
  if (tree == 1) {
    if (t.parent >= 0) t.parent = n - 1 - t.parent;
    for (int i = 0; i < t.nchild; ++i) t.child[i] = n - 1 - t.child[i];
  }
  return t;
}

// Node of ring position p.
MCCL_HD int nodeOfPos(const Schedule& s, int p) {
  int lo = 0, hi = s.nnodes - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (s.nodeFirst[mid] <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// The tree of a Tree schedule, over ranks. On one node: the double binary tree over ranks.
// On several: NCCL's shape, a double binary tree between nodes and a chain inside each node
// (ring order, first rank to last), so each tree edge between nodes is crossed once. A
// node's first rank links to its parent node and to its first child node; its last rank
// links to its second child node: no rank has more than two children. A child node hangs
// from its parent's first rank if it is the parent's first child, else from its last.
MCCL_HD TreeNode treeNodeOf(const Schedule& s, int tree, int rank) {
  if (s.nnodes <= 1 || s.nodeFirst == nullptr) return dtreeNode(s.nranks, tree, rank);
  TreeNode t;
  t.parent = -1;
  t.child[0] = t.child[1] = -1;
  t.nchild = 0;
  const int p = ringPosOf(s, rank);
  const int k = nodeOfPos(s, p);
  const int first = s.nodeFirst[k], last = s.nodeFirst[k + 1] - 1;
  const TreeNode nt = dtreeNode(s.nnodes, tree, k);
  if (p > first) {
    t.parent = ringRank(s, p - 1);
  } else if (nt.parent >= 0) {
    const TreeNode pt = dtreeNode(s.nnodes, tree, nt.parent);
    const bool firstChild = pt.nchild > 0 && pt.child[0] == k;
    t.parent = ringRank(s, firstChild ? s.nodeFirst[nt.parent] : s.nodeFirst[nt.parent + 1] - 1);
  }
  if (p == first && nt.nchild > 0) t.child[t.nchild++] = ringRank(s, s.nodeFirst[nt.child[0]]);
  if (p < last) t.child[t.nchild++] = ringRank(s, p + 1);
  if (p == last && nt.nchild > 1) t.child[t.nchild++] = ringRank(s, s.nodeFirst[nt.child[1]]);
  return t;
}

// Binomial tree rooted at `root`: over relative ranks rel = (rank - root) mod n, the
// parent of rel clears its highest set bit; children are rel + 2^k for every 2^k above
// rel's highest bit, sent largest subtree first.
MCCL_HD int highBit(int x) {
  int h = 0;
  while ((1 << (h + 1)) <= x) ++h;
  return x ? (1 << h) : 0;
}
MCCL_HD int binomialParent(int n, int root, int rank) {
  int rel = mod(rank - root, n);
  if (rel == 0) return -1;
  return mod(rel - highBit(rel) + root, n);
}
MCCL_HD int binomialNumChildren(int n, int root, int rank) {
  int rel = mod(rank - root, n);
  int first = rel ? 2 * highBit(rel) : 1;
  int c = 0;
  for (int d = first; rel + d < n; d *= 2) ++c;
  return c;
}
// i-th child, largest subtree first (i = 0 is the farthest).
MCCL_HD int binomialChild(int n, int root, int rank, int i) {
  int rel = mod(rank - root, n);
  int nc = binomialNumChildren(n, root, rank);
  int first = rel ? 2 * highBit(rel) : 1;
  int d = first << (nc - 1 - i);
  return mod(rel + d + root, n);
}

// ---- Schedule shape --------------------------------------------------------------------------

MCCL_HD int numLanes(const Schedule& s) { return s.algo == Algo::Tree ? 2 : 1; }

// Which tree a channel of a Tree schedule uses.
MCCL_HD int treeOfChannel(const Schedule& s, int c) { return s.nchannels > 1 ? (c & 1) : 0; }

// Steps the binomial schedule spends on each chunk at this rank.
MCCL_HD int binomialStepsPerChunk(const Schedule& s) {
  int nc = binomialNumChildren(s.nranks, s.root, s.rank);
  int per = (nc + 1) / 2;
  return per < 1 ? 1 : per;
}

// The range of the data a channel owns (AllGather/ReduceScatter: within each rank block).
MCCL_HD void scheduleChannelRange(const Schedule& s, int c, int64_t* off, int64_t* cnt) {
  channelRange(s.count, s.nchannels, s.align, c, off, cnt);
}

// Elements per loop iteration of a channel and the number of iterations.
MCCL_HD int64_t loopElems(const Schedule& s) {
  return s.algo == Algo::Ring && s.coll == Coll::AllReduce ? s.chunk * s.nranks : s.chunk;
}

MCCL_HD int64_t numSteps(const Schedule& s, int c, int lane) {
  int64_t off, cnt;
  scheduleChannelRange(s, c, &off, &cnt);
  int n = s.nranks;
  int64_t loops = divUp(cnt, loopElems(s));
  switch (s.algo) {
    case Algo::Ring:
      if (n == 1) return loops;
      if (s.coll == Coll::AllReduce) return loops * (2 * n - 1);
      return loops * n;  // AllGather, ReduceScatter
    case Algo::Chain:
      return loops;
    case Algo::Tree: {
      TreeNode t = treeNodeOf(s, treeOfChannel(s, c), s.rank);
      if (lane == 1 && t.parent < 0) return 0;  // the root broadcasts within its up steps
      return loops;
    }
    case Algo::Binomial:
      return loops * binomialStepsPerChunk(s);
    case Algo::P2p:
      return loops;
  }
  return 0;
}

// The i-th step of lane `lane` of channel c.
MCCL_HD Step stepAt(const Schedule& s, int c, int lane, int64_t i) {
  const int n = s.nranks;
  int64_t off, cnt;
  scheduleChannelRange(s, c, &off, &cnt);
  switch (s.algo) {
    case Algo::Ring: {
      const int p = ringPosOf(s, s.rank);
      const int prev = ringRank(s, p - 1), next = ringRank(s, p + 1);
      if (s.coll == Coll::AllReduce) {
        if (n == 1) {
          int64_t base = off + i * s.chunk;
          Step st = makeStep(Buf::Input, Buf::Output, base, base, min64(s.chunk, off + cnt - base));
          st.final = true;
          return st;
        }
        const int per = 2 * n - 1;
        int64_t loop = i / per;
        int k = static_cast<int>(i % per);
        int64_t loopSize = s.chunk * n;
        int64_t base = off + loop * loopSize;
        int64_t size = min64(loopSize, off + cnt - base);
        int64_t part = roundUp(divUp(size, n), s.align);
        int q = mod(p - k, n);  // chunk (by ring position) this step works on
        int64_t cOff = base + min64(part * q, size);
        int64_t cCnt = min64(part, base + size - cOff);
        Step st;
        if (k == 0) {
          st = makeStep(Buf::Input, Buf::None, cOff, cOff, cCnt);
          addSend(&st, next);
        } else if (k < n - 1) {
          st = makeStep(Buf::Input, Buf::None, cOff, cOff, cCnt);
          addRecv(&st, prev);
          addSend(&st, next);
        } else if (k == n - 1) {
          st = makeStep(Buf::Input, Buf::Output, cOff, cOff, cCnt);
          addRecv(&st, prev);
          addSend(&st, next);
          st.final = true;
        } else if (k < 2 * n - 2) {
          st = makeStep(Buf::None, Buf::Output, cOff, cOff, cCnt);
          addRecv(&st, prev);
          addSend(&st, next);
        } else {
          st = makeStep(Buf::None, Buf::Output, cOff, cOff, cCnt);
          addRecv(&st, prev);
        }
        return st;
      }
      // AllGather and ReduceScatter: each loop moves one chunk of every rank block.
      int64_t loop = n == 1 ? i : i / n;
      int k = n == 1 ? 0 : static_cast<int>(i % n);
      int64_t o = off + loop * s.chunk;
      int64_t len = min64(s.chunk, off + cnt - o);
      if (s.coll == Coll::AllGather) {
        // Step k carries the block of ring position p - k.
        int blockRank = ringRank(s, p - k);
        int64_t dOff = static_cast<int64_t>(blockRank) * s.count + o;
        Step st = k == 0 ? makeStep(Buf::Input, Buf::Output, o, dOff, len)
                         : makeStep(Buf::None, Buf::Output, o, dOff, len);
        if (k > 0) addRecv(&st, prev);
        if (k < n - 1) addSend(&st, next);
        return st;
      }
      // ReduceScatter: step k reduces the block of ring position p - k - 1; the last step
      // completes this rank's own block.
      int blockRank = ringRank(s, p - k - 1);
      int64_t sOff = static_cast<int64_t>(blockRank) * s.count + o;
      if (n == 1) {
        Step st = makeStep(Buf::Input, Buf::Output, o, o, len);
        st.final = true;
        return st;
      }
      Step st = makeStep(Buf::Input, k == n - 1 ? Buf::Output : Buf::None, sOff, o, len);
      if (k > 0) addRecv(&st, prev);
      if (k < n - 1) addSend(&st, next);
      st.final = k == n - 1;
      return st;
    }
    case Algo::Chain: {
      // Along the ring from the root: Broadcast flows root -> root+1 -> ...; Reduce flows
      // root+1 -> root+2 -> ... -> root.
      const int p = ringPosOf(s, s.rank);
      const int rel = mod(p - ringPosOf(s, s.root), n);
      const int prev = ringRank(s, p - 1), next = ringRank(s, p + 1);
      int64_t o = off + i * s.chunk;
      int64_t len = min64(s.chunk, off + cnt - o);
      Step st;
      if (s.coll == Coll::Broadcast) {
        if (rel == 0) st = makeStep(Buf::Input, Buf::Output, o, o, len);
        else st = makeStep(Buf::None, Buf::Output, o, o, len);
        if (rel > 0) addRecv(&st, prev);
        if (rel < n - 1) addSend(&st, next);
        return st;
      }
      // Reduce
      st = makeStep(Buf::Input, rel == 0 ? Buf::Output : Buf::None, o, o, len);
      if (n > 1 && rel != 1) addRecv(&st, prev);
      if (rel != 0) addSend(&st, next);
      st.final = rel == 0;
      return st;
    }
    case Algo::Tree: {
      TreeNode t = treeNodeOf(s, treeOfChannel(s, c), s.rank);
      int64_t o = off + i * s.chunk;
      int64_t len = min64(s.chunk, off + cnt - o);
      if (lane == 0) {
        // Reduce up: children + own input; the root completes and starts the broadcast.
        Step st = makeStep(Buf::Input, t.parent < 0 ? Buf::Output : Buf::None, o, o, len);
        for (int k = 0; k < t.nchild; ++k) addRecv(&st, t.child[k]);
        if (t.parent >= 0) {
          addSend(&st, t.parent);
        } else {
          st.final = true;
          for (int k = 0; k < t.nchild; ++k) addSend(&st, t.child[k]);
        }
        return st;
      }
      // Broadcast down (not the root).
      Step st = makeStep(Buf::None, Buf::Output, o, o, len);
      addRecv(&st, t.parent);
      for (int k = 0; k < t.nchild; ++k) addSend(&st, t.child[k]);
      return st;
    }
    case Algo::Binomial: {
      const int per = binomialStepsPerChunk(s);
      int64_t chunkIdx = i / per;
      int j = static_cast<int>(i % per);
      int64_t o = off + chunkIdx * s.chunk;
      int64_t len = min64(s.chunk, off + cnt - o);
      int nc = binomialNumChildren(n, s.root, s.rank);
      int parent = binomialParent(n, s.root, s.rank);
      if (s.coll == Coll::Broadcast) {
        // Step 0 receives (or, at the root, takes the input) and sends to the two farthest
        // children; later steps send the stored chunk to the next two.
        Step st = j == 0 ? makeStep(parent < 0 ? Buf::Input : Buf::None, Buf::Output, o, o, len)
                         : makeStep(Buf::Output, Buf::None, o, o, len);
        if (j == 0 && parent >= 0) addRecv(&st, parent);
        for (int k = 2 * j; k < 2 * j + 2 && k < nc; ++k) addSend(&st, binomialChild(n, s.root, s.rank, k));
        return st;
      }
      // Reduce: the closest (smallest) children first; partial results go through the
      // scratch chunk when more than two children contribute.
      bool last = j == per - 1;
      Step st = makeStep(j == 0 ? Buf::Input : Buf::Scratch,
                         last ? (parent < 0 ? Buf::Output : Buf::None) : Buf::Scratch,
                         j == 0 ? o : 0, last ? o : 0, len);
      for (int k = 2 * j; k < 2 * j + 2 && k < nc; ++k) addRecv(&st, binomialChild(n, s.root, s.rank, nc - 1 - k));
      if (last && parent >= 0) addSend(&st, parent);
      st.final = last && parent < 0;
      return st;
    }
    case Algo::P2p: {
      int64_t o = off + i * s.chunk;
      int64_t len = min64(s.chunk, off + cnt - o);
      if (s.coll == Coll::Send) {
        Step st = makeStep(Buf::Input, Buf::None, o, o, len);
        addSend(&st, s.root);
        return st;
      }
      Step st = makeStep(Buf::None, Buf::Output, o, o, len);
      addRecv(&st, s.root);
      return st;
    }
  }
  return makeStep(Buf::None, Buf::None, 0, 0, 0);
}

// ---- All pairs (the GPU LL protocol) -------------------------------------------------------
// Every rank sends the data a peer needs straight to that peer: whom rank s.rank sends to
// and receives from. Send/Recv: the one peer (itself included); collectives: never itself.

MCCL_HD bool allPairsSendsTo(const Schedule& s, int r) {
  switch (s.coll) {
    case Coll::AllReduce: case Coll::AllGather: case Coll::ReduceScatter: return r != s.rank;
    case Coll::Broadcast: return r != s.rank && s.rank == s.root;
    case Coll::Reduce: return r != s.rank && r == s.root;
    case Coll::Send: return r == s.root;
    case Coll::Recv: return false;
  }
  return false;
}
MCCL_HD bool allPairsRecvsFrom(const Schedule& s, int r) {
  switch (s.coll) {
    case Coll::AllReduce: case Coll::AllGather: case Coll::ReduceScatter: return r != s.rank;
    case Coll::Broadcast: return r != s.rank && r == s.root;
    case Coll::Reduce: return r != s.rank && s.rank == s.root;
    case Coll::Recv: return r == s.root;
    case Coll::Send: return false;
  }
  return false;
}

// Scratch elements a lane needs (binomial Reduce with more than two children).
MCCL_HD int64_t scratchElems(const Schedule& s) {
  if (s.algo == Algo::Binomial && s.coll == Coll::Reduce && binomialStepsPerChunk(s) > 1) return s.chunk;
  return 0;
}

}  // namespace mccl
