// The direct path's host side: which collectives run on symmetric windows or in place on
// plain buffers, what the copy engines move, and their launches (kernels/work/direct.h
// describes the works, direct_kernel.cu runs them).
#include "kernels/plan/direct_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "core/comm.h"
#include "core/cuda_util.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/op.h"
#include "core/peer_info.h"
#include "core/planner.h"
#include "core/types.h"
#include "core/window.h"
#include "ipc_transport/ce_sync.h"
#include "ipc_transport/user_buffers.h"
#include "kernels/launch/direct_launch.h"

namespace mccl {

namespace {

// What a direct work says of its operation, besides its buffers and channels.
void describe(const OpDesc& op, DirectWork* w) {
  w->count = op.count;
  w->coll = static_cast<uint8_t>(op.kind == OpKind::AllReduce       ? Coll::AllReduce
                                 : op.kind == OpKind::AllGather     ? Coll::AllGather
                                 : op.kind == OpKind::ReduceScatter ? Coll::ReduceScatter
                                 : op.kind == OpKind::Broadcast     ? Coll::Broadcast
                                                                    : Coll::Reduce);
  w->type = static_cast<uint8_t>(op.datatype);
  w->esize = static_cast<uint8_t>(datatypeSize(op.datatype));
  w->red = devRed(op.red.kind);
  w->premul = op.hasReduction() && op.red.kind == RedKind::PreMulSum;
  w->scalarBits = op.red.scalarBits;
  w->scalarPtr = op.red.scalarPtr;
  w->postDiv = op.red.kind == RedKind::SumPostDiv ? op.red.postDivisor : 0;
  w->root = static_cast<int8_t>(op.kind == OpKind::Broadcast || op.kind == OpKind::Reduce ? op.root : 0);
}

// A block a perChannel of the whole collective's bytes, at most most, as the knobs and the
// communicator's CTA limits allow.
int channelsFor(const ncclComm* comm, size_t whole, double perChannel, int most) {
  int nch = static_cast<int>(std::min<double>(most, std::max(1.0, std::ceil(static_cast<double>(whole) / perChannel))));
  const int64_t minc = knobInt(Knob::MinNChannels), maxc = knobInt(Knob::MaxNChannels);
  if (minc > 0) nch = std::max<int>(nch, static_cast<int>(minc));
  if (maxc > 0) nch = std::min<int>(nch, static_cast<int>(maxc));
  nch = std::max(comm->config.minCTAs, std::min(nch, comm->config.maxCTAs));
  return std::max(1, std::min(nch, kDirectMaxChannels));
}

}  // namespace

// A collective whose buffers lie in symmetric windows (kernels/work/direct.h), on a
// communicator of one node's GPUs: every rank decides alike, as the windows, the sizes and
// (by NCCL_WIN_COLL_SYMMETRIC's promise) the offsets in them are the same on every rank.
bool planDirect(ncclComm* comm, const OpDesc& op, DirectWork* w) {
  const int n = comm->nranks, me = comm->rank;
  if (!comm->sym || n < 2 || n > kDirectMaxRanks || op.count == 0 || !knobBool(Knob::WinDirect)) return false;
  if (op.isP2p()) return false;
  // A PreMulSum scalar of the user's may differ between ranks: each multiplies its own input.
  if (op.hasReduction() && op.red.kind == RedKind::PreMulSum && !op.red.uniformScalar) return false;
  const size_t es = datatypeSize(op.datatype);
  const size_t perRank = op.count * es;  // AllGather: sent; ReduceScatter: received
  if (perRank < static_cast<size_t>(knobInt(Knob::WinDirectMinBytes))) return false;
  const size_t whole = op.kind == OpKind::AllGather || op.kind == OpKind::ReduceScatter ? perRank * n : perRank;
  const bool engines =
      (op.kind == OpKind::AllGather || op.kind == OpKind::Broadcast) && copyEnginesMove(comm, op.kind, perRank);
  if (!engines && !directWanted(knobInt(Knob::WinDirect), op.kind, whole)) return false;
  std::memset(w, 0, sizeof *w);
  SymState& sym = *comm->sym;
  uint64_t* flags[kDirectMaxRanks];
  if (!sym.directFlags(flags)) return false;
  const bool inPlace = op.sendbuff == op.recvbuff;
  const bool inWin = op.kind != OpKind::AllGather && op.kind != OpKind::Broadcast &&
                     sym.directBuffer(op.sendbuff, op.kind == OpKind::ReduceScatter ? whole : perRank, w->in);
  const bool outWin = op.kind != OpKind::ReduceScatter && op.kind != OpKind::Reduce &&
                      sym.directBuffer(op.recvbuff, op.kind == OpKind::AllGather ? whole : perRank, w->out);
  switch (op.kind) {
    case OpKind::AllReduce:
      // One-shot reads every input whole, so it must not overwrite one (out of place); past
      // 2 ranks it moves more than two-shot does at large sizes.
      if (!inWin) return false;
      if (!inPlace && (n == 2 || perRank <= static_cast<size_t>(knobInt(Knob::WinOneShotMaxBytes)) || !outWin)) {
        w->algo = kDirectOneShot;
      } else if (outWin) {
        w->algo = kDirectTwoShot;
      } else {
        return false;
      }
      break;
    case OpKind::ReduceScatter:
    case OpKind::Reduce:
      if (!inWin) return false;
      break;
    case OpKind::AllGather:
    case OpKind::Broadcast:
      if (!outWin) return false;
      break;
    default: return false;
  }
  // This rank's own buffers, where they are not (or need not be) windows.
  if (!inWin) w->in[me] = static_cast<uint8_t*>(const_cast<void*>(op.sendbuff));
  if (!outWin) w->out[me] = static_cast<uint8_t*>(op.recvbuff);
  describe(op, w);
  // A block moves a share of the bytes every rank sends or receives: enough blocks to keep
  // NVLink busy at large sizes, one for small ones. (On one H100, two ranks sharing it,
  // 64 KiB a block left a 256 KiB Broadcast 1.4x slower than LL128.)
  constexpr double kBytesPerChannel = 32.0 * 1024;
  w->nchannels = static_cast<int16_t>(channelsFor(comm, whole, kBytesPerChannel, kDirectMaxChannels));
  if (engines) w->algo = kDirectCopyEngine;
  return true;
}

// Plain buffers: where it was faster than the FIFO path on the same buffers, by the whole
// collective's bytes (two ranks sharing one H200, bench/results/gpu-1xH200-2026-12-03 calls
// 5 and 6; since the entry's copy left it, gpu-1xH200-2026-12-03c call 4): AllReduce 1-4
// MiB (1.56-1.74x; 512 KiB 1.03 out of place, 0.995 in place), ReduceScatter 1-8 MiB
// (1.10x at 1 MiB, 1.41-1.88 above), AllGather 1 MiB up to 8 (1.21-1.25x at 1 MiB, 1.00 at 2
// where it was 0.81-0.91, 1.40-1.55 at 4; on two H200s the windows' direct AllGather beat
// the FIFOs from 512 KiB). The offers cost a round trip more than a window's barrier, which
// smaller sizes do not earn back (0.76-0.95x at 128-256 KiB); above, the staged parts would not fit the LL slots of the channels a work
// takes (below). (Above, a ring AllReduce and AllGather write their final data into the
// peers' outputs from 10 and 6 MiB: the user-buffer path of the Simple kernel.)
namespace {
bool plainDirectWanted(OpKind kind, size_t wholeBytes) {
  constexpr size_t kMiB = 1024 * 1024;
  switch (kind) {
    case OpKind::AllReduce: return wholeBytes >= 1 * kMiB && wholeBytes <= 4 * kMiB;
    case OpKind::ReduceScatter: return wholeBytes >= 1 * kMiB && wholeBytes <= 8 * kMiB;
    case OpKind::AllGather: return wholeBytes >= 1 * kMiB && wholeBytes < 8 * kMiB;
    default: return false;
  }
}
}  // namespace

bool planPlainDirect(ncclComm* comm, const OpDesc& op, bool capturing, int maxChannels, DirectWork* w) {
  const int64_t mode = knobInt(Knob::PlainDirect);
  const int64_t offers = knobInt(Knob::UserBuffers);
  const int n = comm->nranks, me = comm->rank;
  if (mode <= 0 || comm->isHost() || comm->gpuNet || n < 2 || n > kDirectMaxRanks || n > kLlMaxRanks || op.count == 0)
    return false;
  if (op.kind != OpKind::AllReduce && op.kind != OpKind::ReduceScatter && op.kind != OpKind::AllGather) return false;
  if (op.hasReduction() && op.red.kind == RedKind::PreMulSum && !op.red.uniformScalar) return false;
  const size_t es = datatypeSize(op.datatype);
  const size_t perRank = op.count * es;  // AllGather: sent; ReduceScatter: received
  const size_t whole = op.kind == OpKind::AllReduce ? perRank : perRank * n;
  // The tuner's choice only: a protocol or algorithm the user asks for runs as asked.
  if (mode == 1 && (offers <= 0 || !knobStr(Knob::Proto).empty() || !knobStr(Knob::Algo).empty() ||
                    !plainDirectWanted(op.kind, whole)))
    return false;
  const bool inPlace = op.sendbuff == op.recvbuff;
  const bool twoShot = op.kind == OpKind::AllReduce &&
                       (inPlace || (n > 2 && perRank > static_cast<size_t>(knobInt(Knob::WinOneShotMaxBytes))));
  // A block's part of what a peer reads or writes of this rank (AllReduce one-shot: the
  // vector, two-shot: a rank's share of it; ReduceScatter: a rank's block; AllGather: a
  // rank's bytes, on 16-byte bounds) must fit the LL lines of the work's steps on that
  // connection (kPlainRoleLines; two-shot: half for each of its two parts), as staged lines.
  const size_t e16 = 16 / std::min<size_t>(es, 16);
  auto blockPart = [&](size_t elems, int nch) {
    if (op.kind == OpKind::AllGather) return (perRank + nch - 1) / nch + 15;
    const size_t per = (elems + nch - 1) / nch;
    return (per + e16 - 1) / e16 * e16 * es;
  };
  const size_t partElems = twoShot ? (op.count + n - 1) / n + e16 : op.count;
  const size_t capacity = 8 * (twoShot ? kPlainRoleLines / 2 : kPlainRoleLines);
  // Channels: a 32 KiB of the whole (as on windows), at most NCCL's 24 (its blocks on 2 x
  // H200 from 512 KiB), more only where the staged parts need them.
  constexpr double kBytesPerChannel = 32.0 * 1024;
  constexpr int kPlainMaxChannels = 24;
  const int most = std::min({kDirectMaxChannels, kLlMaxChannels, maxChannels});
  int nch = std::min(most, channelsFor(comm, whole, kBytesPerChannel, kPlainMaxChannels));
  while (nch < most && blockPart(partElems, nch) > capacity) ++nch;
  if (blockPart(partElems, nch) > capacity) return false;
  std::memset(w, 0, sizeof *w);
  describe(op, w);
  w->plain = 1;
  w->algo = twoShot ? kDirectTwoShot : kDirectOneShot;
  w->nchannels = static_cast<int16_t>(nch);
  w->in[me] = static_cast<uint8_t*>(const_cast<void*>(op.sendbuff));
  w->out[me] = static_cast<uint8_t*>(op.recvbuff);
  offerPlainBuffers(comm, op, capturing, w);
  return true;
}

void offerPlainBuffers(ncclComm* comm, const OpDesc& op, bool capturing, DirectWork* w) {
  const int n = comm->nranks, me = comm->rank;
  // What this rank offers each peer: the input peers read (AllReduce, ReduceScatter), the
  // output they write (AllGather, a two-shot AllReduce's results), as the peer maps it;
  // nothing under MCCL_PLAIN_DIRECT=3 (every part staged).
  const bool none = knobInt(Knob::PlainDirect) == 3;
  const bool twoShot = w->algo == kDirectTwoShot;
  const bool offerIn = op.kind != OpKind::AllGather, offerOut = op.kind == OpKind::AllGather || twoShot;
  const size_t perRank = op.count * datatypeSize(op.datatype);
  const size_t whole = perRank * static_cast<size_t>(n);
  const size_t inBytes = op.kind == OpKind::ReduceScatter ? whole : perRank;
  const size_t outBytes = op.kind == OpKind::AllGather ? whole : perRank;
  const bool inPlace = op.sendbuff == op.recvbuff;
  auto offer = [&](int p, const void* buf, size_t bytes) {
    return none ? nullptr : static_cast<uint8_t*>(offerUserBuffer(comm, p, buf, bytes, capturing));
  };
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    w->in[p] = offerIn ? offer(p, op.sendbuff, inBytes) : nullptr;
    w->out[p] = !offerOut ? nullptr : inPlace && offerIn ? w->in[p] : offer(p, op.recvbuff, outBytes);
  }
}

