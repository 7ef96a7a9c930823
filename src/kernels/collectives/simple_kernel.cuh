// The Simple kernels: launches whose every work is a Simple ring collective (AllReduce,
// AllGather, ReduceScatter), a chain along the ring (Broadcast, Reduce) or a point-to-point
// operation. Each has at most one peer to receive from and one to send to, so the schedule
// of src/algorithms is walked here with its steps written out per collective: no Step
// records, no schedule function per step, no connection cache, little on the stack (16-120
// bytes a thread: every index of the step's operands is a constant).
//
// Each arithmetic is compiled twice: for launches whose works are 16-byte aligned
// (simple_kernel.cu), and with the wide paths of unaligned data (kWide: copyUnaligned,
// combineUnaligned; simple_kernel_wide.cu), a ring AllGather's or ReduceScatter's blocks when
// the count a rank is no multiple of 16 bytes, or buffers at odd offsets. The host picks one
// per launch (LaunchSpec::unaligned). One kernel with both had its aligned loops lose
// registers (0.6-16 % slower, bench/results/gpu-2xH200-2026-11-27c).
//
// The generic kernel (coll_kernel.cuh) runs the rest (trees, binomial trees, groups that mix
// protocols, the integer average, launches of more than kSmallLaunch works). It spent about
// 4 us of a small Simple AllReduce between a block's start and its first step and 0.65-2 us
// between steps on one H100 (bench/results/gpu-1xH100-2026-11-25b), most of it computing
// the next step through 79k instructions of code with a 1 KiB stack. Both kernels follow
// the same schedule through the same connections, FIFO slots and step counters, so calls
// of either kind follow each other on a communicator.
//
// A step: thread 0 waits for the received message (the tail in this GPU's memory) while
// thread 32 waits for the send slot to be free (the head in this GPU's memory); a barrier of
// the moving threads; they move the data (simple_proto.cuh); one block barrier; the posting
// thread fences and posts the tail to the next peer, thread 0 posts the head to the previous
// one. Every thread keeps the two connections' slots in registers.
//
// A work that sends, in a block of kPostWarpMin threads or more, keeps its last warp out of
// the data (NCCL's extra Simple warp): its first thread posts the tails, and the system
// fence before each (which waits until the block's stores to the peer have landed: several
// microseconds after a 512 KiB step) runs while the other warps wait for and move the next
// step. Where every thread moved and thread 32 fenced, the block stood idle through it:
// four-rank Broadcast of 64 MiB, 24 blocks, 28.9 us moving and 11-13 us idle a 512 KiB
// step (bench/results/gpu-2xH200-2026-11-27g, calls 5-6). In the chains' 128 KiB steps,
// without the posting warp four-rank Broadcast and Reduce of 16 MiB - 1 GiB took 1.08-1.30x
// as long (4 x H100), AlltoAll 1.03-1.07x (4 x H200); two ranks within +-4 % either way
// (bench/results/gpu-2026-11-28, calls 1, 2 and 4). The posting warp is one of the block's
// threads, not one more: a launch of 544 (NCCL's 512 + 32) leaves 96 registers a thread (17
// warps, five on one SM sub-partition of 16,384 registers), where these kernels spilled
// 650-7,400 bytes; four-rank Broadcast of 16-256 MiB gained 1-6 %, but AlltoAll lost 3-10 %
// and Send/Recv 2-5 % (4 x H200, bench/results/gpu-2026-11-28b call 1).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "kernels/primitives/block_start.cuh"
#include "kernels/work/dev_work.h"
#include "kernels/primitives/grid_dep.cuh"
#include "kernels/launch/launch.h"
#include "kernels/launch/launch_fn.h"
#include "kernels/work/prof_channels.h"
#include "kernels/protocols/ll_proto.cuh"
#include "kernels/protocols/simple_proto.cuh"
#include "nccl.h"

namespace mccl {
namespace {

using SimpleArgs = KernelArgs<kSmallLaunch>;

constexpr int kRecvThread = 0;   // waits for messages and posts heads
constexpr int kSendThread = 32;  // waits for free slots (another warp); fences and posts tails
                                 // where the block has no posting warp

// A work's barriers (SimpleWork::bar_): the whole block's is 0 (__syncthreads) and its
// movers' 1; the two halves of a block that serves a peer both ways (kQueueBothWays) take
// 2 and 3, 4 and 5.
__device__ __forceinline__ int halfBarrier(int half) { return 2 + 2 * half; }

// Barriers of nt threads (a multiple of 32) on barrier id: all wait; or all wait and learn
// whether any passed true.
__device__ __forceinline__ void barSync(int id, int nt) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(nt) : "memory");
}
__device__ __forceinline__ bool barOr(int id, int nt, bool p) {
  int r;
  asm volatile(
      "{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tbar.red.or.pred q, %2, %3, p;\n\t"
      "selp.s32 %0, 1, 0, q;\n\t}"
      : "=r"(r)
      : "r"(static_cast<int>(p)), "r"(id), "r"(nt)
      : "memory");
  return r != 0;
}

// One direction of a work's connection, as every thread keeps it.
struct SimpleConn {
  uint8_t* buf = nullptr;
  uint64_t slotBytes = 0;
  uint32_t slots = 1;
  uint32_t slot = 0;  // the FIFO slot of the next step
  __device__ __forceinline__ uint8_t* at() const { return buf + slot * slotBytes; }
  __device__ __forceinline__ void next() { slot = slot + 1 == slots ? 0 : slot + 1; }
};

