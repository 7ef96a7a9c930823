// The LL kernels compiled for one arithmetic: sums of one type (the common launch of small
// messages, src/kernels/ll_proto.cuh inlined for exactly that type) and data movement
// only. Groups that mix protocols, types or operators run in the generic kernel
// (coll_kernel.cu). A translation unit of its own, so the two compile in parallel.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "kernels/dev_work.h"
#include "kernels/launch.h"
#include "kernels/launch_fn.h"
#include "kernels/ll_proto.cuh"
#include "nccl.h"

namespace mccl {
namespace {

// What the works of a launch read, copied from the kernel's parameters to shared memory
// when the block starts: the work functions reach DevComm and DevWork through pointers,
// and a load through a pointer into the parameters is slow (MCCL_PROFILE measured 1.25 us
// from a block's start to its first work's setup on an H100, two such loads deep), where
// the copy is one round of loads, 8 bytes a thread, and every later read is shared memory.
template <typename Args>
struct LlArgsShared {
  DevComm comm;
  DevWork works[Args::kWorks];
};

template <typename Args>
__device__ __forceinline__ void llBlockStart(const Args& args, LlArgsShared<Args>& a, LlShared& sh) {
  static_assert(sizeof(DevComm) % 8 == 0 && sizeof(DevWork) % 8 == 0, "copied in 8-byte words");
  static_assert(offsetof(Args, works) % 8 == 0, "works are 8-byte aligned");
  if (threadIdx.x == 0) sh.entryNs = args.comm.prof ? globalTimer() : 0;  // MCCL_PROFILE
  constexpr int kCommWords = sizeof(DevComm) / 8, kWorkWords = sizeof(DevWork) / 8;
  const int words = kCommWords + args.nworks * kWorkWords;
  const uint64_t* comm = reinterpret_cast<const uint64_t*>(&args.comm);
  const uint64_t* works = reinterpret_cast<const uint64_t*>(&args.works[0]);
  for (int i = threadIdx.x; i < words; i += blockDim.x) {
    if (i < kCommWords) reinterpret_cast<uint64_t*>(&a.comm)[i] = comm[i];
    else reinterpret_cast<uint64_t*>(&a.works[0])[i - kCommWords] = works[i - kCommWords];
  }
  __syncthreads();
}

// LL works that sum one type (and any data-movement LL works): the common launch of small
// messages, compiled for exactly that arithmetic.
template <typename T, typename Args>
__global__ void __launch_bounds__(kMaxThreads, 1) llSumKernel(const __grid_constant__ Args args) {
  __shared__ LlShared sh;
  __shared__ LlArgsShared<Args> a;
  llBlockStart(args, a, sh);
  const DevQueue q = args.queues[blockIdx.x];
  for (int wi = 0; wi < args.nworks; ++wi) {
    const DevWork& w = a.works[wi];
    if (!queueRuns(q, w)) continue;
    const bool ok = collReduces(w.s.coll) ? llReduceWork<T, OpSum>(&a.comm, &w, q.channel, &sh)
                                          : llCopyWork(&a.comm, &w, q.channel, &sh);
    if (!ok) return;
  }
}

// LL works that only move data (AllGather, Broadcast, Send, Recv).
template <typename Args>
__global__ void __launch_bounds__(kMaxThreads, 1) llCopyKernel(const __grid_constant__ Args args) {
  __shared__ LlShared sh;
  __shared__ LlArgsShared<Args> a;
  llBlockStart(args, a, sh);
  const DevQueue q = args.queues[blockIdx.x];
  for (int wi = 0; wi < args.nworks; ++wi) {
    const DevWork& w = a.works[wi];
    if (!queueRuns(q, w)) continue;
    if (!llCopyWork(&a.comm, &w, q.channel, &sh)) return;
  }
}

// ---- The lean LL kernel ------------------------------------------------------------------
// The common small call: one AllReduce (a sum), AllGather or Broadcast whose every channel
// moves at most one line per thread in one step (llLeanFits). The general kernels above
// spend about 4 us of an 8-byte AllReduce's kernel on one H100 in serial bookkeeping on
// the block's first thread (bench/results/gpu-1xH100-2026-11-24e: the parameters copied to
// shared memory, the work loop, the range's arithmetic, the step loop), and its input
// load starts only after that. Here every read of the launch's parameters is a warp-uniform
// constant load at a fixed offset, the input's line is loaded first, and its latency
// overlaps the connections' round trip (llSetup); then one store per peer, one read per
// peer, the block barrier, and the credits (llEndStep), as the general path does for one
// step: same connections, lines, flags and step counters, so the two mix on a communicator.
struct LeanCopy {};

template <typename T>
__device__ __forceinline__ void llLeanRun(const TinyArgs& args, LlShared& sh) {
  constexpr bool kReduces = !std::is_same<T, LeanCopy>::value;
  const DevComm& comm = args.comm;
  const DevWork& w = args.works[0];
  const int ch = args.queues[blockIdx.x].channel;
  const int n = comm.nranks, me = comm.rank, tid = threadIdx.x;
  const Coll coll = w.s.coll;
  const LlRange rg = llRange(w, typeBytes(w.type), ch);
  if (rg.nsteps == 0) return;
  const LlStep st(rg, 0);
  const bool mine = tid < st.lines;
  const int nbytes = mine ? lineBytes(st.len, tid) : 0;
  const uint8_t* in = static_cast<const uint8_t*>(w.in);
  uint8_t* out = static_cast<uint8_t*>(w.out);
  const bool hasSrc = coll != Coll::Broadcast || me == w.s.root;
  uint64_t own = mine && hasSrc ? load8(in + st.off + 8 * static_cast<uint64_t>(tid), nbytes) : 0;
  LlProf prof(comm, &sh);
  llSetup(comm, w, ch, sh);
  prof.mark(kProfLlSetup);
  int* const abort = &sh.abort;
  if (mine && hasSrc) {
    const uint64_t v[1] = {own};
    for (int r = 0; r < n; ++r)
      if (llSendsTo(w, r)) llSendLines<1>(sh.peer[r], 0, tid, st.lines, v, &comm, abort, r);
  }
  prof.mark(kProfLlSend);
  if (mine) {
    if constexpr (kReduces) {
      using R = LlRed<T, OpSum>;
      typename R::Acc acc;
      for (int r = 0; r < n; ++r) {
        const LlPeer& P = sh.peer[r];
        const uint64_t v = r == me ? own
                                   : llRead(P.recvSlots + (P.recvStep % kLlSlots) * kLlLines + tid,
                                            static_cast<uint32_t>(P.recvStep + 1), &comm, abort, r);
        if (r == 0) R::first(acc, v);
        else R::add(acc, v);
      }
      store8(out + st.off + 8 * static_cast<uint64_t>(tid), R::finish(acc, 0), nbytes);
    } else {
      // AllGather: every block in its place; Broadcast: the root's.
      for (int r = 0; r < n; ++r) {
        const bool gather = coll == Coll::AllGather;
        if (gather ? r == me : (r != w.s.root || me == w.s.root)) continue;
        const LlPeer& P = sh.peer[r];
        const uint64_t v = llRead(P.recvSlots + (P.recvStep % kLlSlots) * kLlLines + tid,
                                  static_cast<uint32_t>(P.recvStep + 1), &comm, abort, r);
        store8(out + (gather ? static_cast<uint64_t>(r) * rg.total : 0) + st.off + 8 * static_cast<uint64_t>(tid), v,
               nbytes);
      }
      uint8_t* localDst = coll == Coll::AllGather ? out + static_cast<uint64_t>(me) * rg.total
                                                  : (me == w.s.root ? out : nullptr);
      if (localDst && localDst != in) store8(localDst + st.off + 8 * static_cast<uint64_t>(tid), own, nbytes);
    }
  }
  prof.mark(kProfLlRecv);
  if (!llEndStep(comm, w, sh, 0, 1)) return;
  prof.mark(kProfLlEnd);
  prof.step(st.len);
  prof.flush();
}

template <typename T>
__global__ void __launch_bounds__(kMaxThreads, 1) llLeanKernel(const __grid_constant__ TinyArgs args) {
  __shared__ LlShared sh;
  if (threadIdx.x == 0) sh.entryNs = args.comm.prof ? globalTimer() : 0;  // MCCL_PROFILE
  llLeanRun<T>(args, sh);
}

using LeanKernelFn = void (*)(TinyArgs);

LeanKernelFn llLeanKernelFor(bool reduces, int type) {
  if (!reduces) return llLeanKernel<LeanCopy>;
  switch (type) {
    case ncclInt8: return llLeanKernel<int8_t>;
    case ncclUint8: return llLeanKernel<uint8_t>;
    case ncclInt32: return llLeanKernel<int32_t>;
    case ncclUint32: return llLeanKernel<uint32_t>;
    case ncclInt64: return llLeanKernel<int64_t>;
    case ncclUint64: return llLeanKernel<uint64_t>;
    case ncclFloat16: return llLeanKernel<__half>;
    case ncclFloat32: return llLeanKernel<float>;
    case ncclFloat64: return llLeanKernel<double>;
    case ncclBfloat16: return llLeanKernel<__nv_bfloat16>;
    case ncclFloat8e4m3: return llLeanKernel<Fp8E4M3>;
    default: return llLeanKernel<Fp8E5M2>;
  }
}

// True when the lean kernel runs the works of a tiny LL launch (host side): one AllReduce
// that sums without scaling, AllGather or Broadcast, every channel's share one step of at
// most one line per thread.
bool llLeanFits(const LaunchSpec& spec, const DevWork* works, int nworks) {
  if (!spec.tiny || nworks != 1) return false;
  const DevWork& w = works[0];
  if (w.proto != kProtoLl || w.s.algo == Algo::P2p) return false;
  if (w.s.coll == Coll::AllReduce) {
    if (w.red != kRedSum || w.premul || w.postDiv > 1) return false;
  } else if (w.s.coll != Coll::AllGather && w.s.coll != Coll::Broadcast) {
    return false;
  }
  const uint64_t total = static_cast<uint64_t>(w.s.count) * typeBytes(w.type);
  const uint64_t nch = w.s.nchannels > 0 ? static_cast<uint64_t>(w.s.nchannels) : 1;
  const uint64_t per = (total / nch + 15 + (total % nch ? 1 : 0)) & ~uint64_t(15);  // llRange
  return per <= kLlPayload && (per + 7) / 8 <= static_cast<uint64_t>(spec.threads);
}

template <typename Args>
using LlKernelFn = void (*)(Args);

template <typename Args>
LlKernelFn<Args> llSumKernelFor(int type) {
  switch (type) {
    case ncclInt8: return llSumKernel<int8_t, Args>;
    case ncclUint8: return llSumKernel<uint8_t, Args>;
    case ncclInt32: return llSumKernel<int32_t, Args>;
    case ncclUint32: return llSumKernel<uint32_t, Args>;
    case ncclInt64: return llSumKernel<int64_t, Args>;
    case ncclUint64: return llSumKernel<uint64_t, Args>;
    case ncclFloat16: return llSumKernel<__half, Args>;
    case ncclFloat32: return llSumKernel<float, Args>;
    case ncclFloat64: return llSumKernel<double, Args>;
    case ncclBfloat16: return llSumKernel<__nv_bfloat16, Args>;
    case ncclFloat8e4m3: return llSumKernel<Fp8E4M3, Args>;
    default: return llSumKernel<Fp8E5M2, Args>;
  }
}

template <typename Args>
size_t llStackMax() {
  size_t most = 0;
  cudaFuncAttributes a;
  if (cudaFuncGetAttributes(&a, llCopyKernel<Args>) == cudaSuccess) most = a.localSizeBytes;
  for (int t = 0; t < ncclNumTypes; ++t)
    if (cudaFuncGetAttributes(&a, llSumKernelFor<Args>(t)) == cudaSuccess && a.localSizeBytes > most)
      most = a.localSizeBytes;
  return most;
}

template <typename Args>
void launchLl(const LaunchSpec& spec, const Args& args, cudaStream_t stream) {
  LlKernelFn<Args> fn = spec.kind == LaunchKind::LlCopy ? llCopyKernel<Args> : llSumKernelFor<Args>(spec.type);
  fn<<<dim3(spec.blocks), dim3(spec.threads), 0, stream>>>(args);
}

}  // namespace

size_t llKernelStackBytesMax() {
  size_t most = std::max(llStackMax<TinyArgs>(), llStackMax<KernelArgs<kSmallLaunch>>());
  cudaFuncAttributes a;
  for (int t = -1; t < ncclNumTypes; ++t)
    if (cudaFuncGetAttributes(&a, llLeanKernelFor(t >= 0, t)) == cudaSuccess && a.localSizeBytes > most)
      most = a.localSizeBytes;
  cudaGetLastError();
  return most;
}

const void* llKernelFunction(const LaunchSpec& spec, const DevWork* works, int nworks) {
  if (llLeanFits(spec, works, nworks))
    return reinterpret_cast<const void*>(llLeanKernelFor(spec.kind == LaunchKind::LlSum, spec.type));
  if (spec.tiny)
    return reinterpret_cast<const void*>(spec.kind == LaunchKind::LlCopy ? llCopyKernel<TinyArgs>
                                                                         : llSumKernelFor<TinyArgs>(spec.type));
  using Small = KernelArgs<kSmallLaunch>;
  return reinterpret_cast<const void*>(spec.kind == LaunchKind::LlCopy ? llCopyKernel<Small>
                                                                       : llSumKernelFor<Small>(spec.type));
}

void launchLlKernel(const LaunchSpec& spec, const void* args, cudaStream_t stream) {
  const TinyArgs& tiny = *static_cast<const TinyArgs*>(args);
  if (spec.tiny && llLeanFits(spec, tiny.works, tiny.nworks))
    llLeanKernelFor(spec.kind == LaunchKind::LlSum, spec.type)<<<dim3(spec.blocks), dim3(spec.threads), 0, stream>>>(tiny);
  else if (spec.tiny) launchLl(spec, tiny, stream);
  else launchLl(spec, *static_cast<const KernelArgs<kSmallLaunch>*>(args), stream);
}

}  // namespace mccl