// Where the direct path is faster than the FIFO path (LL, LL128, Simple with units), by the
// bytes of the whole collective (AllGather, ReduceScatter: every rank's block), on 2 × H200
// with the FIFO path's tuner (bench/results/gpu-2xH200-2026-11-26/modes_call1.md, mccl-perf on
// cudaMalloc'ed buffers against the same calls on symmetric windows, eager and in graphs):
//   below the band, one LL store a line and one flag round trip beat the direct kernel's two
//   barriers and its remote reads (AllReduce of 8 B: 7.0 against 5.0 us eager, 5.5 against
//   3.6 in a graph; 128 KiB: 10.4 against 7.1);
//   above it, 24 Simple channels with units move more bytes a second than the direct blocks
//   (up to 32) reading or writing a peer (AllReduce 2 GiB: 11.7 against 6.2 ms, Broadcast
//   6.5 against 5.8), except AllGather's writes, faster at every size from 512 KiB (2 GiB:
//   3.28 against 3.57 ms) until the copy engines take over (copyEnginesMove);
//   Reduce was slower at every size (512 KiB: 9.2 against 8.3 us; 2 GiB: 7.3 against 5.8 ms).
// Measured with 2 ranks only; more ranks move more bytes through the FIFO path's hops, so
// the band is the 2-rank one until more GPUs can be measured.
bool directWanted(int64_t mode, OpKind kind, size_t wholeBytes) {
  if (mode <= 0) return false;
  if (mode >= 2) return true;
  constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;
  switch (kind) {
    case OpKind::AllReduce: return wholeBytes >= 512 * kKiB && wholeBytes <= 4 * kMiB;
    case OpKind::ReduceScatter: return wholeBytes >= 512 * kKiB && wholeBytes <= 8 * kMiB;
    case OpKind::AllGather: return wholeBytes >= 512 * kKiB;
    case OpKind::Broadcast: return wholeBytes >= 1 * kMiB && wholeBytes <= 32 * kMiB;
    default: return false;
  }
}

