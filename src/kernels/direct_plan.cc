// The direct path's host side: which collectives run on symmetric windows, and their
// launches (kernels/direct.h describes the works, direct_kernel.cu runs them).
#include "kernels/direct_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "core/comm.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/op.h"
#include "core/types.h"
#include "core/window.h"
#include "kernels/direct_launch.h"

namespace mccl {

// A collective whose buffers lie in symmetric windows (kernels/direct.h), on a
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
  w->count = op.count;
  w->coll = static_cast<uint8_t>(op.kind == OpKind::AllReduce       ? Coll::AllReduce
                                 : op.kind == OpKind::AllGather     ? Coll::AllGather
                                 : op.kind == OpKind::ReduceScatter ? Coll::ReduceScatter
                                 : op.kind == OpKind::Broadcast     ? Coll::Broadcast
                                                                    : Coll::Reduce);
  w->type = static_cast<uint8_t>(op.datatype);
  w->esize = static_cast<uint8_t>(es);
  w->red = devRed(op.red.kind);
  w->premul = op.hasReduction() && op.red.kind == RedKind::PreMulSum;
  w->scalarBits = op.red.scalarBits;
  w->scalarPtr = op.red.scalarPtr;
  w->postDiv = op.red.kind == RedKind::SumPostDiv ? op.red.postDivisor : 0;
  w->root = static_cast<int8_t>(op.kind == OpKind::Broadcast || op.kind == OpKind::Reduce ? op.root : 0);
  // A block moves a share of the bytes every rank sends or receives: enough blocks to keep
  // NVLink busy at large sizes, one for small ones. (On one H100, two ranks sharing it,
  // 64 KiB a block left a 256 KiB Broadcast 1.4x slower than LL128.)
  constexpr double kBytesPerChannel = 32.0 * 1024;
  int nch = static_cast<int>(std::min<double>(kDirectMaxChannels, std::max(1.0, std::ceil(whole / kBytesPerChannel))));
  int64_t minc = knobInt(Knob::MinNChannels), maxc = knobInt(Knob::MaxNChannels);
  if (minc > 0) nch = std::max<int>(nch, static_cast<int>(minc));
  if (maxc > 0) nch = std::min<int>(nch, static_cast<int>(maxc));
  nch = std::max(comm->config.minCTAs, std::min(nch, comm->config.maxCTAs));
  w->nchannels = static_cast<int16_t>(std::max(1, std::min(nch, kDirectMaxChannels)));
  return true;
}

// The direct works, in call order, launched per arithmetic type as the others are (every
// rank splits alike), at most kDirectLaunch to a launch.
ncclResult_t launchDirect(ncclComm* comm, const DevComm& devComm, const std::vector<DirectWork>& works, int threads,
                          cudaStream_t stream) {
  if (works.empty()) return ncclSuccess;
  uint64_t* flags[kDirectMaxRanks] = {};
  if (!comm->sym || !comm->sym->directFlags(flags))
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