// Ring AllGather and ReduceScatter read the rank at another ring position every step: a
// ring of up to this many ranks is copied to shared memory when a work starts.
constexpr int kRingShared = 64;

struct SimpleShared {
  DevConn recv, send;
  uint64_t recvStep, sendStep;  // the connections' persistent counters at the work's start
  int32_t ring[kRingShared];    // ring order (AllGather, ReduceScatter)
  uint64_t next[2];             // units: the unit word of the unit after this one (kUnitSlots),
                                // by the parity of the block's unit: the posting warp still
                                // reads one unit's while the movers start the next
  uint8_t* sendTo;              // user buffers: the next peer's output, or null (its FIFO)
  int32_t recvDirect;           // user buffers: this work's messages are in the output already
  int32_t ackPending;           // (thread 0) read the ack at the work's first message
  int32_t agreed;               // kUnitsAgree: both ends take units (agreeUnits)
  // MCCL_PROFILE (thread 0): when the block started, the time from then to its first step,
  // when the last step's post ended, per step wait / move / post / bytes / steps, and the
  // time between steps (ProfWord).
  uint64_t entryNs;
  uint64_t startNs;
  uint64_t lastNs;
  unsigned long long prof[5];
  uint64_t gapNs, gaps;
};

// What one step does: combine the local input (src) and/or the message from the previous
// peer, and write the result to dst and/or the next peer's slot.
struct SimpleStep {
  const uint8_t* src;
  uint8_t* dst;
  int64_t at;  // where the step's message lies in the output (elements): user buffers
  int64_t count;
  bool recv;
  bool send;
  bool premul;  // multiply the local input by PreMulSum's scalar
};

// What a piece of a work is (SimpleWork::piece, the unaligned kernels).
constexpr int kPieceAllReduce = 0, kPieceGather = 1, kPieceChain = 2, kPieceP2p = 3;

template <typename S, bool kWide>
class SimpleWork {
  // Vectors in flight a thread in copies: kSimpleUnroll where the kernel only moves data
  // (AllGather, Broadcast, Send/Recv: one H100, one channel, Send/Recv 256 MiB 15 % faster);
  // the reducing kernels keep 4 in copies and reductions: at 8 they spilled 400-880 bytes
  // (a two-input reduction of 8 vectors takes 98 registers on its own) and AllReduce and
  // ReduceScatter of 16 KiB - 16 MiB took 5-25 % longer (bench/results/gpu-1xH100-2026-11-25e).
  static constexpr int kCopyUnroll = std::is_same<S, NoArith>::value ? kSimpleUnroll : kUnroll;

 public:
  // The work runs on nt threads from thread first of the block, with barrier bar (0: the
  // whole block; halfBarrier: one half).
  __device__ __forceinline__ SimpleWork(const DevComm& comm, const DevWork& w, int wi, int ch, SimpleShared& sh,
                                        int first, int nt, int bar)
      : comm_(comm), w_(w), wi_(wi), ch_(ch), sh_(sh), esize_(typeBytes(w.type)),
        tid_(static_cast<int>(threadIdx.x) - first), nt_(nt), bar_(bar), units_(w.units != 0) {}

  // The work's peers and whether it receives and sends on this rank; then its connections.
  __device__ __forceinline__ bool run() {
    if (w_.selfCopy) {
      selfCopyChannel<kCopyUnroll, kWide>(w_, esize_, ch_, tid_, nt_);
      return true;
    }
    const Schedule& s = w_.s;
    const int n = s.nranks;
    int64_t off = 0, cnt = 0;
    if (units_) {
      nUnits_ = divUp(s.count, unitElems(s));
      if (ch_ >= nUnits_) return true;
    }
    // Units by agreement may end in the fixed range (kUnitsAgree: a channel has both, the
    // host sees to it, so neither end leaves before agreeing).
    if (!units_ || w_.units == kUnitsAgree) {
      channelRange(s.count, s.nchannels, s.align, ch_, &off, &cnt);
      if (cnt <= 0) return true;
    }
    const bool p2p = s.algo == Algo::P2p;
    // The ring's neighbours come with the communicator: the connections' loads depend on
    // nothing else, and the chain's place (a load of the ring table) is found meanwhile.
    prev_ = p2p ? s.root : comm_.ringPrev;
    next_ = p2p ? s.root : comm_.ringNext;
    open();
    const int p = comm_.ringPosition;
    bool recv = true, send = true;
    int rel = 0;
    if (p2p) {
      recv = s.coll == Coll::Recv;
      send = !recv;
    } else if (s.algo == Algo::Chain) {
      rel = mod(p - ringPosOf(s, s.root), n);
      recv = s.coll == Coll::Broadcast ? rel > 0 : rel != 1;
      send = s.coll == Coll::Broadcast ? rel < n - 1 : rel != 0;
    }
    // The posting warp: see the head of this file.
    nw_ = send && comm_.postWarp && nt_ >= kPostWarpMin ? nt_ - 32 : nt_;
    post_ = nw_ < nt_ ? nw_ : kSendThread;
    sync();
    use(recv, send);
    if ((w_.xchg && !exchange(recv, send)) || (w_.units == kUnitsAgree && !agreeUnits(recv, send))) {
      close(recv, send);
      return false;
    }
    bool ok;
    if constexpr (kWide) {
      ok = pieces(off, cnt, p, rel);
    } else if (units_) {
      ok = runUnits(p, rel);
    } else {
      switch (s.algo) {
        case Algo::Ring:
          ok = s.coll == Coll::AllReduce ? ringAllReduce(off, cnt, p) : ringGather(off, cnt, p);
          break;
        case Algo::Chain: ok = chain(off, cnt, rel); break;
        default: ok = pointToPoint(off, cnt); break;
      }
    }
    close(recv, send);
    // The posting warp's last post reads the connections in shared memory, which the next
    // work's open() rewrites.
    if (ok && nw_ < nt_) sync();
    return ok;
  }