// AllGather and Broadcast only copy: the copy engines can move their bytes into the peers'
// windows with no SM at all. NCCL_CTA_POLICY_ZERO asks for that wherever it can be had;
// MCCL_WIN_CE_MIN_BYTES from a size on under any policy: by default 32 MiB a rank, where
// they became faster than the SMs on 2 × H200 (modes_call1.md: AllGather of 2 × 128 MiB 371 us
// against about 420 on the direct blocks, 2 × 512 MiB 1,399 against about 1,650;
// Broadcast of 256 MiB 700 against about 740 on the FIFOs; at 2 × 2 MiB 23 against about 14).
//
// Under the policy, not up to kLlBytesPerChannel a rank (or a block of an AlltoAll or
// Gather; core/planner.h): there the FIFO path's LL kernel takes one block for
// about 5 us, where the copies' two barrier kernels hold
// a block each and the whole takes about 20 (2 x H200, 8 B - 4 KiB on windows under
// NCCL_CTA_POLICY=2: AllGather 20.5 us against 4.6 on the LL kernel, Broadcast 20.7
// against 4.7, AlltoAll 21.6 against 5.9; NCCL 2.28.3 21.7, 11.6 and 22.0;
// bench/results/gpu-2xH200-2026-11-29b call 2): fewer SM-microseconds, a quarter of the time.
// A Broadcast only from kCeZeroBroadcastBytes: NCCL 2.28 moves Broadcast on SMs under the
// policy too (6.7-8.4 us at 8-512 KiB a rank, where the copies took 15-20; from 2 MiB
// they are ahead of it: 20-21 us against 24.5-25.4; call 3 there).
//
// Not where two ranks of one process use one GPU (MCCL_SHARED_GPU=1): the ranks share
// one CUDA context, and a copy between two addresses of one device does not start before
// every command issued earlier on the context's other streams ends (the implicit
// synchronization of the CUDA programming guide). Those include a peer's barrier kernel
// that waits for this rank's barrier after the copy: a deadlock (seen on one H100 with two
// ranks as threads, at a Broadcast whose non-root ran a call ahead). The cause is not
// settled: on one H200 (2026-12-01, bench/micro/ce_copy.cu) a copy within the GPU and a
// kernel issued after it ran beside a spinning kernel of the same context, once every
// kernel had been loaded; a kernel's first launch (its module's lazy load) waited.
constexpr size_t kCeZeroBroadcastBytes = size_t{2} << 20;

