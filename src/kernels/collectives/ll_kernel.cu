// The LL-family kernels compiled for one arithmetic: reductions of one type, any operator
// (the common launch of small and medium messages, src/kernels/protocols/ll_proto.cuh or
// ll128_proto.cuh inlined for exactly that type, the operator chosen per work: LlTypedRt)
// and data movement only, one protocol a launch. Groups that mix protocols or types run in
// the generic kernel (coll_kernel.cu). A translation
// unit of its own, so the two compile in parallel.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "kernels/primitives/block_start.cuh"
#include "kernels/work/dev_work.h"
#include "kernels/launch/driver_launch.h"
#include "kernels/primitives/grid_dep.cuh"
#include "kernels/launch/launch.h"
#include "kernels/launch/launch_fn.h"
#include "kernels/protocols/ll128_proto.cuh"
#include "kernels/protocols/ll_proto.cuh"
#include "core/knobs.h"
#include "nccl.h"

namespace mccl {
namespace {

// The LL-family kernels' block start: the profile's stamp, then the launch's communicator
// and works in shared memory (block_start.cuh).
template <typename Args>
__device__ __forceinline__ void llBlockStart(const Args& args, ArgsShared<Args>& a, LlShared& sh) {
  if (threadIdx.x == 0) sh.entryNs = args.comm.prof ? globalTimer() : 0;  // MCCL_PROFILE
  copyArgsToShared(args, a);
  gridDepWaitThenRelease();  // the parameters only, before: nothing the last kernel wrote
}

// ---- The lean LL kernel ------------------------------------------------------------------
// The common small launch: one or two LL works (a collective, or a Send and a Recv) whose
// every channel moves one step of at most leanLinesOf<T>() lines per thread (llLeanLines). The general
// kernels above spent about 4 us of an 8-byte AllReduce's kernel on one H100 in serial
// bookkeeping on the block's first thread (bench/results/gpu-1xH100-2026-11-24e: the
// parameters copied to shared memory, the work loop, the range's arithmetic, the step
// loop), and loaded their input only after most of it. Here every read of the launch's
// parameters is a warp-uniform constant load at a fixed offset, the input's line is
// loaded first, and its latency overlaps the connections' round trip (llSetup); then one
// store per peer, one read per peer, the block barrier and the credits (llEndStep), as the
// general path does for one step: the same connections, lines, flags and step counters, so
// calls of either kind follow each other on a communicator.
struct LeanCopy {};

// The arithmetic of a lean work's reductions (LlTypedRt), none for LeanCopy: read from the
// work's parameters before the grid wait, with the connections' addresses (llSetupAt), so the
// wait overlaps their loads.
template <typename T>
struct LeanRed {
  using type = LlTypedRt<T>;
};
template <>
struct LeanRed<LeanCopy> {
  struct type {
    __device__ __forceinline__ explicit type(const DevWork&) {}
  };
};

// After a lean work's one step: the block barrier, the credits and step counters
// (llEndStep), and the profile's marks. False when the work was stopped.
__device__ __forceinline__ bool llLeanEnd(const DevComm& comm, const DevWork& w, LlShared& sh, LlProf& prof,
                                          uint64_t len) {
  prof.mark(kProfLlRecv);
  if (!llEndStep(comm, w, sh, 0, 1)) return false;
  prof.mark(kProfLlEnd);
  prof.step(len);
  prof.flush();
  return true;
}

// One work on channel ch: T is the arithmetic of its reductions (any operator, LlTypedRt:
// with ncclAvg's scaling and PreMulSum's factor), LeanCopy when the launch only moves data.
// False when stopped.
template <typename T>
__device__ __forceinline__ bool llLeanWork(const DevComm& comm, const DevWork& w, int ch, LlShared& sh) {
  const Coll coll = w.s.coll;
  const LlRange rg = llRange(w, typeBytes(w.type), ch);
  llStartStamp(sh, 2, rg.nsteps);
  if (rg.nsteps == 0) return true;
  const LlStep st(rg, 0);
  const int n = comm.nranks, me = comm.rank, tid = threadIdx.x;
  const bool p2p = llIsP2p(w), mine = tid < st.lines;
  const int nbytes = mine ? lineBytes(st.len, tid) : 0;
  const uint64_t at = st.off + 8 * static_cast<uint64_t>(tid);
  const uint8_t* in = static_cast<const uint8_t*>(w.in);
  uint8_t* out = static_cast<uint8_t*>(w.out);
  // My line, loaded first: what I send (ReduceScatter: my own block) and reduce or keep.
  const bool hasSrc = coll == Coll::Broadcast ? me == w.s.root : coll != Coll::Recv;
  const uint8_t* ownSrc = in + (coll == Coll::ReduceScatter ? static_cast<uint64_t>(me) * rg.total : 0);
  const typename LeanRed<T>::type red(w);
  const LlSetupAt setupAt = llSetupAt(comm, w, ch);
  gridDepWaitThenRelease();
  llStartStamp(sh, 3, 0);
  const uint64_t own = mine && hasSrc ? load8(ownSrc + at, nbytes) : 0;
  LlProf prof(comm, &sh);
  llSetupLoad(setupAt, sh);
  prof.mark(kProfLlSetup);
  int* const abort = &sh.abort;
  auto read = [&](int slot, int peer) {
    const LlPeer& P = sh.peer[slot];
    return llRead(P.recvSlots + (P.recvStep % kLlSlots) * kLlLines + tid, static_cast<uint32_t>(P.recvStep + 1),
                  &comm, abort, peer);
  };
  auto send = [&](int slot, int peer, uint64_t x) {
    const uint64_t v[1] = {x};
    llSendLines<1>(sh.peer[slot], 0, tid, st.lines, v, &comm, abort, peer);
  };
  auto endStep = [&]() { return llLeanEnd(comm, w, sh, prof, st.len); };
  if constexpr (!std::is_same<T, LeanCopy>::value) {
    if (collReduces(coll)) {
      const uint64_t mineIn = red.pre(own);
      if (mine) {
        for (int r = 0; r < n; ++r) {
          if (!llSendsTo(w, r)) continue;
          send(r, r, coll == Coll::ReduceScatter
                         ? red.pre(load8(in + static_cast<uint64_t>(r) * rg.total + at, nbytes))
                         : mineIn);
        }
      }
      prof.mark(kProfLlSend);
      if (mine && (coll != Coll::Reduce || me == w.s.root)) {
        typename LlTypedRt<T>::Acc acc;
        for (int r = 0; r < n; ++r) {  // in rank order, as the general path
          const uint64_t v = r == me ? mineIn : read(r, r);
          if (r == 0) red.first(acc, v);
          else red.add(acc, v);
        }
        store8(out + at, red.finish(acc), nbytes);
      }
      return endStep();
    }
  }
  if (mine && hasSrc) {
    if (p2p) send(0, w.s.root, own);
    else
      for (int r = 0; r < n; ++r)
        if (llSendsTo(w, r)) send(r, r, own);
  }
  prof.mark(kProfLlSend);
  if (mine) {
    if (coll == Coll::Recv) {
      store8(out + at, read(0, w.s.root), nbytes);
    } else if (coll == Coll::AllGather) {
      for (int r = 0; r < n; ++r)
        if (r != me) store8(out + static_cast<uint64_t>(r) * rg.total + at, read(r, r), nbytes);
      uint8_t* local = out + static_cast<uint64_t>(me) * rg.total;
      if (local != in) store8(local + at, own, nbytes);
    } else if (coll == Coll::Broadcast) {
      if (me != w.s.root) store8(out + at, read(w.s.root, w.s.root), nbytes);
      else if (out != in) store8(out + at, own, nbytes);
    }
  }
  return endStep();
}

// The same step with up to U lines a thread: lines tid, tid + nt, ... (the general loop's
// order, llLoadLines). Before 2026-12-04 it took four lines and reductions only: a
// channel's 16 KiB, what 32 LL channels gave a peer's 512 KiB, which had run the general LL
// kernel (its setup: 1.0 - 1.4 us a step, MCCL_PROFILE on 2 x H100,
// bench/results/gpu-2xH200-2026-11-26d call 4; 2 x H100, calls 5, 6: Reduce 256 KiB 6.9 ->
// 5.9 us, 512 KiB 8.2 -> 7.5, ReduceScatter 512 KiB 9.4 -> 8.6, AllReduce 256 KiB 8.4 ->
// 8.1). With no more channels than NCCL's 24 (core/planner.cc llMaxChannels), a channel's
// share of 128 KiB - 768 KiB is 2 - 8 lines a thread, copies too: capped at 24 with the
// one-line copies and four-line reductions, the launches that left the lean kernel took
// 1.1 - 2.1 us more (one shared H200, bench/results/gpu-1xH200-2026-12-03d call 1). So a
// step of up to leanLinesOf<T>() lines, copies included, in forms of 2, 4 and 8 lines a
// thread (llLeanLines takes the fewest that hold a launch's lines).
//
// The most lines a thread, as many as its registers hold: eight (a whole step of a
// 512-thread block, kLlLines) for copies and reductions of 4-byte types; four for 1-, 2-
// and 8-byte reductions, where eight spilled (ptxas, sm_90; their wider accumulators or
// their unpacking).
constexpr int kLeanLinesMost = 8;
template <typename T>
constexpr int leanLinesOf() {
  if constexpr (std::is_same<T, LeanCopy>::value) return kLeanLinesMost;
  else return sizeof(T) == 4 ? kLeanLinesMost : 4;
}

// A thread's U lines of step st (lines tid, tid + nt, ...) stored at dst + st.off.
template <int U>
__device__ __forceinline__ void llStoreLines(uint8_t* dst, const LlStep& st, int tid, int nt, const uint64_t (&v)[U]) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int i = tid + u * nt;
    if (i < st.lines) store8(dst + st.off + 8 * static_cast<uint64_t>(i), v[u], lineBytes(st.len, i));
  }
}