 private:
  __device__ __forceinline__ const uint8_t* in(int64_t o) const {
    return static_cast<const uint8_t*>(w_.in) + o * esize_;
  }
  __device__ __forceinline__ uint8_t* out(int64_t o) const { return static_cast<uint8_t*>(w_.out) + o * esize_; }
  __device__ __forceinline__ bool premul() const { return w_.premul && collReduces(w_.s.coll); }
  // The rank at a ring position in [-n, n): from shared memory when the ring fits there.
  __device__ __forceinline__ int ringAt(int pos) const {
    const int n = w_.s.nranks;
    pos = pos < 0 ? pos + n : pos;
    return n <= kRingShared ? sh_.ring[pos] : ringRank(w_.s, pos);
  }

  // Ring AllReduce: per loop of chunk·n elements, n−1 reduce steps then n gather steps, step
  // k on the chunk of ring position p − k (schedule.h, stepAt).
  __device__ __forceinline__ bool ringAllReduce(int64_t off, int64_t cnt, int p) {
    const int64_t loopSize = w_.s.chunk * w_.s.nranks;
    for (int64_t base = off; base < off + cnt; base += loopSize)
      if (!allReduceLoop(base, min64(loopSize, off + cnt - base), p)) return false;
    return true;
  }
  __device__ __forceinline__ bool allReduceLoop(int64_t base, int64_t size, int p) {
    const Schedule& s = w_.s;
    const int n = s.nranks;
    const bool pre = premul();
    const int64_t part = roundUp(divUp(size, n), s.align);
    int q = p;
    for (int k = 0; k < 2 * n - 1; ++k) {
      const int64_t cOff = base + min64(part * q, size);
      const int64_t cCnt = min64(part, base + size - cOff);
      const bool reduce = k < n;
      SimpleStep st{reduce ? in(cOff) : nullptr, k >= n - 1 ? out(cOff) : nullptr, cOff, cCnt, k > 0, k < 2 * n - 2,
                    reduce && pre};
      if (!step(st)) return false;
      q = q == 0 ? n - 1 : q - 1;
    }
    return true;
  }

  // Ring AllGather and ReduceScatter: per chunk of every rank block, n steps; AllGather's
  // step k carries the block of ring position p − k, ReduceScatter's reduces that of p − k − 1
  // and completes this rank's own block at the last step.
  __device__ __forceinline__ bool ringGather(int64_t off, int64_t cnt, int p) {
    for (int64_t o = off; o < off + cnt; o += w_.s.chunk)
      if (!gatherChunk(o, min64(w_.s.chunk, off + cnt - o), p)) return false;
    return true;
  }
  __device__ __forceinline__ bool gatherChunk(int64_t o, int64_t len, int p) {
    const Schedule& s = w_.s;
    const int n = s.nranks;
    const bool gather = s.coll == Coll::AllGather;
    const bool pre = premul();
    for (int k = 0; k < n; ++k) {
      const int64_t blockOff = static_cast<int64_t>(ringAt(p - k - (gather ? 0 : 1))) * s.count + o;
      SimpleStep st = gather ? SimpleStep{k == 0 ? in(o) : nullptr, out(blockOff), blockOff, len, k > 0, k < n - 1, false}
                             : SimpleStep{in(blockOff), k == n - 1 ? out(o) : nullptr, o, len, k > 0, k < n - 1, pre};
      if (!step(st)) return false;
    }
    return true;
  }

  // Along the ring from the root: Broadcast root -> root+1 -> ...; Reduce root+1 -> ... -> root.
  __device__ __forceinline__ bool chain(int64_t off, int64_t cnt, int rel) {
    for (int64_t o = off; o < off + cnt; o += w_.s.chunk)
      if (!chainChunk(o, min64(w_.s.chunk, off + cnt - o), rel)) return false;
    return true;
  }
  __device__ __forceinline__ bool chainChunk(int64_t o, int64_t len, int rel) {
    const Schedule& s = w_.s;
    const bool bcast = s.coll == Coll::Broadcast;
    const bool recv = bcast ? rel > 0 : rel != 1, send = bcast ? rel < s.nranks - 1 : rel != 0;
    SimpleStep st = bcast ? SimpleStep{rel == 0 ? in(o) : nullptr, out(o), o, len, recv, send, false}
                          : SimpleStep{in(o), rel == 0 ? out(o) : nullptr, o, len, recv, send, premul()};
    return step(st);
  }