bool copyEnginesMove(const ncclComm* comm, OpKind kind, size_t perRank) {
  const int64_t min = knobInt(Knob::WinCeMinBytes);
  // By size, a Broadcast only on two ranks: the root's copy engines write every peer at
  // once, n - 1 times its bytes through the root's links, where the FIFO path's chain moves
  // each byte once a link (as the plain buffers' copy engines, GpuWork::cutForEngines).
  // Every AllGather rank sends its block to each peer, as many bytes as a ring sends.
  const bool bySize =
      min > 0 && perRank >= static_cast<size_t>(min) && (kind != OpKind::Broadcast || comm->nranks == 2);
  const bool byPolicy = comm->config.ctaPolicy == NCCL_CTA_POLICY_ZERO &&
                        (kind == OpKind::Broadcast ? perRank >= kCeZeroBroadcastBytes : perRank > kLlBytesPerChannel);
  if (!byPolicy && !bySize) return false;
  // Any two ranks of the communicator, not only this one and a peer: every rank must decide
  // alike (3 ranks on 2 GPUs: the rank alone on its GPU took the copy engines while the two
  // sharing the other kept the SM path, and their barriers never met).
  return !comm->topo.processSharesDevice();
}

bool planEngineP2p(ncclComm* comm, const OpDesc& op, EngineCopy* copy) {
  const int n = comm->nranks;
  if (!op.isP2p() || op.symAt == nullptr || op.count == 0) return false;
  if (!comm->sym || n < 2 || n > kDirectMaxRanks || !knobBool(Knob::WinDirect)) return false;
  // A Gather only under the zero-CTA policy, where NCCL 2.28 also writes into the root's
  // window at the offset of each non-root's recvbuff. Elsewhere NCCL reads a non-root's
  // recvbuff nowhere, so a program may pass one that is no window there (or none) while
  // the root's is: the root would wait at the barriers for copies that never come.
  if (op.call == P2pCall::Gather && comm->config.ctaPolicy != NCCL_CTA_POLICY_ZERO) return false;
  const size_t bytes = op.count * datatypeSize(op.datatype);
  if (!copyEnginesMove(comm, op.kind, bytes)) return false;
  uint64_t* flags[kDirectMaxRanks];
  uint8_t* at[kDirectMaxRanks];
  if (!comm->sym->directFlags(flags) || !comm->sym->directBuffer(op.symAt, bytes, at)) return false;
  std::memset(copy, 0, sizeof *copy);
  if (op.kind == OpKind::Send)
    *copy = EngineCopy{at[op.root], static_cast<const uint8_t*>(op.sendbuff), bytes, op.root};
  return true;
}