// One work's one step with up to U lines a thread: T is the arithmetic of its reductions,
// LeanCopy when the launch only moves data. False when stopped.
template <typename T, int U>
__device__ __forceinline__ bool llLeanWorkLines(const DevComm& comm, const DevWork& w, int ch, LlShared& sh) {
  const Coll coll = w.s.coll;
  const LlRange rg = llRange(w, typeBytes(w.type), ch);
  if (rg.nsteps == 0) return true;
  const LlStep st(rg, 0);
  const int n = comm.nranks, me = comm.rank, tid = threadIdx.x, nt = blockDim.x;
  const bool mine = tid < st.lines;
  const uint8_t* in = static_cast<const uint8_t*>(w.in);
  uint8_t* out = static_cast<uint8_t*>(w.out);
  const LlSetupAt setupAt = llSetupAt(comm, w, ch);  // before the grid wait, as llLeanWork
  int* const abort = &sh.abort;
  // Peer r's lines of this step (its slot in sh.peer: slot).
  auto read = [&](uint64_t (&v)[U], int slot, int peer) {
    const LlPeer& P = sh.peer[slot];
    llReadLines(v, P.recvSlots + (P.recvStep % kLlSlots) * kLlLines, tid, nt, st.lines,
                static_cast<uint32_t>(P.recvStep + 1), &comm, abort, peer);
  };
  if constexpr (!std::is_same<T, LeanCopy>::value) {
    if (collReduces(coll)) {
      const LlTypedRt<T> red(w);
      auto pre = [&red](uint64_t x) { return red.pre(x); };
      // My lines, loaded first: what I send (ReduceScatter: my own block) and reduce.
      const uint8_t* ownSrc = in + (coll == Coll::ReduceScatter ? static_cast<uint64_t>(me) * rg.total : 0);
      uint64_t mineIn[U];
      gridDepWaitThenRelease();
      llLoadLines(mineIn, ownSrc, st, tid, nt, pre);
      LlProf prof(comm, &sh);
      llSetupLoad(setupAt, sh);
      prof.mark(kProfLlSetup);
      if (mine) {
        for (int r = 0; r < n; ++r) {
          if (!llSendsTo(w, r)) continue;
          if (coll == Coll::ReduceScatter) {
            uint64_t v[U];
            llLoadLines(v, in + static_cast<uint64_t>(r) * rg.total, st, tid, nt, pre);
            llSendLines<U>(sh.peer[r], 0, tid, st.lines, v, &comm, abort, r);
          } else {
            llSendLines<U>(sh.peer[r], 0, tid, st.lines, mineIn, &comm, abort, r);
          }
        }
      }
      prof.mark(kProfLlSend);
      if (mine && (coll != Coll::Reduce || me == w.s.root)) {
        typename LlTypedRt<T>::Acc acc[U];
        for (int r = 0; r < n; ++r) {  // in rank order, as the general path
          uint64_t v[U];
          if (r == me) {
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = mineIn[u];
          } else {
            read(v, r, r);
          }
#pragma unroll
          for (int u = 0; u < U; ++u) {
            if (tid + u * nt >= st.lines) continue;
            if (r == 0) red.first(acc[u], v[u]);
            else red.add(acc[u], v[u]);
          }
        }
        uint64_t res[U];
#pragma unroll
        for (int u = 0; u < U; ++u) res[u] = tid + u * nt < st.lines ? red.finish(acc[u]) : 0;
        llStoreLines(out, st, tid, nt, res);
      }
      return llLeanEnd(comm, w, sh, prof, st.len);
    }
  }
  // AllGather, Broadcast, Send, Recv.
  const bool p2p = llIsP2p(w);
  const bool hasSrc = coll == Coll::Broadcast ? me == w.s.root : coll != Coll::Recv;
  uint64_t own[U] = {};
  gridDepWaitThenRelease();
  if (hasSrc) llLoadLines(own, in, st, tid, nt, [](uint64_t x) { return x; });
  LlProf prof(comm, &sh);
  llSetupLoad(setupAt, sh);
  prof.mark(kProfLlSetup);
  if (mine && hasSrc) {
    if (p2p) {
      llSendLines<U>(sh.peer[0], 0, tid, st.lines, own, &comm, abort, w.s.root);
    } else {
      for (int r = 0; r < n; ++r)
        if (llSendsTo(w, r)) llSendLines<U>(sh.peer[r], 0, tid, st.lines, own, &comm, abort, r);
    }
  }
  prof.mark(kProfLlSend);
  if (mine) {
    uint64_t v[U];
    if (coll == Coll::Recv) {
      read(v, 0, w.s.root);
      llStoreLines(out, st, tid, nt, v);
    } else if (coll == Coll::AllGather) {
      for (int r = 0; r < n; ++r) {
        if (r == me) continue;
        read(v, r, r);
        llStoreLines(out + static_cast<uint64_t>(r) * rg.total, st, tid, nt, v);
      }
      uint8_t* local = out + static_cast<uint64_t>(me) * rg.total;
      if (local != in) llStoreLines(local, st, tid, nt, own);
    } else if (coll == Coll::Broadcast) {
      if (me != w.s.root) {
        read(v, w.s.root, w.s.root);
        llStoreLines(out, st, tid, nt, v);
      } else if (out != in) {
        llStoreLines(out, st, tid, nt, own);
      }
    }
  }
  return llLeanEnd(comm, w, sh, prof, st.len);
}