  // Units (DevWork::units, dev_work.h): the channel's units, from unit ch_ on: each ends
  // with every thread reading the unit word of the next one (claimed by the leader, learnt
  // by the others from the messages of this unit). A point-to-point work's leader is its
  // sender; a unit is one step. The word is written before the unit's last step's block
  // barrier and read after it; the next unit writes the other word of sh_.next, so no
  // barrier of its own is needed (nor one that would wait for the posting warp's fence).
  __device__ __forceinline__ bool runUnits(int p, int rel) {
    const Schedule& s = w_.s;
    const bool ring = s.algo == Algo::Ring, p2p = s.algo == Algo::P2p;
    leader_ = unitLeader(p, rel);
    const int64_t size = unitElems(s);
    int64_t u = ch_;
    for (;;) {
      unitStart();
      const int64_t o = u * size, len = min64(size, s.count - o);
      const bool ok = p2p    ? pointToPoint(o, len)
                      : !ring ? chainChunk(o, len, rel)
                      : s.coll == Coll::AllReduce ? allReduceLoop(o, len, p)
                                                  : gatherChunk(o, len, p);
      if (!ok) return false;
      if (!unitNext(&u)) return true;
    }
  }
  // The unit loop's parts, shared by runUnits and pieces. The leader: a point-to-point
  // work's sender, the ring's position 0, a chain's first rank.
  __device__ __forceinline__ bool unitLeader(int p, int rel) const {
    const Schedule& s = w_.s;
    return s.algo == Algo::P2p ? s.coll == Coll::Send
           : s.algo == Algo::Ring ? p == 0
                                  : rel == (s.coll == Coll::Broadcast ? 0 : 1);
  }
  // Before a unit's first step: the leader claims the next unit into sh_.next, the others
  // mark it unknown until this unit's messages carry it. The leader's claim (a global
  // atomic) is the posting warp's where the block has one: it runs while the movers move
  // the unit's first step, and lands in sh_.next before the posting warp reaches the block
  // barrier after that move. Thread 32 claimed before, and the movers waited for it at each
  // unit's first step. One shared H200: ring AllReduce of 16-64 MiB and two-rank Send/Recv
  // of 64-256 MiB 1-2.4 % faster, nothing slower, 256 KiB - 4 MiB level
  // (bench/results/gpu-1xH200-2026-11-29c, calls 2-3).
  __device__ __forceinline__ void unitStart() {
    const int claimer = nw_ < nt_ ? post_ : kSendThread;
    if (leader_ && tid_ == claimer) sh_.next[par_] = claim();
    if (!leader_ && tid_ == kRecvThread) sh_.next[par_] = kUnitUnknown;
  }
  // After a unit's last step: the next unit into *u, false when the channel's units are done.
  __device__ __forceinline__ bool unitNext(int64_t* u) {
    const uint64_t next = sh_.next[par_];
    par_ ^= 1;
    if (next == kUnitEnd) return false;
    // Every rank learns the word by its step at its ring (or chain) distance from the
    // leader, within the unit: an unknown one here is a broken invariant.
    if (next == kUnitUnknown) __trap();
    *u = static_cast<int64_t>(next - 1);
    return true;
  }
  // The work as pieces, each one sequence of steps (piece()): without units, the channel's
  // range in spans of a ring AllReduce loop (chunk·n elements) or a chunk, or one piece of
  // a point-to-point work; with units, the channel's units from unit ch_ on, as runUnits
  // takes them.
  //
  // The unaligned kernels (kWide) only: one loop and one call of piece(), which calls
  // step() once, so step() and the data movement it inlines (every operator's unaligned
  // combine loops) exist once in the kernel. With a loop per collective and per kind, as the
  // aligned kernels have (eight copies), cicc and ptxas took 160 s for one unaligned kernel
  // where this form takes 12, and the build ran past CI's 90 minutes (2-core AMD EPYC,
  // 2026-12-02). The aligned kernels keep theirs: in this form (or four copies, one per
  // collective) Simple calls of 256 KiB - 64 MiB ran 2-10 % longer (one shared H200,
  // bench/results/gpu-1xH200-2026-12-02 calls 1-2).
  __device__ __forceinline__ bool pieces(int64_t off, int64_t cnt, int p, int rel) {
    const Schedule& s = w_.s;
    const bool ring = s.algo == Algo::Ring, p2p = s.algo == Algo::P2p;
    kind_ = p2p ? kPieceP2p : !ring ? kPieceChain : s.coll == Coll::AllReduce ? kPieceAllReduce : kPieceGather;
    const int64_t end = off + cnt;
    const int64_t span = kind_ == kPieceAllReduce ? s.chunk * s.nranks : kind_ == kPieceP2p ? cnt : s.chunk;
    const int64_t size = units_ ? unitElems(s) : 0;
    leader_ = units_ && unitLeader(p, rel);
    int64_t u = ch_, o = off;
    for (;;) {
      int64_t len;
      if (units_) {
        unitStart();
        o = u * size;
        len = min64(size, s.count - o);
      } else {
        len = min64(span, end - o);
      }
      if (!piece(o, len, p, rel)) return false;
      if (!units_) {
        o += span;
        if (o >= end) return true;
        continue;
      }
      if (!unitNext(&u)) return true;
    }
  }

