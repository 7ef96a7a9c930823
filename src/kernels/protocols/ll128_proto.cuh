// The LL128 protocol: medium messages between GPUs of one node.
//
// The same all-pairs, one-hop exchange as LL (ll_proto.cuh: which rank sends what to whom,
// reduction in rank order, credits, step counters), in 128-byte lines instead of 16-byte
// ones. Eight consecutive threads of a warp own a line: thread l of the group holds words
// 2l and 2l + 1, and the group's last thread puts the step's flag in word 15 in place of
// data, so a line carries 15 words (120 bytes) of payload. The group writes its line with
// one 16-byte store per thread, issued together by the warp; NVLink delivers such a line
// whole, so a reader that sees the flag also sees the line's data. A reader loads its
// lines with one 16-byte load per thread and the warp reloads them until every group's
// flag thread sees the step's flag (__any_sync); the LL128 kernels read several peers'
// lines at once (ll128RecvBatch).
//
// Payload word k of line i of a step is the 8 bytes at 120 i + 8 k of the step's bytes,
// so user data is read and written in place with 8-byte accesses (no shared memory).
// A warp moves 4 lines per access; each thread keeps U lines in flight.
#pragma once

#include <stdint.h>

#include "kernels/protocols/ll_proto.cuh"

namespace mccl {

constexpr int kLl128Unroll = 2;  // the generic kernel's lines in flight per thread in copies (2 words each)

// Which payload words of a line a thread holds, and where its lines lie in a step.
struct Ll128Lane {
  int sub;        // 0..7: the thread's place in its line's group
  bool flagger;   // sub == 7: word 1 is the flag
  int first;      // the thread's first line of an access round
  int stride;     // lines between a thread's consecutive lines (4 per warp, all warps)
  __device__ __forceinline__ Ll128Lane() {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    sub = lane & 7;
    flagger = sub == 7;
    first = warp * 4 + (lane >> 3);
    stride = nwarps * 4;
  }
};

__device__ __forceinline__ void ll128Store(uint64_t* p, uint64_t a, uint64_t b) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
__device__ __forceinline__ void ll128Load(const uint64_t* p, uint64_t& a, uint64_t& b) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

// Step s of a channel's range, in 120-byte lines.
struct Ll128Step {
  uint64_t off, len;
  int lines;
  __device__ __forceinline__ Ll128Step(const LlRange& rg, uint64_t s) {
    off = rg.off + s * kLl128Payload;
    len = rg.off + rg.len - off < kLl128Payload ? rg.off + rg.len - off : kLl128Payload;
    lines = static_cast<int>((len + kLl128DataWords * 8 - 1) / (kLl128DataWords * 8));
  }
  // Bytes of payload word k of line i (0 past the end).
  __device__ __forceinline__ int wordBytes(int i, int k) const {
    const uint64_t b = static_cast<uint64_t>(i) * (kLl128DataWords * 8) + 8 * static_cast<uint64_t>(k);
    return b >= len ? 0 : (len - b >= 8 ? 8 : static_cast<int>(len - b));
  }
  __device__ __forceinline__ uint64_t wordOff(int i, int k) const {
    return off + static_cast<uint64_t>(i) * (kLl128DataWords * 8) + 8 * static_cast<uint64_t>(k);
  }
};

// What an LL128 loop moves: the work's own collective, count and buffers, or one phase of
// a two-shot AllReduce (ll128TwoShot): its ReduceScatter, then its AllGather.
struct Ll128View {
  Coll coll;
  int64_t count;  // elements of one rank's block (AllGather, ReduceScatter) or of the message
  const uint8_t* in;
  uint8_t* out;
  __device__ __forceinline__ explicit Ll128View(const DevWork& w)
      : coll(w.s.coll), count(w.s.count), in(static_cast<const uint8_t*>(w.in)), out(static_cast<uint8_t*>(w.out)) {}
  __device__ __forceinline__ Ll128View(Coll c, int64_t n, const uint8_t* i, uint8_t* o) : coll(c), count(n), in(i), out(o) {}
};

__device__ __forceinline__ LlRange ll128Range(const DevWork& w, const Ll128View& v, int ch) {
  LlRange r = llRange(w, v.count, typeBytes(w.type), ch);
  r.nsteps = (r.len + kLl128Payload - 1) / kLl128Payload;
  return r;
}

// A thread's two words of U lines: v[u][0..1] (the flag thread's word 1 is unused).
template <int U>
struct Ll128Words {
  uint64_t v[U][2];
};

// Loads a thread's words of its U lines of round `round` from src (through f).
template <int U, typename F>
__device__ __forceinline__ void ll128LoadWords(Ll128Words<U>& w, const uint8_t* src, const Ll128Step& st,
                                               const Ll128Lane& ln, int round, F f) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int i = ln.first + (round * U + u) * ln.stride;
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int word = 2 * ln.sub + k;
      const int nb = (i < st.lines && word < kLl128DataWords) ? st.wordBytes(i, word) : 0;
      w.v[u][k] = nb ? f(load8(src + st.wordOff(i, word), nb)) : 0;
    }
  }
}