// U lines a thread: the one-line form (U = 1) or the several-line form.
template <typename T, int U>
__device__ __forceinline__ bool llLeanStep(const DevComm& comm, const DevWork& w, int ch, LlShared& sh) {
  if constexpr (U == 1) return llLeanWork<T>(comm, w, ch, sh);
  else return llLeanWorkLines<T, U>(comm, w, ch, sh);
}

// The end of an LL-family launch whose host waits on its completion word (DevComm::doneTarget,
// core/completion.h): each block counts itself done once its threads' stores are, and the
// last one (the count reaching the launch's blocks) zeroes the count for the next such launch
// and raises the word. A launch of one block (the smallest calls, libmccl_mpi's 8 bytes)
// counts nothing: its block raises the word after its fence, two atomic round trips sooner.
// The same parameters serve every replay of a CUDA graph of the launch
// (libmccl_mpi replays its small calls). Blocks of a launch stopped early (abort, timeout)
// never get here, and neither does any later kernel of the communicator (the abort and error
// words stay set), so a count left short never raises a later word early.
__device__ __forceinline__ void llRaiseDone(const DevComm& comm) {
  if (comm.doneTarget == 0) return;
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (comm.doneTarget > 1) {
    __threadfence();
    if (atomicAdd(comm.claims + kDoneWord, 1u) + 1u != comm.doneTarget) return;
    // Every other block has counted, and none touches the count again in this launch; the
    // next launch's blocks see the zero (a kernel boundary), so a plain store does it.
    *reinterpret_cast<volatile uint32_t*>(comm.claims + kDoneWord) = 0u;
  }
  __threadfence_system();
  reinterpret_cast<volatile uint32_t*>(const_cast<int32_t*>(comm.abortFlag))[kDoneFlagWord] = comm.doneTarget;
}

