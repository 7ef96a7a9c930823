// The GPU executor: one block per queue (a channel of collectives, or the point-to-point
// operations with one peer in one direction) walks the schedules of src/algorithms, the
// same step functions the host engine follows.
//
// collKernel<MW, S> runs every protocol for works whose arithmetic is on type S (every
// operator), and any data movement; S = NoArith: data movement only. Everything is inlined
// into the kernel: no call saves registers to the stack, and no kernel carries code for
// types it does not serve, so each fits the 128 registers of a 512-thread block with a
// small stack (the driver keeps the largest kernel stack for every thread slot of the
// GPU: checked at build time, scripts/nvcc-stack-check.sh). Instantiated per type family
// in coll_kernel_{copy,int,float}.cu, which build in parallel.
//
// The Simple protocol's steps (waits, 16-byte copies and reductions) are in
// simple_proto.cuh; the common Simple launches (ring, chain and point-to-point works only)
// run in kernels of their own (simple_kernel.cuh).
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "kernels/primitives/block_start.cuh"
#include "kernels/primitives/dev_reduce.cuh"
#include "kernels/primitives/dev_sync.cuh"
#include "kernels/work/dev_work.h"
#include "kernels/launch/launch.h"
#include "kernels/protocols/ll128_proto.cuh"
#include "kernels/protocols/ll_proto.cuh"
#include "kernels/protocols/simple_proto.cuh"
#include "nccl.h"