template <int U>
__device__ __forceinline__ void ll128StoreWords(const Ll128Words<U>& w, uint8_t* dst, const Ll128Step& st,
                                                const Ll128Lane& ln, int round) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int i = ln.first + (round * U + u) * ln.stride;
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int word = 2 * ln.sub + k;
      const int nb = (i < st.lines && word < kLl128DataWords) ? st.wordBytes(i, word) : 0;
      if (nb) store8(dst + st.wordOff(i, word), w.v[u][k], nb);
    }
  }
}

// Sends a thread's part of its U lines of round `round` of step s to peer P (after the
// credit for the slot). Lines past the step's end are not written.
template <int U>
__device__ __forceinline__ void ll128SendLines(const LlPeer& P, uint64_t s, const Ll128Step& st, const Ll128Lane& ln,
                                               int round, const Ll128Words<U>& w, const DevComm* comm, int* abort, int r) {
  const uint64_t step = P.sendStep + s;
  if (step >= static_cast<uint64_t>(kLlSlots) && P.credit < step + 1 - kLlSlots)
    llWaitCredit(P.sendHead, step + 1 - kLlSlots, comm, abort, r);
  uint64_t* base = reinterpret_cast<uint64_t*>(P.sendSlots) + (step % kLlSlots) * (kLl128Lines * kLl128LineWords);
  const uint64_t flag = step + 1;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int i = ln.first + (round * U + u) * ln.stride;
    if (i < st.lines) ll128Store(base + i * kLl128LineWords + 2 * ln.sub, w.v[u][0], ln.flagger ? flag : w.v[u][1]);
  }
}

// Reads a thread's part of its U lines of round `round` of step s from peer P: the warp
// reloads until every line's flag is the step's. False when the work stopped (abort,
// timeout, or another thread of the block stopped). Every thread of the warp must call it.
template <int U>
__device__ __forceinline__ bool ll128RecvLines(const LlPeer& P, uint64_t s, const Ll128Step& st, const Ll128Lane& ln,
                                               int round, Ll128Words<U>& w, const DevComm* comm, int* abort, int r) {
  const uint64_t step = P.recvStep + s;
  const uint64_t* base = reinterpret_cast<const uint64_t*>(P.recvSlots) + (step % kLlSlots) * (kLl128Lines * kLl128LineWords);
  const uint64_t flag = step + 1;
  uint64_t start = 0;
  for (uint32_t spins = 0;; ++spins) {
    bool stale = false;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = ln.first + (round * U + u) * ln.stride;
      if (i < st.lines) {
        ll128Load(base + i * kLl128LineWords + 2 * ln.sub, w.v[u][0], w.v[u][1]);
        stale = stale || (ln.flagger && w.v[u][1] != flag);
      }
    }
    if (!__any_sync(0xffffffffu, stale)) return true;
    if (spins == kSpinsPerCheck) {
      spins = 0;
      bool stop = *reinterpret_cast<volatile int*>(abort) != 0;
      if (!stop && (threadIdx.x & 31) == 0 && waitShouldStop(*comm, &start, r)) {
        *reinterpret_cast<volatile int*>(abort) = 1;
        stop = true;
      }
      if (__any_sync(0xffffffffu, stop)) return false;
    }
  }
}