// kOne: the launch is one work that every block runs, block i on channel i (llLeanOne), so
// no block reads the work's fields before it starts on them (queueRuns cost a dependent
// round of parameter loads: 3.65 against 3.15 us for an 8-byte AllReduce in a graph on one
// shared H100), nor its queue entry (a constant-cache miss of its own, 0.09 us of the block's
// start on one H100: bench/results/gpu-1x-2026-12-07c), and its parameters are only the
// communicator and the work (LeanOneArgs). Else the launch is one or two works whose blocks
// follow from the block index too (LeanTwoArgs::first), and no queue entry is read.
template <bool kOne>
using LeanArgs = std::conditional_t<kOne, LeanOneArgs, LeanTwoArgs>;
template <typename T, bool kOne, int U>
__global__ void __launch_bounds__(kMaxThreads, 1) llLeanKernel(const __grid_constant__ LeanArgs<kOne> args) {
  __shared__ LlShared sh;
#if MCCL_LL_PROFILE  // the start from the first instruction, in parts (llStartStamp)
  const uint64_t t0 = globalTimer();
  if (threadIdx.x == 0) {
    for (int i = 0; i < kLlStartStamps; ++i) sh.startNs[i] = 0;
    sh.entryNs = args.comm.prof ? t0 : 0;
    llStartStamp(sh, 0, args.comm.prof);
  }
#else
  if (threadIdx.x == 0) sh.entryNs = args.comm.prof ? globalTimer() : 0;  // MCCL_PROFILE
#endif
  if constexpr (kOne) {
    const int ch = static_cast<int>(blockIdx.x);
    llStartStamp(sh, 1, ch);
    if (!llLeanStep<T, U>(args.comm, args.works[0], ch, sh)) return;
  } else {
    // Both works' channels first, so their parameter loads issue together.
    int ch[LeanTwoArgs::kWorks];
    bool runs[LeanTwoArgs::kWorks];
#pragma unroll
    for (int wi = 0; wi < LeanTwoArgs::kWorks; ++wi) {
      ch[wi] = static_cast<int>(blockIdx.x) - args.first[wi];
      runs[wi] = static_cast<unsigned>(ch[wi]) < static_cast<unsigned>(args.works[wi].s.nchannels);
    }
    llStartStamp(sh, 1, runs[0] ? ch[0] : ch[1]);
#pragma unroll
    for (int wi = 0; wi < LeanTwoArgs::kWorks; ++wi) {  // unrolled: each work at a fixed offset
      if (!runs[wi]) continue;
      if (!llLeanStep<T, U>(args.comm, args.works[wi], ch[wi], sh)) return;
    }
  }
  llRaiseDone(args.comm);
}