  // One piece [o, o + len): its steps in order.
  //  * Ring AllReduce (a loop of up to chunk·n elements): n−1 reduce steps then n gather
  //    steps, step k on the part of ring position p − k (schedule.h, stepAt).
  //  * Ring AllGather and ReduceScatter (a chunk of every rank block): n steps; AllGather's
  //    step k carries the block of ring position p − k, ReduceScatter's reduces that of
  //    p − k − 1 and completes this rank's own block at the last step.
  //  * Along the ring from the root (Broadcast root -> root+1 -> ...; Reduce root+1 -> ...
  //    -> root): one step.
  //  * Point-to-point: one step a chunk.
  __device__ __forceinline__ bool piece(int64_t o, int64_t len, int p, int rel) {
    const Schedule& s = w_.s;
    const int n = s.nranks;
    const bool pre = premul();
    const int steps = kind_ == kPieceAllReduce ? 2 * n - 1
                      : kind_ == kPieceGather  ? n
                      : kind_ == kPieceChain   ? 1
                                               : static_cast<int>(divUp(len, s.chunk));
    const int64_t part = kind_ == kPieceAllReduce ? roundUp(divUp(len, n), s.align) : 0;
    int q = p;  // AllReduce: the ring position of step k's part
    for (int k = 0; k < steps; ++k) {
      SimpleStep st;
      switch (kind_) {
        case kPieceAllReduce: {
          const int64_t cOff = o + min64(part * q, len);
          const bool reduce = k < n;
          st = SimpleStep{reduce ? in(cOff) : nullptr, k >= n - 1 ? out(cOff) : nullptr, cOff,
                          min64(part, o + len - cOff), k > 0, k < 2 * n - 2, reduce && pre};
          q = q == 0 ? n - 1 : q - 1;
          break;
        }
        case kPieceGather: {
          const bool gather = s.coll == Coll::AllGather;
          const int64_t blockOff = static_cast<int64_t>(ringAt(p - k - (gather ? 0 : 1))) * s.count + o;
          st = gather ? SimpleStep{k == 0 ? in(o) : nullptr, out(blockOff), blockOff, len, k > 0, k < n - 1, false}
                      : SimpleStep{in(blockOff), k == n - 1 ? out(o) : nullptr, o, len, k > 0, k < n - 1, pre};
          break;
        }
        case kPieceChain: {
          const bool bcast = s.coll == Coll::Broadcast;
          const bool recv = bcast ? rel > 0 : rel != 1, send = bcast ? rel < n - 1 : rel != 0;
          st = bcast ? SimpleStep{rel == 0 ? in(o) : nullptr, out(o), o, len, recv, send, false}
                     : SimpleStep{in(o), rel == 0 ? out(o) : nullptr, o, len, recv, send, pre};
          break;
        }
        default: {
          const int64_t at = o + k * s.chunk, l = min64(s.chunk, o + len - at);
          st = s.coll == Coll::Send ? SimpleStep{in(at), nullptr, at, l, false, true, false}
                                    : SimpleStep{nullptr, out(at), at, l, true, false, false};
          break;
        }
      }
      if (!step(st)) return false;
    }
    return true;
  }

  // The leader's next unit: the first nchannels go one to a channel, the rest in the order
  // channels ask for them.
  __device__ __forceinline__ uint64_t claim() {
    const int64_t u = w_.s.nchannels + static_cast<int64_t>(atomicAdd(comm_.claims + wi_, 1u));
    return u < nUnits_ ? static_cast<uint64_t>(u) + 1 : kUnitEnd;
  }
  // The unit word of a FIFO slot, next to the tail in the receiver's memory.
  __device__ __forceinline__ static volatile uint64_t* unitWord(uint64_t* tail, uint32_t slot) {
    return reinterpret_cast<volatile uint64_t*>(reinterpret_cast<uint8_t*>(tail) - ConnRegion::kFlagOff +
                                                ConnRegion::kUnitOff) + slot;
  }

  __device__ __forceinline__ bool pointToPoint(int64_t off, int64_t cnt) {
    const bool send = w_.s.coll == Coll::Send;
    for (int64_t o = off; o < off + cnt; o += w_.s.chunk) {
      const int64_t len = min64(w_.s.chunk, off + cnt - o);
      SimpleStep st = send ? SimpleStep{in(o), nullptr, o, len, false, true, false}
                           : SimpleStep{nullptr, out(o), o, len, true, false, false};
      if (!step(st)) return false;
    }
    return true;
  }

  // Thread 0 loads the receiving connection and its counter, thread 32 the sending one, all
  // four loads at once (a point-to-point work uses one; the other is read and left), and the
  // block the ring order where a step needs it. The block barrier that makes them visible
  // is the caller's.
  __device__ __forceinline__ void open() {
    const ConnClass cls = connClassOf(w_.s.algo);
    if (tid_ == kRecvThread || tid_ == kSendThread) {
      const bool send = tid_ == kSendThread;
      const int peer = send ? next_ : prev_, idx = connIndex(comm_, cls, ch_, send);
      const uint64_t step = devCtrl(comm_, peer, idx)[kCtrlStep];  // == *conn.step
      (send ? sh_.send : sh_.recv) = *devConn(comm_, peer, idx);
      (send ? sh_.sendStep : sh_.recvStep) = step;
      if (send) sh_.sendTo = nullptr;  // user buffers: none unless exchange() finds one
      else sh_.recvDirect = sh_.ackPending = 0;
    }
    const Schedule& s = w_.s;
    if (s.algo == Algo::Ring && s.coll != Coll::AllReduce && s.nranks <= kRingShared)
      for (int i = tid_; i < s.nranks; i += nt_) sh_.ring[i] = ringRank(s, i);
  }