// ll128RecvLines for B peers at once: a thread's part of its U lines of round `round` of step
// s from the peers in slots slot0 .. slot0 + B - 1 of sh.peer whose bits are set in `want`
// (v[j] for slot0 + j). Read one peer after the other, each peer costs a memory round trip
// even when every line has arrived: the check of one peer's flags comes before the next
// peer's loads in program order, and volatile loads never move above it (four ranks: three
// round trips a round where one is enough). Here every wanted line's load is issued back to
// back, then all are checked, then only the stale peers' lines reloaded, together, until
// none is. The stale set is the warp's (__any_sync), so the warp stays converged. rank0 >= 0
// names the peer of every slot (point-to-point: slot 0 is the work's peer); else slot j is
// rank slot0 + j. False when the work was stopped (every thread of the warp must call it).
template <int U, int B>
__device__ __forceinline__ bool ll128RecvBatch(const LlShared& sh, int slot0, uint32_t want, int rank0, uint64_t s,
                                               const Ll128Step& st, const Ll128Lane& ln, int round,
                                               Ll128Words<U> (&v)[B], const DevComm* comm, int* abort) {
  uint32_t stale = want;
  uint64_t start = 0;
  for (uint32_t spins = 0;; ++spins) {
#pragma unroll
    for (int j = 0; j < B; ++j) {
      if (!(stale >> j & 1)) continue;
      const LlPeer& P = sh.peer[slot0 + j];
      const uint64_t* base = reinterpret_cast<const uint64_t*>(P.recvSlots) +
                             ((P.recvStep + s) % kLlSlots) * (kLl128Lines * kLl128LineWords);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = ln.first + (round * U + u) * ln.stride;
        if (i < st.lines) ll128Load(base + i * kLl128LineWords + 2 * ln.sub, v[j].v[u][0], v[j].v[u][1]);
      }
    }
    uint32_t left = 0;
#pragma unroll
    for (int j = 0; j < B; ++j) {
      if (!(stale >> j & 1)) continue;
      const uint64_t flag = sh.peer[slot0 + j].recvStep + s + 1;
      bool bad = false;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = ln.first + (round * U + u) * ln.stride;
        bad = bad || (i < st.lines && ln.flagger && v[j].v[u][1] != flag);
      }
      if (__any_sync(0xffffffffu, bad)) left |= 1u << j;
    }
    stale = left;
    if (!stale) return true;
    if (spins == kSpinsPerCheck) {
      spins = 0;
      bool stop = *reinterpret_cast<volatile int*>(abort) != 0;
      if (!stop && (threadIdx.x & 31) == 0) {
        const int j = __ffs(stale) - 1;
        if (waitShouldStop(*comm, &start, rank0 >= 0 ? rank0 : slot0 + j)) {
          *reinterpret_cast<volatile int*>(abort) = 1;
          stop = true;
        }
      }
      if (__any_sync(0xffffffffu, stop)) return false;
    }
  }
}

// Rounds of U lines per thread that cover a step.
__device__ __forceinline__ int ll128Rounds(const Ll128Step& st, const Ll128Lane& ln, int U) {
  const int perRound = ln.stride * U;
  return (st.lines + perRound - 1) / perRound;
}