// ---- The LL128 kernels -------------------------------------------------------------------
// LL128 launches that reduce one type or only move data. A round of LL128 lines costs about one
// load latency (the input loaded, then stored into the peer's line; the peer's lines polled,
// then stored or reduced) whatever a thread's share of it, so the bytes a block moves per
// round are what its registers hold. The generic kernel, which compiles every protocol and
// operator under one register budget, keeps one line (reductions) or two (copies) in flight
// per thread; compiled alone, these keep twice as many: as many as 128 registers a thread
// hold without spilling (ptxas: 8 lines a thread spilled 156 bytes in copies, 4 lines 152 in
// float sums, 2 lines 32 in int8 sums).
constexpr int kLl128CopyLines = 4;
// Lines a thread in the reduction kernels, in their reductions and in their copies too (a
// group's AllGather, a two-shot AllReduce's second phase): copies of four lines, inlined
// beside the reduction loops, made ptxas spill in the whole kernel (float: 176 bytes of
// stack and 2,144 of spill stores; int8: 200 and 2,260; the sum loop alone spills nothing);
// with the reductions' lines, 40 and 80 (float), 32 and 98 (int8). LL128 reductions of 256
// KiB - 4 MiB took 3-10 % less time on one shared H200 (bench/results/gpu-1xH200-2026-11-29).
template <typename T>
constexpr int ll128ReduceLines() {
  return sizeof(T) >= 2 ? 2 : 1;
}
// Ranks whose lines a thread reads at once (ll128RecvBatch), so that many arrive in one
// round trip: as many as keep a thread's lines in flight at four (lines of four ranks at
// once in reductions of two lines a thread spilled 2.9-3.5 KB a thread). 4 x H200, four
// ranks, against reading one peer after the other (bench/results/gpu-4xH200-2026-11-27e
// call 4): AllGather 1 MiB 12.2 -> 11.3 us, 2 MiB 14.9 -> 14.2; AllReduce 512 KiB and 2 MiB
// 3 % faster, 1 MiB 2 % slower (21.3 -> 21.7 us).
template <typename T>
constexpr int ll128ReducePeers() {
  return 4 / ll128ReduceLines<T>();
}
constexpr int kLl128CopyPeers = 2;