  // Every thread takes the slots of the directions the work uses, from shared memory.
  __device__ __forceinline__ void use(bool recv, bool send) {
    nsl_ = comm_.slices > 0 ? comm_.slices : 1;
    if (recv) {
      rn_ = sh_.recvStep;
      rc_ = SimpleConn{sh_.recv.buf, sh_.recv.slotBytes, sh_.recv.slots,
                       static_cast<uint32_t>((nsl_ == 1 ? rn_ : rn_ / nsl_) % sh_.recv.slots)};
    }
    if (send) {
      sn_ = sh_.sendStep;
      sc_ = SimpleConn{sh_.send.buf, sh_.send.slotBytes, sh_.send.slots,
                       static_cast<uint32_t>((nsl_ == 1 ? sn_ : sn_ / nsl_) % sh_.send.slots)};
    }
  }

  // User buffers (dev_work.h): the receiving thread posts this work's offer, the sending
  // thread takes the next peer's and answers it where it can write there. False when
  // aborted or past MCCL_TIMEOUT.
  __device__ __forceinline__ bool exchange(bool recv, bool send) {
    bool stop = false;
    if (tid_ == kRecvThread) {
      if (recv && (w_.xchg & kXchgRecv)) {
        postOffer(sh_.recv.buf, w_.offer, rn_);
        sh_.ackPending = w_.offer != nullptr;
      }
    }
    if (tid_ == kSendThread) {
      if (send && (w_.xchg & kXchgSend)) {
        uint64_t* const o = offerWords(sh_.send.buf);
        stop = !waitAtLeast(comm_, o + 1, sn_ + 1, next_);
        if (!stop) {
          sh_.sendTo = reinterpret_cast<uint8_t*>(ldVolatile(o));
          // Before the first tail (its fence orders the two): the receiver reads it then.
          if (sh_.sendTo) stVolatile(ackWord(sh_.send.buf), sn_ + 1);
        }
      }
    }
    return !syncOr(stop);
  }

  // Units by agreement (dev_work.h, kUnitsAgree; a Send or a Recv): this kernel takes
  // units, so the receiving thread says yes and waits for the sender's answer; the sending
  // thread waits for the receiver's word and answers with it. Every thread then runs the
  // channel alike (units_). False when aborted or past MCCL_TIMEOUT.
  __device__ __forceinline__ bool agreeUnits(bool recv, bool send) {
    bool stop = false;
    if (recv && tid_ == kRecvThread) {
      uint64_t* const a = agreeWords(sh_.recv.buf);
      stReleaseSys(a, 2 * (rn_ + 1) + 1);
      stop = !waitAtLeast(comm_, a + 1, 2 * (rn_ + 1), prev_);
      sh_.agreed = !stop && (ldVolatile(a + 1) & 1);
    }
    if (send && tid_ == kSendThread) {
      uint64_t* const a = agreeWords(sh_.send.buf);
      stop = !waitAtLeast(comm_, a, 2 * (sn_ + 1), next_);
      const uint64_t yes = stop ? 0 : ldVolatile(a) & 1;
      if (!stop) stVolatile(a + 1, 2 * (sn_ + 1) + yes);
      sh_.agreed = static_cast<int32_t>(yes);
    }
    stop = syncOr(stop);
    units_ = sh_.agreed != 0;
    return !stop;
  }

  // The counters back to device memory, where the next launch on these connections starts.
  __device__ __forceinline__ void close(bool recv, bool send) {
    if (recv && tid_ == kRecvThread) *sh_.recv.step = rn_;
    if (send && tid_ == kSendThread) *sh_.send.step = sn_;
  }

  // One step, in nsl_ slices (each moves one flag; empty steps move none, on both sides).
  __device__ __forceinline__ bool step(const SimpleStep& st) {
    // Empty steps move no flag, on both sides; with units they do (the unit word travels).
    if (st.count <= 0 && !units_) return true;
    const bool prof = comm_.prof != nullptr && tid_ == 0;
    const int64_t per = nsl_ == 1 ? st.count : roundUp(divUp(st.count, nsl_), 16 / static_cast<int64_t>(esize_));
    // In place with nothing else to do: the data is already where it belongs.
    uint8_t* const dst = st.dst != nullptr && !(st.dst == st.src && !st.recv && !st.premul) ? st.dst : nullptr;
    for (int sl = 0; sl < nsl_; ++sl) {
      const int64_t off = min64(per * sl, st.count);
      const int64_t cnt = min64(per, st.count - off);
      const uint64_t t0 = prof ? globalTimer() : 0;
      bool stop = false;
      if (st.recv && tid_ == kRecvThread) {
        stop = !waitAtLeast(comm_, sh_.recv.tail, rn_ + 1, prev_);
        if (!stop && units_ && !leader_ && sh_.next[par_] == kUnitUnknown)
          sh_.next[par_] = *unitWord(sh_.recv.tail, rc_.slot);
        if (!stop && sh_.ackPending) {
          // The work's first message: its sender's answer came before it (exchange()).
          sh_.recvDirect = ldVolatile(ackWord(sh_.recv.buf)) == rn_ + 1;
          sh_.ackPending = 0;
        }
      }
      if (st.send && tid_ == kSendThread && sl == 0) {
        // A slot is reused once the receiver has consumed every slice of its last use.
        const uint64_t slot = sn_ / nsl_;
        if (slot >= sc_.slots) stop = !waitAtLeast(comm_, sh_.send.head, (slot - sc_.slots + 1) * nsl_, next_);
      }
      // The movers start together; the posting warp (if any) learns of a stop at the block
      // barrier after the move, which the movers reach at once.
      if (nw_ == nt_) {
        if (syncOr(stop)) {
          close(st.recv, st.send);
          return false;
        }
      } else if (tid_ < nw_) {
        stop = moversOr(stop);
      }
      const uint64_t t1 = prof ? globalTimer() : 0;
      if (!stop && cnt > 0 && tid_ < nw_) move(st, dst, off, cnt);
      if (nw_ == nt_) {
        sync();
      } else if (syncOr(stop)) {
        close(st.recv, st.send);
        return false;
      }
      const uint64_t t2 = prof ? globalTimer() : 0;
      if (st.send && tid_ == post_) {
        // A network connection's proxy puts only the bytes of the slice: say where they are.
        if (sh_.send.sizes)
          sh_.send.sizes[sn_ % (static_cast<uint64_t>(sc_.slots) * nsl_)] =
              static_cast<uint64_t>(off) * esize_ << 32 | static_cast<uint64_t>(cnt) * esize_;
        if (units_) *unitWord(sh_.send.tail, sc_.slot) = sh_.next[par_];
        // Every thread's stores (ordered by the barrier) become visible before the flag.
        fenceSys(comm_.fence);
        *reinterpret_cast<volatile uint64_t*>(sh_.send.tail) = ++sn_;
      } else if (st.send) {
        ++sn_;
      }
      if (st.recv && tid_ == kRecvThread) *reinterpret_cast<volatile uint64_t*>(sh_.recv.head) = ++rn_;
      else if (st.recv) ++rn_;
      if (prof) profile(t0, t1, t2, cnt);
    }
    if (st.recv) rc_.next();
    if (st.send) sc_.next();
    return true;
  }