// AllReduce, ReduceScatter and Reduce with an arithmetic policy (LlTyped), pipelined as in
// llReduceLoop: step s + 1 is sent before step s is received. U lines in flight per thread:
// a round of U lines costs about one load latency whatever U is, so U is what a kernel's
// registers allow (the generic kernel: 1; the LL128 kernels of ll_kernel.cu: more). B ranks'
// lines are read at once (ll128RecvBatch; the generic kernel: 1, one peer after the other).
template <typename Policy, int U, int B = 1>
__device__ __forceinline__ bool ll128ReduceLoop(const DevComm* commP, const DevWork* wP, const Ll128View& view, int ch,
                                                LlShared* shP) {
  const DevComm& comm = *commP;
  const DevWork& w = *wP;
  LlShared& sh = *shP;
  const Policy red(w);
  const LlRange rg = ll128Range(w, view, ch);
  if (rg.nsteps == 0) return true;
  const int n = comm.nranks, me = comm.rank;
  const Coll coll = view.coll;
  const bool receives = coll != Coll::Reduce || me == w.s.root;
  const uint8_t* in = view.in;
  uint8_t* out = view.out;
  const uint8_t* ownSrc = in + (coll == Coll::ReduceScatter ? static_cast<uint64_t>(me) * rg.total : 0);
  auto pre = [&red](uint64_t v) { return red.pre(v); };
  int* const abort = &sh.abort;
  const Ll128Lane ln;
  LlProf prof(comm, shP);
  auto sendStep = [&](uint64_t s, bool prefetched, Ll128Words<U>& own) {
    const Ll128Step st(rg, s);
    const int rounds = ll128Rounds(st, ln, U);
    for (int k = 0; k < rounds; ++k) {
      if (!prefetched || k != 0) ll128LoadWords(own, ownSrc, st, ln, k, pre);
      for (int r = 0; r < n; ++r) {
        if (!llSendsTo(w, r)) continue;
        if (coll == Coll::ReduceScatter) {
          Ll128Words<U> v;
          ll128LoadWords(v, in + static_cast<uint64_t>(r) * rg.total, st, ln, k, pre);
          ll128SendLines(sh.peer[r], s, st, ln, k, v, commP, abort, r);
        } else {
          ll128SendLines(sh.peer[r], s, st, ln, k, own, commP, abort, r);
        }
      }
    }
  };
  Ll128Words<U> own;
  ll128LoadWords(own, ownSrc, Ll128Step(rg, 0), ln, 0, pre);
  llSetup(comm, w, ch, sh);
  prof.mark(kProfLlSetup);
  sendStep(0, true, own);
  for (uint64_t s = 0; s < rg.nsteps; ++s) {
    if (s + 1 < rg.nsteps) sendStep(s + 1, false, own);
    prof.mark(kProfLlSend);
    const Ll128Step st(rg, s);
    if (receives) {
      const int rounds = ll128Rounds(st, ln, U);
      for (int k = 0; k < rounds; ++k) {
        ll128LoadWords(own, ownSrc, st, ln, k, pre);
        typename Policy::Acc acc[U][2];
        bool ok = true;
        if constexpr (B == 1) {
          for (int r = 0; r < n; ++r) {
            // A copy, not a reference chosen at run time: that would put both in local memory.
            Ll128Words<U> v = own;
            if (r != me) ok = ll128RecvLines(sh.peer[r], s, st, ln, k, v, commP, abort, r) && ok;
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
              for (int j = 0; j < 2; ++j) {
                if (r == 0) red.first(acc[u][j], v.v[u][j]);
                else red.add(acc[u][j], v.v[u][j]);
              }
          }
        } else {
          // B ranks' lines at a time, the peers' loads all in flight (ll128RecvBatch).
          for (int r0 = 0; r0 < n; r0 += B) {
            Ll128Words<U> v[B];
            uint32_t want = 0;
#pragma unroll
            for (int b = 0; b < B; ++b)
              if (r0 + b < n && r0 + b != me) want |= 1u << b;
            ok = ll128RecvBatch<U, B>(sh, r0, want, -1, s, st, ln, k, v, commP, abort) && ok;
#pragma unroll
            for (int b = 0; b < B; ++b) {
              const int r = r0 + b;
              if (r >= n) break;
              if (r == me) v[b] = own;
#pragma unroll
              for (int u = 0; u < U; ++u)
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                  if (r == 0) red.first(acc[u][j], v[b].v[u][j]);
                  else red.add(acc[u][j], v[b].v[u][j]);
                }
            }
          }
        }
        if (!ok) break;
        Ll128Words<U> res;
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int j = 0; j < 2; ++j) res.v[u][j] = red.finish(acc[u][j]);
        ll128StoreWords(res, out, st, ln, k);
      }
    }
    prof.mark(kProfLlRecv);
    if (!llEndStep(comm, w, sh, s, rg.nsteps)) return false;
    prof.mark(kProfLlEnd);
    prof.step(st.len);
  }
  prof.flush();
  return true;
}