// One work of an LL-family launch on channel ch (kLl128: the launch's protocol): T is the
// arithmetic of its reductions, LeanCopy when the launch only moves data. False when stopped.
//
// Sums run in a loop compiled for them; prod, max and min in one that picks the operator
// per element pair (LlTypedRt). Sums through that one measured 5-9 % slower on LL128 and
// 2-4 % on LL at 1-4 MiB (one shared H100, bench/results/gpu-1xH100-2026-11-25). A
// two-shot LL128 work runs as phases (ll128Phase) in one loop with one call of each loop:
// the phases inlined where they were called took nine inlined loops a kernel, 63 s of cicc
// and ptxas for one of the 22 (2-core AMD EPYC, 2026-12-02); five now.
template <bool kLl128, typename T>
__device__ __forceinline__ bool llFamilyWork(const DevComm* comm, const DevWork* w, int ch, LlShared* sh) {
  constexpr bool kCopyOnly = std::is_same<T, LeanCopy>::value;
  const bool reduces = !kCopyOnly && collReduces(w->s.coll);
  if constexpr (kLl128) {
    if constexpr (kCopyOnly) {
      return ll128CopyLoop<kLl128CopyLines, kLl128CopyPeers>(comm, w, Ll128View(*w), ch, sh);
    } else {
      constexpr int kLines = ll128ReduceLines<T>(), kPeers = ll128ReducePeers<T>();
      // A one-hop reduction calls its loop with the work's own view: through the phase loop
      // (a view of run-time fields) AllReduce and ReduceScatter of 16-256 KiB took 2-4 %
      // longer in a graph (one shared H200, bench/results/gpu-1xH200-2026-12-02 call 1).
      if (reduces && !w->twoShot)
        return w->red == kRedSum
                   ? ll128ReduceLoop<LlTyped<T, OpSum, true>, kLines, kPeers>(comm, w, Ll128View(*w), ch, sh)
                   : ll128ReduceLoop<LlTypedRt<T, true>, kLines, kPeers>(comm, w, Ll128View(*w), ch, sh);
      // Two-shot reductions and the launch's copies (one phase, ll128Phase).
      const int phases = ll128Phases(comm, w);
      for (int i = 0; i < phases; ++i) {
        Ll128View v(*w);
        const bool ok =
            !ll128Phase(comm, w, i, reduces, &v) ? ll128CopyLoop<kLines, kLl128CopyPeers>(comm, w, v, ch, sh)
            : w->red == kRedSum                  ? ll128ReduceLoop<LlTyped<T, OpSum, true>, kLines, kPeers>(comm, w, v, ch, sh)
                                                 : ll128ReduceLoop<LlTypedRt<T, true>, kLines, kPeers>(comm, w, v, ch, sh);
        if (!ok) return false;
      }
      return true;
    }
  } else {
    if constexpr (!kCopyOnly) {
      if (reduces)
        return w->red == kRedSum ? llReduceLoop<LlTyped<T, OpSum>>(comm, w, ch, sh)
                                 : llReduceLoop<LlTypedRt<T>>(comm, w, ch, sh);
    }
    return llCopyWork(comm, w, ch, sh);
  }
}

// The LL-family kernels that are not lean: LL (llKernel<false, T>) or LL128 works, reductions
// of one type T (and any data-movement works) or data movement only (T = LeanCopy).
template <bool kLl128, typename T, typename Args>
__global__ void __launch_bounds__(kMaxThreads, 1) llKernel(const __grid_constant__ Args args) {
  __shared__ LlShared sh;
  __shared__ ArgsShared<Args> a;
  llBlockStart(args, a, sh);
  const DevQueue q = args.queues[blockIdx.x];
  for (int wi = 0; wi < args.nworks; ++wi) {
    const DevWork& w = a.works[wi];
    if (!queueRuns(q, w)) continue;
    if (!llFamilyWork<kLl128, T>(&a.comm, &w, q.channel, &sh)) return;
  }
  llRaiseDone(a.comm);
}

using LeanKernelFn = const void*;  // llLeanKernel<T, kOne, U>: takes LeanArgs<kOne>

// The lean kernel of U lines a thread (1, 2, 4 or 8; none above leanLinesOf<T>()).
template <typename T, bool kOne, int U>
LeanKernelFn llLeanKernelOfType() {
  if constexpr (U > leanLinesOf<T>()) return nullptr;
  else return reinterpret_cast<const void*>(llLeanKernel<T, kOne, U>);
}
template <bool kOne, int U>
LeanKernelFn llLeanKernelFor(bool reduces, int type) {
  if (!reduces) return llLeanKernelOfType<LeanCopy, kOne, U>();
  return withType(type, [](auto t) -> LeanKernelFn { return llLeanKernelOfType<typename decltype(t)::type, kOne, U>(); });
}
template <bool kOne>
LeanKernelFn llLeanKernelFor(bool reduces, int type, int lines) {
  switch (lines) {
    case 1: return llLeanKernelFor<kOne, 1>(reduces, type);
    case 2: return llLeanKernelFor<kOne, 2>(reduces, type);
    case 4: return llLeanKernelFor<kOne, 4>(reduces, type);
    default: return llLeanKernelFor<kOne, kLeanLinesMost>(reduces, type);
  }
}

// True when every block of the launch runs its one work: the blocks are that work's
// channels, block i channel i. (A launch's blocks are the queues of its whole group: a work
// that shares them with another launch's works, or with point-to-point queues, has fewer
// channels; GpuWork::init queues a lone work's channels in order.)
bool llLeanOne(const LaunchSpec& spec, const DevWork* works, int nworks) {
  return nworks == 1 && spec.blocks == works[0].s.nchannels && spec.channelBlocks;
}