  // The step's data: the local input and/or the received slice, to dst and/or the next
  // peer's slot, 16-byte vectors.
  __device__ __forceinline__ void move(const SimpleStep& st, uint8_t* dst, int64_t off, int64_t cnt) {
    const size_t o = static_cast<size_t>(off) * esize_;
    // Every index below is a constant, so the Io stays in registers.
    Io io;
    io.src = st.src ? st.src + o : nullptr;
    io.nin = st.recv ? 1 : 0;
    io.in[0] = st.recv ? rc_.at() + o : nullptr;
    io.in[1] = nullptr;
    // User buffers: only final data travels straight between outputs (a ring AllReduce's
    // reduce steps still go through the FIFO): a message received with no local input to
    // combine, and a message sent that is also written to this rank's output (or a Send).
    if (st.recv && sh_.recvDirect && st.src == nullptr) {
      // The message is in the output already (dst, written by the peer): forward it from
      // there, copy it nowhere.
      io.in[0] = out(st.at) + o;
      dst = nullptr;
    }
    uint8_t* const to = st.dst != nullptr || w_.s.algo == Algo::P2p ? sh_.sendTo : nullptr;
    uint8_t* const slot = !st.send ? nullptr : to ? to + static_cast<size_t>(st.at) * esize_ + o : sc_.at() + o;
    io.out[0] = dst ? dst + o : slot;
    io.out[1] = dst ? slot : nullptr;
    io.out[2] = nullptr;
    io.nout = (dst ? 1 : 0) + (st.send ? 1 : 0);
    if (io.nout == 0) return;
    io.count = static_cast<size_t>(cnt);
    io.premul = st.premul;
    io.scalarBits = w_.scalarBits;
    io.scalarPtr = w_.scalarPtr;
    io.postDiv = 0;  // the integer average runs in the generic kernel
    if (io.nin + (io.src ? 1 : 0) == 1 && !io.premul)
      copyBytes<kCopyUnroll, kWide>(io, static_cast<size_t>(cnt) * esize_, io.src == nullptr, tid_, nw_);
    else if constexpr (!std::is_same<S, NoArith>::value)
      combineOp<S, kUnroll, kWide>(w_.red, io, tid_, nw_);
    else
      __trap();  // the host launches reducing works only in the kernel of their type
  }

  // The work's barrier (all its threads), and its movers' (all but the posting warp): true
  // if any passed true.
  __device__ __forceinline__ void sync() const { barSync(bar_, nt_); }
  __device__ __forceinline__ bool syncOr(bool p) const { return barOr(bar_, nt_, p); }
  __device__ __forceinline__ bool moversOr(bool p) const { return barOr(bar_ + 1, nw_, p); }

  __device__ __forceinline__ void profile(uint64_t t0, uint64_t t1, uint64_t t2, int64_t cnt) {
    const uint64_t now = globalTimer();
    if (sh_.entryNs && !sh_.startNs) sh_.startNs = t0 - sh_.entryNs;
    if (sh_.lastNs) {
      sh_.gapNs += t0 - sh_.lastNs;
      sh_.gaps += 1;
    }
    sh_.lastNs = now;
    sh_.prof[0] += t1 - t0;
    sh_.prof[1] += t2 - t1;
    sh_.prof[2] += now - t2;
    sh_.prof[3] += static_cast<unsigned long long>(cnt) * esize_;
    sh_.prof[4] += 1;
  }

  const DevComm& comm_;
  const DevWork& w_;
  const int wi_;  // the work's index in the launch (its claim counter)
  const int ch_;
  SimpleShared& sh_;
  const size_t esize_;
  const int tid_, nt_;  // this thread and the work's threads (a block, or half of one)
  const int bar_;       // the work's barrier (halfBarrier), its movers' the next
  bool units_;  // kUnitsOn, or kUnitsAgree once agreed (agreeUnits)
  int64_t nUnits_ = 0;
  int prev_ = -1, next_ = -1;
  int nsl_ = 1;
  int nw_ = 0;     // the threads that move data: nt_, or nt_ - 32 with a posting warp
  int post_ = 0;   // the thread that fences and posts the tails
  int par_ = 0;    // units: the parity of the block's unit (sh_.next)
  int kind_ = 0;   // kWide: the work's pieces (kPiece*)
  bool leader_ = false;  // units: this rank claims the units
  SimpleConn rc_, sc_;
  uint64_t rn_ = 0, sn_ = 0;  // the counters (every thread keeps them)
};