// A two-shot AllReduce (DevWork::twoShot): a ReduceScatter that leaves this rank's block of
// the result in its place in the output, then an AllGather of that block from there, each
// all pairs and one hop, on the same connections. A rank sends 2 (n - 1) / n of the data
// where the one-shot form sends n - 1 times all of it, for a second hop's latency. Each
// channel gathers the part of the block it reduced (the same range of the same count), so
// its block's barrier at the end of the ReduceScatter's last step orders the two. The
// count's last count % n elements (blocks are equal) are reduced one-shot after them.
//
// A work's phases: a two-shot AllReduce's ReduceScatter, AllGather and (where the count
// leaves a rest) one-shot AllReduce of the rest; any other work is one phase, itself.
// ll128Phase gives phase i's view and whether it reduces (reduces: the work's collective
// does). The kernels run the phases in one loop, so each loop is inlined once.
__device__ __forceinline__ int ll128Phases(const DevComm* comm, const DevWork* w) {
  if (!w->twoShot) return 1;
  return w->s.count % comm->nranks == 0 ? 2 : 3;
}
__device__ __forceinline__ bool ll128Phase(const DevComm* comm, const DevWork* w, int i, bool reduces, Ll128View* v) {
  if (!w->twoShot) {
    *v = Ll128View(*w);
    return reduces;
  }
  const int n = comm->nranks;
  const int64_t block = w->s.count / n, rest = w->s.count - block * n;
  const uint64_t esize = typeBytes(w->type), blockBytes = static_cast<uint64_t>(block) * esize;
  const uint8_t* const in = static_cast<const uint8_t*>(w->in);
  uint8_t* const out = static_cast<uint8_t*>(w->out);
  uint8_t* const mine = out + static_cast<uint64_t>(comm->rank) * blockBytes;
  const uint64_t tail = blockBytes * static_cast<uint64_t>(n);
  switch (i) {
    case 0: *v = Ll128View(Coll::ReduceScatter, block, in, mine); return true;
    case 1: *v = Ll128View(Coll::AllGather, block, mine, out); return false;
    default: *v = Ll128View(Coll::AllReduce, rest, in + tail, out + tail); return true;
  }
}

// The phases of a two-shot work in order: reduce(view) and copy(view) run one
// (ll128ReduceLoop, ll128CopyLoop).
template <typename Reduce, typename Copy>
__device__ __forceinline__ bool ll128TwoShot(const DevComm* comm, const DevWork* w, Reduce&& reduce, Copy&& copy) {
  const int phases = ll128Phases(comm, w);
  for (int i = 0; i < phases; ++i) {
    Ll128View v(*w);
    const bool ok = ll128Phase(comm, w, i, true, &v) ? reduce(v) : copy(v);
    if (!ok) return false;
  }
  return true;
}