// The most lines a thread the lean kernel's forms take for an LL launch (host side):
// leanLinesOf of its arithmetic, or of LeanCopy when it only moves data.
int llLeanLaunchLines(const LaunchSpec& spec) {
  if (spec.kind != LaunchKind::LlReduce) return leanLinesOf<LeanCopy>();
  return withType(spec.type, [](auto t) { return leanLinesOf<typename decltype(t)::type>(); });
}

// The most lines a thread the lean kernel takes for a work of coll: MCCL_LL_LEAN_LINES, or
// the measured choice (one shared H200, bench/results/gpu-1xH200-2026-12-04 call 4, in
// graphs): every form for collectives (AllReduce of 512 KiB on 24 channels, six lines a
// thread: 7.82 us in the form of eight, 9.05 in the general kernel; AllGather and
// Broadcast level), four for Send and Recv, whose form of eight lost to the general
// kernel (a Send/Recv pair of 512 KiB on 16 channels, eight lines: 7.30 against 6.08).
int llLeanMostLines(Coll coll) {
  const int64_t k = knobInt(Knob::LlLeanLines);
  if (k > 0) return static_cast<int>(std::min<int64_t>(k, kLeanLinesMost));
  return coll == Coll::Send || coll == Coll::Recv ? 4 : kLeanLinesMost;
}

// The form of the lean kernel for the works of an LL launch (host side), as the lines a
// thread it moves: 0 when the lean kernel does not take the launch (the general LL
// kernel); else the fewest of 1, 2, 4 and 8 that hold the most lines a thread of any of
// its works (a tiny launch of one or two works, each one step on each of its channels,
// sending nothing to its own rank), within llLeanLaunchLines and llLeanMostLines. The
// fewest, not the most: the same two lines a thread took 6.75 us a call in the form of
// eight (128 registers a thread) against 5.38 in the form of four (AllReduce 256 KiB on 32
// channels, in a graph; one shared H200, call 3: its steps' setup, sends and receives each
// slower, its blocks' start later).
int llLeanLines(const LaunchSpec& spec, const DevWork* works, int nworks) {
  if (!spec.tiny || spec.ll128 || nworks < 1 || nworks > TinyArgs::kWorks) return 0;
  const uint64_t t = static_cast<uint64_t>(spec.threads);
  uint64_t need = 1;
  for (int i = 0; i < nworks; ++i) {
    const DevWork& w = works[i];
    if ((w.s.coll == Coll::Send || w.s.coll == Coll::Recv) && w.s.root == w.s.rank) return 0;
    const uint64_t total = static_cast<uint64_t>(w.s.count) * typeBytes(w.type);
    const uint64_t nch = w.s.nchannels > 0 ? static_cast<uint64_t>(w.s.nchannels) : 1;
    const uint64_t per = (total / nch + 15 + (total % nch ? 1 : 0)) & ~uint64_t(15);  // llRange
    if (per > kLlPayload) return 0;
    const uint64_t perThread = ((per + 7) / 8 + t - 1) / t;  // lines a thread
    if (perThread > 1 && perThread > static_cast<uint64_t>(llLeanMostLines(w.s.coll))) return 0;
    need = std::max(need, perThread);
  }
  if (need > static_cast<uint64_t>(llLeanLaunchLines(spec))) return 0;
  return need <= 1 ? 1 : need <= 2 ? 2 : need <= 4 ? 4 : kLeanLinesMost;
}

LeanKernelFn llLeanKernelOf(const LaunchSpec& spec, const DevWork* works, int nworks, int lines) {
  const bool reduces = spec.kind == LaunchKind::LlReduce;
  return llLeanOne(spec, works, nworks) ? llLeanKernelFor<true>(reduces, spec.type, lines)
                                        : llLeanKernelFor<false>(reduces, spec.type, lines);
}

template <typename Args>
using LlKernelFn = void (*)(Args);

// The kernel of an LL-family launch that is not lean: LL or LL128 (every work of a launch
// has the launch's protocol, specFor), reductions of spec.type or data movement only. None
// for fp8 reductions on LL128, which specFor never sends here (the planner gives fp8 reductions LL or
// Simple): not compiled, so their code takes no device memory when the kernels load.
template <bool kLl128, typename Args>
LlKernelFn<Args> llKernelOf(const LaunchSpec& spec) {
  if (spec.kind == LaunchKind::LlCopy) return llKernel<kLl128, LeanCopy, Args>;
  return withType(spec.type, [](auto t) -> LlKernelFn<Args> {
    using T = typename decltype(t)::type;
    if constexpr (kLl128 && (std::is_same_v<T, Fp8E4M3> || std::is_same_v<T, Fp8E5M2>)) return nullptr;
    else return llKernel<kLl128, T, Args>;
  });
}
template <typename Args>
LlKernelFn<Args> llKernelOf(const LaunchSpec& spec, bool ll128) {
  return ll128 ? llKernelOf<true, Args>(spec) : llKernelOf<false, Args>(spec);
}