// The copy-engine works of a group: a barrier with every peer (each peer's stream has
// reached this point, so its output is no longer used by what came before), the
// copies into the peers' windows, and a barrier again (every copy into this rank's output
// is done before what follows on its stream). A barrier is the direct kernel on one block
// with a work of no bytes (its entry and exit barriers, on channel 0's counts), so aborts,
// MCCL_TIMEOUT and graph replays behave as on the direct path; the data moves on no SM.
ncclResult_t launchCopyEngines(ncclComm* comm, const DevComm& devComm, const std::vector<DirectWork>& works,
                               const std::vector<EngineCopy>& p2p, size_t p2pOps, CopyEngineLanes* lanes,
                               cudaStream_t stream, bool capturing) {
  if (works.empty() && p2pOps == 0) return ncclSuccess;
  using Copy = EngineCopy;
  std::vector<Copy> copies;
  const int n = comm->nranks, me = comm->rank;
  for (const DirectWork& w : works) {
    const bool gather = w.coll == static_cast<uint8_t>(Coll::AllGather);
    if (!gather && me != w.root) continue;  // Broadcast: only the root writes
    const uint64_t bytes = w.count * w.esize;
    const uint64_t at = gather ? static_cast<uint64_t>(me) * bytes : 0;
    // Peers from the next rank on, so the ranks start on different peers; own output last
    // (nothing to do in place).
    for (int k = 1; k <= n; ++k) {
      const int p = (me + k) % n;
      if (w.out[p] + at != w.in[me]) copies.push_back(Copy{w.out[p] + at, w.in[me], bytes, p});
    }
  }
  copies.insert(copies.end(), p2p.begin(), p2p.end());
  DirectWork sync;
  std::memset(&sync, 0, sizeof sync);
  sync.coll = static_cast<uint8_t>(Coll::AllGather);
  sync.esize = 1;
  sync.nchannels = 1;
  const std::vector<DirectWork> barrier(1, sync);
  constexpr int kBarrierThreads = 32;  // a thread per peer
  // Eager: stream memory operations, no block (ipc_transport/ce_sync.h); captured, or
  // where they could not be had: the direct kernel on one block.
  CeSync* ce = capturing || !comm->sym ? nullptr : comm->sym->ceSync();
  auto meet = [&]() { return ce ? ce->barrier(comm, stream) : launchDirect(comm, devComm, barrier, kBarrierThreads, stream); };
  MCCL_CHECK(meet());
  // Copy i on lane i % nl: lane 0 is stream, lane j > 0 the side stream j - 1, forked from
  // stream after the barrier and joined back before the closing one.
  const int nl = static_cast<int>(std::min<size_t>(copies.size(), kDirectMaxRanks));
  MCCL_CHECK(lanes->forkFrom(comm, stream, nl - 1));
  for (size_t i = 0; i < copies.size(); ++i) {
    const Copy& c = copies[i];
    const int lane = static_cast<int>(i % static_cast<size_t>(nl));
    const cudaError_t e =
        cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, lane ? lanes->side[lane - 1] : stream);
    if (e != cudaSuccess)
      return MCCL_ERR(ncclUnhandledCudaError, comm, "copy engines: cudaMemcpyAsync of %llu bytes to rank %d: %s",
                      static_cast<unsigned long long>(c.bytes), c.peer, cudaGetErrorString(e));
  }
  MCCL_CHECK(lanes->joinInto(comm, stream, nl - 1));
  return meet();
}