namespace mccl {

template <int MW>
using CollKernelFn = void (*)(KernelArgs<MW>);

namespace {

// ---- Steps ------------------------------------------------------------------------------------

// Connections a lane uses, looked up once per work and kept with their step counters in
// shared memory (written back when the work ends): no global-memory round trips per step.
struct CachedConn {
  DevConn c;
  uint64_t n;  // posted (send) or consumed (recv)
  int32_t peer;
  int32_t send;
};
constexpr int kConnCache = 8;

// Steps of a lane's schedule computed together, one a thread, ahead of their use. One
// step's schedule (stepAt) took about 2 us of a block's time on an H100 between a step's
// post and the next step's start (MCCL_PROFILE, bench/results/gpu-1xH100-2026-11-25b):
// computed a batch at a time, a step after the batch's first costs a read of shared memory.
constexpr int kStepBatch = 32;

// Per-lane state in shared memory: the batch of steps, and what thread 0 found for the step.
struct LaneShared {
  Step steps[kStepBatch];
  uint8_t* in[kMaxStepPeers];
  uint8_t* out[kMaxStepPeers];
  CachedConn* rconn[kMaxStepPeers];
  CachedConn* sconn[kMaxStepPeers];
  CachedConn cache[kConnCache];
  int ncache;
  int abort;
  unsigned long long prof[5];  // MCCL_PROFILE (thread 0): wait, move, post, bytes, steps
  // MCCL_PROFILE, lane 0: when the block started (until its first step), the time from
  // then to the first step, to the end of the parameters' copy and to the first work's
  // step loop, when the last step's post ended, and the time between steps (ProfWord).
  uint64_t entryNs;
  uint64_t startNs;
  uint64_t argsNs;
  uint64_t setupNs;
  uint64_t lastNs;
  uint64_t gapNs;
  uint64_t gaps;
};

struct LaneCtx {
  int id;        // 0 or 1
  int tid;       // thread index within the lane
  int nthreads;  // threads of the lane
  int barrier;   // named barrier of the lane
};

// Thread 0 of a lane: the cached connection to peer (loaded on first use). A receiving
// connection of a work marked kXchgRecv posts an offer of null when first used (this kernel
// never takes the user-buffer path, dev_work.h): a Simple kernel sending waits for it. A
// work of units by agreement (kUnitsAgree) says no on first use, as either end (this
// kernel takes no units); the sending end after the receiver's word, so that a Simple
// kernel receiving learns it. Null when aborted or past MCCL_TIMEOUT.
__device__ __forceinline__ CachedConn* lookup(const DevComm& comm, LaneShared& sh, ConnClass cls, int ch, int peer, bool send,
                                              bool offers = false, bool agree = false) {
  for (int k = 0; k < sh.ncache; ++k)
    if (sh.cache[k].peer == peer && sh.cache[k].send == (send ? 1 : 0)) return &sh.cache[k];
  CachedConn* e = &sh.cache[sh.ncache < kConnCache ? sh.ncache++ : kConnCache - 1];
  e->c = *devConn(comm, peer, connIndex(comm, cls, ch, send));
  e->n = *e->c.step;
  e->peer = peer;
  e->send = send ? 1 : 0;
  if (offers && !send) postOffer(e->c.buf, nullptr, e->n);
  if (agree) {
    uint64_t* const a = agreeWords(e->c.buf);
    if (!send) {
      stReleaseSys(a, 2 * (e->n + 1));
    } else {
      if (!waitAtLeast(comm, a, 2 * (e->n + 1), peer)) return nullptr;
      stVolatile(a + 1, 2 * (e->n + 1));
    }
  }
  return e;
}

__device__ __forceinline__ void writeBack(LaneShared& sh) {
  for (int k = 0; k < sh.ncache; ++k) *sh.cache[k].c.step = sh.cache[k].n;
  sh.ncache = 0;
}

__device__ __forceinline__ uint8_t* bufPtr(const DevWork& w, uint8_t* scratch, size_t esize, Buf b, int64_t off) {
  switch (b) {
    case Buf::Input: return const_cast<uint8_t*>(static_cast<const uint8_t*>(w.in)) + static_cast<size_t>(off) * esize;
    case Buf::Output: return static_cast<uint8_t*>(w.out) + static_cast<size_t>(off) * esize;
    case Buf::Scratch: return scratch + static_cast<size_t>(off) * esize;
    default: return nullptr;
  }
}

// Runs one lane of one work on channel ch. Returns false when aborted.
template <typename S>
__device__ __forceinline__ bool runLane(const DevComm& comm, const DevWork& w, int ch, const LaneCtx& lc, LaneShared& sh) {
  const Schedule& s = w.s;
  const ConnClass cls = connClassOf(s.algo);
  const int connCh = ch;
  const size_t esize = typeBytes(w.type);
  const int64_t nsteps = numSteps(s, ch, lc.id);
  const bool reduces = s.coll == Coll::AllReduce || s.coll == Coll::Reduce || s.coll == Coll::ReduceScatter;
  uint8_t* scratch = w.scratch ? static_cast<uint8_t*>(w.scratch) +
                                     static_cast<size_t>(ch * numLanes(s) + lc.id) * static_cast<size_t>(s.chunk) * esize
                               : nullptr;
  if (lc.tid == 0) {
    sh.ncache = 0;
    for (int k = 0; k < 5; ++k) sh.prof[k] = 0;
  }
  // Counters count slices: every step moves `nsl` slices through each of its connections
  // (empty ones too, so both sides stay in step), and the next step's first slice can
  // start as soon as the peer posted it, not when its whole chunk is done.
  const int nsl = comm.slices > 0 ? comm.slices : 1;
  const int64_t alignElems = esize >= 16 ? 1 : static_cast<int64_t>(16 / esize);
  if (comm.prof && lc.tid == 0 && sh.entryNs) sh.setupNs = globalTimer() - sh.entryNs;
  for (int64_t i = 0; i < nsteps; ++i) {
    const int j = static_cast<int>(i % kStepBatch);
    if (j == 0) {
      // Once every thread of the lane has read the last batch (empty steps pass no barrier).
      if (i > 0) laneSync(lc.barrier, lc.nthreads);
      for (int t = lc.tid; t < kStepBatch && i + t < nsteps; t += lc.nthreads) sh.steps[t] = stepAt(s, ch, lc.id, i + t);
      laneSync(lc.barrier, lc.nthreads);
    }
    const Step st = sh.steps[j];
    if (st.count == 0) continue;
    const int64_t per = roundUp(divUp(st.count, nsl), alignElems);
    const bool reduceStep = reduces && w.premul && st.src == Buf::Input;
    uint8_t* const srcBase = st.src != Buf::None ? bufPtr(w, scratch, esize, st.src, st.srcOffset) : nullptr;
    uint8_t* const dstBase = st.dst != Buf::None ? bufPtr(w, scratch, esize, st.dst, st.dstOffset) : nullptr;
    for (int sl = 0; sl < nsl; ++sl) {
      const int64_t off = min64(per * sl, st.count);
      const int64_t cnt = min64(per, st.count - off);
      const uint64_t t0 = comm.prof && lc.tid == 0 ? globalTimer() : 0;
      uint64_t t1 = 0;
      if (lc.tid == 0) {
        bool ok = true;
        for (int k = 0; k < st.nrecv && ok; ++k) {
          CachedConn* e = lookup(comm, sh, cls, connCh, st.recvPeer[k], false, (w.xchg & kXchgRecv) != 0,
                                 w.units == kUnitsAgree);
          ok = waitAtLeast(comm, e->c.tail, e->n + 1, st.recvPeer[k]);
          sh.rconn[k] = e;
          sh.in[k] = e->c.buf + ((e->n / nsl) % e->c.slots) * e->c.slotBytes + static_cast<size_t>(off) * esize;
        }
        for (int k = 0; k < st.nsend && ok; ++k) {
          CachedConn* e = lookup(comm, sh, cls, connCh, st.sendPeer[k], true, false, w.units == kUnitsAgree);
          if (!e) {
            ok = false;
            break;
          }
          const uint64_t slot = e->n / nsl;
          // A slot is reused once the receiver has consumed every slice of its last use.
          if (e->n % nsl == 0 && slot >= e->c.slots)
            ok = waitAtLeast(comm, e->c.head, (slot - e->c.slots + 1) * nsl, st.sendPeer[k]);
          sh.sconn[k] = e;
          sh.out[k] = e->c.buf + (slot % e->c.slots) * e->c.slotBytes + static_cast<size_t>(off) * esize;
        }
        sh.abort = ok ? 0 : 1;
        if (!ok) writeBack(sh);
        if (t0) t1 = globalTimer();
      }
      laneSync(lc.barrier, lc.nthreads);
      if (sh.abort) return false;
      if (cnt > 0) {
        Io io;
        io.nin = st.nrecv;
        io.in[0] = st.nrecv > 0 ? sh.in[0] : nullptr;
        io.in[1] = st.nrecv > 1 ? sh.in[1] : nullptr;
        io.src = srcBase ? srcBase + static_cast<size_t>(off) * esize : nullptr;
        uint8_t* dst = dstBase ? dstBase + static_cast<size_t>(off) * esize : nullptr;
        // In place with nothing else to do: the data is already where it belongs.
        bool skipDst = dst != nullptr && dst == io.src && st.nrecv == 0 && !reduceStep && !(st.final && w.postDiv > 1);
        // Constant indices keep the Io in registers (a running index put it in local memory:
        // a round trip every step, bench/results/gpu-1xH100-2026-11-25c).
        uint8_t* const d = dst && !skipDst ? dst : nullptr;
        uint8_t* const s0 = st.nsend > 0 ? sh.out[0] : nullptr;
        uint8_t* const s1 = st.nsend > 1 ? sh.out[1] : nullptr;
        io.out[0] = d ? d : s0;
        io.out[1] = d ? s0 : s1;
        io.out[2] = d ? s1 : nullptr;
        io.nout = (d ? 1 : 0) + st.nsend;
        io.count = static_cast<size_t>(cnt);
        io.premul = reduceStep;
        io.scalarBits = w.scalarBits;
        io.scalarPtr = w.scalarPtr;
        io.postDiv = st.final ? w.postDiv : 0;
        const int inputs = st.nrecv + (io.src ? 1 : 0);
        if (io.nout > 0) {
          if (inputs == 1 && !io.premul && io.postDiv <= 1)
            copyBytes(io, static_cast<size_t>(cnt) * esize, io.src == nullptr, lc.tid, lc.nthreads);
          else if constexpr (!std::is_same<S, NoArith>::value)
            combineOp<S>(w.red, io, lc.tid, lc.nthreads);
          else
            __trap();  // the host launches reducing works only in the kernel of their type
        }
      }
      laneSync(lc.barrier, lc.nthreads);
      const uint64_t t2 = t0 ? globalTimer() : 0;
      if (lc.tid == 0) {
        // A network connection's proxy puts only the bytes of the slice: say where they are.
        for (int k = 0; k < st.nsend; ++k) {
          CachedConn* e = sh.sconn[k];
          if (e->c.sizes)
            e->c.sizes[e->n % (static_cast<uint64_t>(e->c.slots) * nsl)] =
                static_cast<uint64_t>(off) * esize << 32 | static_cast<uint64_t>(cnt) * esize;
        }
        // Every thread's stores (ordered by the barrier) become visible before the flags:
        // one system fence, then plain volatile flag stores. A step that sent nothing only
        // tells its senders it has read their slots (its loads are done: their values were
        // stored before the barrier), so it needs no fence.
        if (st.nsend > 0) fenceSys(comm.fence);
        for (int k = 0; k < st.nsend; ++k) {
          CachedConn* e = sh.sconn[k];
          *reinterpret_cast<volatile uint64_t*>(e->c.tail) = ++e->n;
        }
        for (int k = 0; k < st.nrecv; ++k) {
          CachedConn* e = sh.rconn[k];
          *reinterpret_cast<volatile uint64_t*>(e->c.head) = ++e->n;
        }
        if (t0) {
          if (sh.entryNs) {
            sh.startNs = t0 - sh.entryNs;
            sh.entryNs = 0;
          } else if (sh.lastNs) {
            sh.gapNs += t0 - sh.lastNs;
            sh.gaps += 1;
          }
          sh.lastNs = globalTimer();
          sh.prof[0] += t1 - t0;
          sh.prof[1] += t2 - t1;
          sh.prof[2] += sh.lastNs - t2;
          sh.prof[3] += static_cast<unsigned long long>(cnt) * esize;
          sh.prof[4] += 1;
        }
      }
    }
  }
  if (lc.tid == 0) {
    writeBack(sh);
    if (comm.prof && sh.prof[4]) {
      atomicAdd(comm.prof + kProfSimpleSteps, sh.prof[4]);
      atomicAdd(comm.prof + kProfSimpleWait, sh.prof[0]);
      atomicAdd(comm.prof + kProfSimpleMove, sh.prof[1]);
      atomicAdd(comm.prof + kProfSimplePost, sh.prof[2]);
      atomicAdd(comm.prof + kProfSimpleBytes, sh.prof[3]);
    }
  }
  return true;
}

// ---- LL dispatch ------------------------------------------------------------------------------

// Sums in a loop compiled for them, prod, max and min in one that picks the operator per
// element pair (LlTypedRt, as the LL kernels of ll_kernel.cu do): two reduction functions
// a protocol and type where a function per operator took the generic kernels' build 8 (the
// LL reductions' loops were most of ptxas's time, 47 s a kernel).
template <typename S>
__device__ __forceinline__ bool llRun(const DevComm& comm, const DevWork& w, int ch, LlShared& sh) {
  const bool ll128 = w.proto == kProtoLl128;
  const bool sum = w.red == kRedSum;
  if constexpr (std::is_same<S, Fp8E4M3>::value || std::is_same<S, Fp8E5M2>::value) {
    // The planner never gives LL128 to an fp8 reduction: its accumulators put the kernel's
    // stack over MCCL_KERNEL_STACK_BUDGET.
    if (collReduces(w.s.coll)) {
      if (ll128) __trap();
      return sum ? llReduceWork<LlTyped<S, OpSum>>(&comm, &w, ch, &sh) : llReduceWork<LlTypedRt<S>>(&comm, &w, ch, &sh);
    }
  } else if constexpr (!std::is_same<S, NoArith>::value) {
    if (collReduces(w.s.coll) && ll128) {
      auto reduce = [&](const Ll128View& v) {
        return sum ? ll128ReduceWork<LlTyped<S, OpSum, true>>(&comm, &w, &v, ch, &sh)
                   : ll128ReduceWork<LlTypedRt<S, true>>(&comm, &w, &v, ch, &sh);
      };
      if (!w.twoShot) return reduce(Ll128View(w));
      return ll128TwoShot(&comm, &w, reduce, [&](const Ll128View& v) { return ll128CopyWork(&comm, &w, &v, ch, &sh); });
    }
    if (collReduces(w.s.coll))
      return sum ? llReduceWork<LlTyped<S, OpSum>>(&comm, &w, ch, &sh) : llReduceWork<LlTypedRt<S>>(&comm, &w, ch, &sh);
  } else {
    if (collReduces(w.s.coll)) __trap();  // as in runLane
  }
  if (ll128) {
    const Ll128View v(w);
    return ll128CopyWork(&comm, &w, &v, ch, &sh);
  }
  return llCopyWork(&comm, &w, ch, &sh);
}

// ---- Kernels ----------------------------------------------------------------------------------

// One block per queue runs its works in call order: every protocol, arithmetic on S. The
// launch's communicator and works are read from shared memory (block_start.cuh).
template <int MW, typename S>
__global__ void __launch_bounds__(kMaxThreads, 1) collKernel(const __grid_constant__ KernelArgs<MW> args) {
  __shared__ LaneShared shared[2];
  __shared__ LlShared llShared;
  __shared__ ArgsShared<KernelArgs<MW>> a;
  if (threadIdx.x == 0) {  // MCCL_PROFILE: the block's start, for its first work
    const uint64_t entry = args.comm.prof ? globalTimer() : 0;
    llShared.entryNs = shared[0].entryNs = entry;
    shared[1].entryNs = 0;
    shared[0].startNs = shared[0].argsNs = shared[0].setupNs = shared[0].lastNs = 0;
    shared[0].gapNs = shared[0].gaps = 0;
  }
  const DevQueue q = args.queues[blockIdx.x];
  copyArgsToShared(args, a);
  if (threadIdx.x == 0 && shared[0].entryNs) shared[0].argsNs = globalTimer() - shared[0].entryNs;
  const DevComm& comm = a.comm;
  const int nt = blockDim.x;
  for (int wi = 0; wi < args.nworks; ++wi) {
    const DevWork& w = a.works[wi];
    if (!queueRuns(q, w)) continue;
    const int ch = q.channel;
    bool ok = true;
    if (w.selfCopy) {
      selfCopyChannel(w, typeBytes(w.type), ch, threadIdx.x, nt);
    } else if (w.proto != kProtoSimple) {
      ok = llRun<S>(comm, w, ch, llShared);
    } else {
      if (threadIdx.x == 0) shared[0].abort = shared[1].abort = 0;
      __syncthreads();
      // Two lanes (the tree's reduce-up and broadcast-down) run on the two halves of the
      // block; one call site, so the lane is inlined once.
      const bool two = numLanes(w.s) == 2;
      const int half = nt / 2;
      const LaneCtx lc = two ? LaneCtx{threadIdx.x < half ? 0 : 1, static_cast<int>(threadIdx.x) % half, half,
                                       threadIdx.x < half ? 1 : 2}
                             : LaneCtx{0, static_cast<int>(threadIdx.x), nt, 1};
      ok = runLane<S>(comm, w, ch, lc, shared[lc.id]);
      if (two) {
        __syncthreads();
        ok = ok && shared[0].abort == 0 && shared[1].abort == 0;
      }
    }
    if (!ok) return;
    if (threadIdx.x == 0) llShared.entryNs = shared[0].entryNs = 0;  // only the first work's start
  }
  if (threadIdx.x == 0 && comm.prof && shared[0].lastNs) {
    const LaneShared& p = shared[0];
    atomicAdd(comm.prof + kProfSimpleStart, static_cast<unsigned long long>(p.startNs));
    atomicAdd(comm.prof + kProfSimpleArgs, static_cast<unsigned long long>(p.argsNs));
    atomicAdd(comm.prof + kProfSimpleSetup, static_cast<unsigned long long>(p.setupNs));
    atomicAdd(comm.prof + kProfSimpleEnd, static_cast<unsigned long long>(globalTimer() - p.lastNs));
    atomicAdd(comm.prof + kProfSimpleBlocks, 1ull);
    atomicAdd(comm.prof + kProfSimpleGap, static_cast<unsigned long long>(p.gapNs));
    atomicAdd(comm.prof + kProfSimpleGaps, static_cast<unsigned long long>(p.gaps));
  }
}

}  // namespace

// The kernels of each family (coll_kernel_{copy,int,float}.cu): for NoArith, and by
// ncclDataType_t (null for a type not of the family).
template <int MW>
CollKernelFn<MW> collKernelCopy();
template <int MW>
CollKernelFn<MW> collKernelInt(int type);
template <int MW>
CollKernelFn<MW> collKernelFloat(int type);

}  // namespace mccl