template <typename Args>
size_t llStackMax() {
  size_t most = 0;
  cudaFuncAttributes a;
  LaunchSpec spec;
  for (int t = -1; t < ncclNumTypes; ++t) {
    spec.kind = t < 0 ? LaunchKind::LlCopy : LaunchKind::LlReduce;
    spec.type = t;
    for (bool ll128 : {false, true}) {
      const LlKernelFn<Args> fn = llKernelOf<Args>(spec, ll128);
      if (fn != nullptr && cudaFuncGetAttributes(&a, fn) == cudaSuccess && a.localSizeBytes > most)
        most = a.localSizeBytes;
    }
  }
  return most;
}

template <typename Args>
void launchLl(const LaunchSpec& spec, const Args& args, cudaStream_t stream) {
  llKernelOf<Args>(spec, spec.ll128)<<<dim3(spec.blocks), dim3(spec.threads), 0, stream>>>(args);
}

}  // namespace

size_t llKernelStackBytesMax() {
  size_t most = std::max(llStackMax<TinyArgs>(), llStackMax<KernelArgs<kSmallLaunch>>());
  cudaFuncAttributes a;
  for (int t = -1; t < ncclNumTypes; ++t)
    for (int lines : {1, 2, 4, kLeanLinesMost})
      for (LeanKernelFn fn : {llLeanKernelFor<true>(t >= 0, t, lines), llLeanKernelFor<false>(t >= 0, t, lines)})
        if (fn != nullptr && cudaFuncGetAttributes(&a, fn) == cudaSuccess && a.localSizeBytes > most)
        most = a.localSizeBytes;
  cudaGetLastError();
  return most;
}

bool leanOneLaunch(const LaunchSpec& spec, const DevWork* works, int nworks) {
  return llLeanLines(spec, works, nworks) > 0 && llLeanOne(spec, works, nworks);
}

bool leanLlLaunch(const LaunchSpec& spec, const DevWork* works, int nworks) {
  return llLeanLines(spec, works, nworks) > 0 && (llLeanOne(spec, works, nworks) || spec.leanTwo);
}

const void* llKernelFunction(const LaunchSpec& spec, const DevWork* works, int nworks) {
  if (leanLlLaunch(spec, works, nworks))
    return llLeanKernelOf(spec, works, nworks, llLeanLines(spec, works, nworks));
  if (spec.tiny) return reinterpret_cast<const void*>(llKernelOf<TinyArgs>(spec, spec.ll128));
  return reinterpret_cast<const void*>(llKernelOf<KernelArgs<kSmallLaunch>>(spec, spec.ll128));
}

// The LL-family and Simple kernels wait for the previous grid (grid_dep.cuh) in their sm_90
// code only (every kernel is compiled for the same architectures).
bool kernelWaitsForGrid(const LaunchSpec& spec, int dev) {
  static GridDepDevices devices;
  return spec.kind != LaunchKind::Generic &&
         devices.runs(reinterpret_cast<const void*>(llLeanKernel<LeanCopy, true, 1>), dev);
}

void launchLlKernel(const LaunchSpec& spec, const void* args, cudaStream_t stream) {
  const DevWork* works = nullptr;
  int nworks = 0;
  if (spec.leanOne) {
    works = static_cast<const LeanOneArgs*>(args)->works;
    nworks = 1;
  } else if (spec.leanTwo) {
    works = static_cast<const LeanTwoArgs*>(args)->works;
    nworks = works[1].s.nchannels > 0 ? 2 : 1;  // a lone work leaves the second without channels
  } else if (spec.tiny) {
    works = static_cast<const TinyArgs*>(args)->works;
    nworks = static_cast<const TinyArgs*>(args)->nworks;
  }
  const int lines = spec.tiny && leanLlLaunch(spec, works, nworks) ? llLeanLines(spec, works, nworks) : 0;
  if (lines > 0) {  // (errors: the caller's cudaGetLastError)
    void* params[] = {const_cast<void*>(args)};
    cudaLaunchKernel(llLeanKernelOf(spec, works, nworks, lines), dim3(spec.blocks), dim3(spec.threads), params, 0,
                     stream);
  } else if (spec.tiny) launchLl(spec, *static_cast<const TinyArgs*>(args), stream);
  else launchLl(spec, *static_cast<const KernelArgs<kSmallLaunch>*>(args), stream);
}

}  // namespace mccl