ncclResult_t CopyEngineLanes::forkFrom(ncclComm* comm, cudaStream_t stream, int k) {
  if (k <= 0) return ncclSuccess;
  while (static_cast<int>(side.size()) < k) {
    cudaStream_t s = nullptr;
    cudaEvent_t e = nullptr;
    MCCL_CUDA_TRY(comm, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags(lane)");
    side.push_back(s);
    MCCL_CUDA_TRY(comm, cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags(lane)");
    joined.push_back(e);
  }
  if (!fork) MCCL_CUDA_TRY(comm, cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  MCCL_CUDA_TRY(comm, cudaEventRecord(fork, stream), "cudaEventRecord(fork)");
  for (int j = 0; j < k; ++j) MCCL_CUDA_TRY(comm, cudaStreamWaitEvent(side[j], fork, 0), "cudaStreamWaitEvent(fork)");
  return ncclSuccess;
}

ncclResult_t CopyEngineLanes::joinInto(ncclComm* comm, cudaStream_t stream, int k) {
  for (int j = 0; j < k; ++j) {
    MCCL_CUDA_TRY(comm, cudaEventRecord(joined[j], side[j]), "cudaEventRecord(join)");
    MCCL_CUDA_TRY(comm, cudaStreamWaitEvent(stream, joined[j], 0), "cudaStreamWaitEvent(join)");
  }
  return ncclSuccess;
}

void CopyEngineLanes::release() {
  for (cudaStream_t s : side) cudaStreamDestroy(s);
  for (cudaEvent_t e : joined) cudaEventDestroy(e);
  if (fork) cudaEventDestroy(fork);
  side.clear();
  joined.clear();
  fork = nullptr;
}

// The direct works, in call order, launched per arithmetic type as the others are (every
// rank splits alike), at most kDirectLaunch to a launch.
ncclResult_t launchDirect(ncclComm* comm, const DevComm& devComm, const std::vector<DirectWork>& works, int threads,
                          cudaStream_t stream) {
  if (works.empty()) return ncclSuccess;
  uint64_t* flags[kDirectMaxRanks] = {};
  const bool windows = std::any_of(works.begin(), works.end(), [](const DirectWork& w) { return !w.plain; });
  if (windows && (!comm->sym || !comm->sym->directFlags(flags)))
    return MCCL_ERR(ncclInvalidUsage, comm, "a window of a planned collective was deregistered before it ran");
  std::vector<std::pair<bool, int>> kinds;  // (reduces, type), in order of first appearance
  auto kindOf = [](const DirectWork& w) {
    const bool reduces = w.coll == static_cast<uint8_t>(Coll::AllReduce) ||
                         w.coll == static_cast<uint8_t>(Coll::ReduceScatter) ||
                         w.coll == static_cast<uint8_t>(Coll::Reduce);
    return std::make_pair(reduces, reduces ? static_cast<int>(w.type) : 0);
  };
  for (const DirectWork& w : works)
    if (std::find(kinds.begin(), kinds.end(), kindOf(w)) == kinds.end()) kinds.push_back(kindOf(w));
  for (const auto& kind : kinds) {
    std::vector<const DirectWork*> part;
    for (const DirectWork& w : works)
      if (kindOf(w) == kind) part.push_back(&w);
    for (size_t first = 0; first < part.size(); first += kDirectLaunch) {
      const size_t nw = std::min<size_t>(kDirectLaunch, part.size() - first);
      DirectLaunch l;
      l.small = nw <= static_cast<size_t>(kDirectSmallLaunch);
      l.reduces = kind.first;
      l.type = kind.second;
      l.threads = threads;
      for (size_t i = 0; i < nw; ++i) l.blocks = std::max<int>(l.blocks, part[first + i]->nchannels);
      auto fill = [&](auto* args) {
        std::memset(static_cast<void*>(args), 0, sizeof *args);
        args->comm = devComm;
        std::copy(flags, flags + kDirectMaxRanks, args->flags);
        args->rank = comm->rank;
        args->nranks = comm->nranks;
        args->nworks = static_cast<int32_t>(nw);
        for (size_t i = 0; i < nw; ++i) args->works[i] = *part[first + i];
      };
      const char* err = nullptr;
      ncclResult_t r;
      if (l.small) {
        DirectArgs<kDirectSmallLaunch> args;
        fill(&args);
        r = launchDirectKernel(l, &args, stream, &err);
      } else {
        DirectArgs<kDirectLaunch> args;
        fill(&args);
        r = launchDirectKernel(l, &args, stream, &err);
      }
      if (r != ncclSuccess) return MCCL_ERR(r, comm, "direct kernel launch failed: %s", err ? err : "?");
    }
  }
  return ncclSuccess;
}

}  // namespace mccl