// AllGather, Broadcast, Send and Recv: data movement only, U lines in flight per thread, B
// peers read at once (as ll128ReduceLoop).
template <int U, int B = 1>
__device__ __forceinline__ bool ll128CopyLoop(const DevComm* commP, const DevWork* wP, const Ll128View& view, int ch,
                                              LlShared* shP) {
  const DevComm& comm = *commP;
  const DevWork& w = *wP;
  LlShared& sh = *shP;
  const LlRange rg = ll128Range(w, view, ch);
  if (rg.nsteps == 0) return true;
  const int n = comm.nranks, me = comm.rank;
  const Coll coll = view.coll;
  const bool p2p = llIsP2p(w);
  const uint8_t* in = view.in;
  uint8_t* out = view.out;
  const bool hasSrc = coll == Coll::AllGather || coll == Coll::Send || (coll == Coll::Broadcast && me == w.s.root);
  uint8_t* localDst = nullptr;
  if (coll == Coll::AllGather) localDst = out + static_cast<uint64_t>(me) * rg.total;
  if (coll == Coll::Broadcast && me == w.s.root) localDst = out;
  if (localDst == in) localDst = nullptr;  // in place
  auto same = [](uint64_t v) { return v; };
  int* const abort = &sh.abort;
  const Ll128Lane ln;
  LlProf prof(comm, shP);
  auto sendStep = [&](uint64_t s, bool prefetched, Ll128Words<U>& own) {
    const Ll128Step st(rg, s);
    const int rounds = ll128Rounds(st, ln, U);
    for (int k = 0; k < rounds; ++k) {
      if (!prefetched || k != 0) ll128LoadWords(own, in, st, ln, k, same);
      if (p2p) {
        ll128SendLines(sh.peer[0], s, st, ln, k, own, commP, abort, w.s.root);
      } else {
        for (int r = 0; r < n; ++r)
          if (r != me) ll128SendLines(sh.peer[r], s, st, ln, k, own, commP, abort, r);
      }
      if (localDst) ll128StoreWords(own, localDst, st, ln, k);
    }
  };
  Ll128Words<U> own;
  if (hasSrc) ll128LoadWords(own, in, Ll128Step(rg, 0), ln, 0, same);
  llSetup(comm, w, ch, sh);
  prof.mark(kProfLlSetup);
  if (hasSrc) sendStep(0, true, own);
  for (uint64_t s = 0; s < rg.nsteps; ++s) {
    if (hasSrc && s + 1 < rg.nsteps) sendStep(s + 1, false, own);
    prof.mark(kProfLlSend);
    const Ll128Step st(rg, s);
    const int rounds = ll128Rounds(st, ln, U);
    if constexpr (B == 1) {
      for (int r = 0; r < (p2p ? 1 : n); ++r) {
        const int peer = p2p ? w.s.root : r;
        if (!llRecvsFrom(w, peer)) continue;
        uint8_t* dst = out + (coll == Coll::AllGather ? static_cast<uint64_t>(peer) * rg.total : 0);
        for (int k = 0; k < rounds; ++k) {
          Ll128Words<U> v;
          if (!ll128RecvLines(sh.peer[r], s, st, ln, k, v, commP, abort, peer)) break;
          ll128StoreWords(v, dst, st, ln, k);
        }
      }
    } else {
      // B peers' lines at a time, their loads all in flight (ll128RecvBatch).
      const int slots = p2p ? 1 : n;
      bool ok = true;
      for (int r0 = 0; r0 < slots && ok; r0 += B) {
        uint32_t want = 0;
#pragma unroll
        for (int b = 0; b < B; ++b)
          if (r0 + b < slots && llRecvsFrom(w, p2p ? w.s.root : r0 + b)) want |= 1u << b;
        for (int k = 0; k < rounds && want; ++k) {
          Ll128Words<U> v[B];
          ok = ll128RecvBatch<U, B>(sh, r0, want, p2p ? w.s.root : -1, s, st, ln, k, v, commP, abort);
          if (!ok) break;
#pragma unroll
          for (int b = 0; b < B; ++b) {
            if (!(want >> b & 1)) continue;
            const int peer = p2p ? w.s.root : r0 + b;
            ll128StoreWords(v[b], out + (coll == Coll::AllGather ? static_cast<uint64_t>(peer) * rg.total : 0), st, ln, k);
          }
        }
      }
    }
    prof.mark(kProfLlRecv);
    if (!llEndStep(comm, w, sh, s, rg.nsteps)) return false;
    prof.mark(kProfLlEnd);
    prof.step(st.len);
  }
  prof.flush();
  return true;
}

// The generic kernel's LL128: one line in flight per thread in reductions (two, for the
// 2-byte and 1-byte types whose accumulators are floats, put its stack over
// MCCL_KERNEL_STACK_BUDGET), two in copies; of a two-shot work the kernel calls the phases
// one after the other (llRun: so the 1-byte types' kernels take 992 bytes of stack a thread
// where 840 were before; nested in one more function, or inlined into one, the phases took
// 1,056 and 1,264, over the budget).
static __device__ __noinline__ bool ll128CopyWork(const DevComm* comm, const DevWork* w, const Ll128View* v, int ch,
                                                  LlShared* sh) {
  return ll128CopyLoop<kLl128Unroll>(comm, w, *v, ch, sh);
}
template <typename Policy>
__device__ __noinline__ bool ll128ReduceWork(const DevComm* comm, const DevWork* w, const Ll128View* v, int ch,
                                             LlShared* sh) {
  return ll128ReduceLoop<Policy, 1>(comm, w, *v, ch, sh);
}

}  // namespace mccl