// One block per queue runs its works in call order; arithmetic on S (NoArith: the launch
// only moves data). A queue of a peer both ways (kQueueBothWays; in launches that only move
// data) splits its block: the first half runs the Sends to the peer, the second the Recvs
// from it, each on its own barriers, so that neither direction waits for the other. The
// halves are even unless the queue says how many warps send (DevQueue::sendWarps:
// joinBothWays gives the Recvs fewer where they only wait).
template <typename S, bool kWide>
__global__ void __launch_bounds__(kMaxThreads, 1) simpleKernel(const __grid_constant__ SimpleArgs args) {
  __shared__ SimpleShared shs[2];
  __shared__ ArgsShared<SimpleArgs> a;
  DevQueue q = args.queues[blockIdx.x];
  // Only the data-moving kernels split (joinBothWays: Sends and Recvs reduce nothing): the
  // reducing ones keep their threads and barriers constants, and their registers (a work's
  // first thread, count and barrier as variables cost them 100 bytes more of spills).
  const bool both = std::is_same<S, NoArith>::value && q.send == kQueueBothWays;
  const int block = static_cast<int>(blockDim.x);
  const int sendNt = !both ? block : q.sendWarps > 0 ? 32 * q.sendWarps : block / 2;
  const int half = both && static_cast<int>(threadIdx.x) >= sendNt ? 1 : 0;
  const int first = half ? sendNt : 0;
  const int nt = half ? block - sendNt : sendNt;
  const bool lead = static_cast<int>(threadIdx.x) == first;  // the half's thread 0
  if (both) q.send = half == 0 ? 1 : 0;
  SimpleShared& sh = shs[half];
  if (lead) {
    sh.entryNs = args.comm.prof ? globalTimer() : 0;  // MCCL_PROFILE
    sh.startNs = sh.lastNs = sh.gapNs = sh.gaps = 0;
    for (int k = 0; k < 5; ++k) sh.prof[k] = 0;
  }
  copyArgsToShared(args, a);
  gridDepWait();  // the parameters only, before: nothing the last kernel wrote (grid_dep.cuh)
  bool units = false;
  for (int wi = 0; wi < args.nworks; ++wi) units = units || a.works[wi].units;
  const int bar = both ? halfBarrier(half) : 0;
  for (int wi = 0; wi < args.nworks; ++wi) {
    const DevWork& w = a.works[wi];
    if (!queueRuns(q, w)) continue;
    if (!SimpleWork<S, kWide>(a.comm, w, wi, q.channel, sh, first, nt, bar).run()) break;
  }
  // The next launch may start once every block is here: a Simple launch runs long, and a
  // launch let in at its start would hold its blocks' SMs (the user's) waiting all along.
  gridDepLaunchDependents();
  // The claim counters start at zero in every launch: the last block out zeroes them. A
  // split block is out once both halves are (one may still claim when the other ends).
  if (units && both) __syncthreads();
  if (units && threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(a.comm.claims + kSmallLaunch, 1u) == gridDim.x - 1)
      for (int k = 0; k < kClaimWords; ++k) a.comm.claims[k] = 0;
  }
  if (lead && sh.entryNs && sh.prof[4]) {
    unsigned long long* p = a.comm.prof;
    atomicAdd(p + kProfSimpleSteps, sh.prof[4]);
    atomicAdd(p + kProfSimpleWait, sh.prof[0]);
    atomicAdd(p + kProfSimpleMove, sh.prof[1]);
    atomicAdd(p + kProfSimplePost, sh.prof[2]);
    atomicAdd(p + kProfSimpleBytes, sh.prof[3]);
    atomicAdd(p + kProfSimpleGap, static_cast<unsigned long long>(sh.gapNs));
    atomicAdd(p + kProfSimpleGaps, static_cast<unsigned long long>(sh.gaps));
    atomicAdd(p + kProfSimpleStart, static_cast<unsigned long long>(sh.startNs));
    atomicAdd(p + kProfSimpleEnd, static_cast<unsigned long long>(globalTimer() - sh.lastNs));
    atomicAdd(p + kProfSimpleBlocks, 1ull);
    const unsigned long long end = globalTimer(), run = end - sh.entryNs;
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    atomicAdd(p + kProfBlockRun, run);
    atomicAdd(p + kProfBlockRunSq, (run / 1000) * (run / 1000));
    atomicMax(p + kProfBlockRunMax, run);
    if (half == 0 && q.channel >= 0 && q.channel < kProfChannels) {
      p[kProfChanEntry + q.channel] = sh.entryNs;
      p[kProfChanEnd + q.channel] = end;
      p[kProfChanSm + q.channel] = sm;
    }
  }
}

using SimpleKernelFn = void (*)(SimpleArgs);

}  // namespace

// The kernels of launches with unaligned works (simple_kernel_wide.cu).
SimpleKernelFn simpleWideKernelOf(const LaunchSpec& spec);

}  // namespace mccl
