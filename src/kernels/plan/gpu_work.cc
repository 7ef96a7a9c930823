// One submitted group of a GPU communicator (GpuWork, gpu_datapath_impl.h): planned when
// submitted (init: the plan, its connections requested), launched by progress once every
// peer it needs is connected.
#include "kernels/launch/gpu_datapath_impl.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <vector>

#include "kernels/plan/p2p_order.h"

namespace mccl {

// One rank: every collective but PreMulSum is a copy of its input (or nothing in place),
// and each Send to itself pairs with the Recv of the same place in call order. When the
// whole group is such copies, the copy engine does them at the memory's bandwidth (a
// memcpy node in a graph), as NCCL does; no kernel, no connection.
bool GpuWork::planCopies() {
  if (comm_->nranks != 1) return false;
  std::vector<const OpDesc*> sends, recvs;
  for (const OpDesc& op : p_.ops) {
    if (op.kind == OpKind::Send) sends.push_back(&op);
    else if (op.kind == OpKind::Recv) recvs.push_back(&op);
    else if (op.hasReduction() && op.red.kind == RedKind::PreMulSum) return false;
    else if (op.count > 0 && op.sendbuff != op.recvbuff)
      p_.copies.push_back(GpuPlan::Copy{op.recvbuff, op.sendbuff, op.bytes()});
  }
  if (sends.size() != recvs.size()) return false;
  for (size_t i = 0; i < sends.size(); ++i) {
    if (sends[i]->bytes() != recvs[i]->bytes()) return false;  // the kernel path reports it
    if (sends[i]->count > 0 && sends[i]->sendbuff != recvs[i]->recvbuff)
      p_.copies.push_back(GpuPlan::Copy{recvs[i]->recvbuff, sends[i]->sendbuff, sends[i]->bytes()});
  }
  return true;
}

// A rank's Sends to itself and Recvs from itself in one group (Gather's root, Scatter's
// root, AlltoAll's own block, a user's own pairs), matched in call order as NCCL matches
// them: where every pair has the same size on Simple, each Send's work copies its data
// straight into its Recv's buffer (DevWork::selfCopy) and the Recv has no work: one copy
// instead of two through the rank's FIFO to itself, and no block on the receiving side.
// partner[i]: for a paired Send the index of its Recv, for a paired Recv -2, else -1.
// Groups whose self operations do not pair one to one (or that find earlier Sends still in
// that FIFO) keep the connection, as before.
// Where a paired copy to itself goes to the copy engines instead of the kernel's blocks
// (MCCL_SELF_COPY_ENGINE_BYTES). A two-rank AlltoAll took 8 blocks for it beside the 32 of
// its Sends and Recvs (NCCL: 32 in all); the copy within the GPU's memory runs on an engine
// of its own, beside the kernel, on a side stream (GpuDataPath::launch). Two ranks sharing
// one H200, engines against the kernel's blocks (bench/results/gpu-1xH200-2026-12-03c
// call 2): 8 MiB blocks to itself and more 1.04-1.6x faster (AlltoAll of 2 x 8 MiB 1.04 /
// 1.10 eager / graph, Gather and Scatter of 16 MiB 1.36-1.50, of 1 GiB 1.27-1.61 eager);
// 2 MiB blocks 0.69-0.74x eager, 0.92-1.0 in a graph (the fork, copy and join cost the
// host and the engine's start): from 8 MiB.
bool GpuWork::selfCopyEngine(size_t bytes) const {
  const int64_t min = knobInt(Knob::SelfCopyEngineBytes);
  return min > 0 && bytes >= static_cast<size_t>(min);
}

std::vector<int> GpuWork::pairSelf(const std::vector<OpDesc>& ops, size_t slotBytes) {
  std::vector<int> partner(ops.size(), -1);
  if (comm_->nranks < 2) return partner;
  std::vector<int> sends, recvs;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpDesc& op = ops[i];
    if (!op.isP2p() || op.root != comm_->rank) continue;
    (op.kind == OpKind::Send ? sends : recvs).push_back(static_cast<int>(i));
  }
  const int backlog = static_cast<int>(sends.size()) - static_cast<int>(recvs.size());
  bool pair = !sends.empty() && backlog == 0 && dp_->selfBacklog() == 0;
  for (size_t k = 0; pair && k < sends.size(); ++k) {
    const OpDesc& s = ops[static_cast<size_t>(sends[k])];
    pair = s.bytes() == ops[static_cast<size_t>(recvs[k])].bytes() &&
           choosePlan(comm_, s, slotBytes).proto == Proto::Simple;
  }
  if (pair) {
    for (size_t k = 0; k < sends.size(); ++k) {
      partner[static_cast<size_t>(sends[k])] = recvs[k];
      partner[static_cast<size_t>(recvs[k])] = -2;
    }
    p_.selfPaired = true;
  } else {
    p_.selfBacklog = backlog;
  }
  dp_->addSelfBacklog(p_.selfBacklog);
  return partner;
}

// Where the user-buffer path is faster than the FIFO's (2 x H100, bench/results/
// gpu-2xH200-2026-11-27 call 2, the same build with MCCL_USER_BUFFERS 1 or 2 against 0):
// the sender waits for the receiver's offer before its first byte (the FIFO let it fill
// its slots before the receiver started), a few microseconds a call; what it buys is the
// receiver's copy out of the FIFO, which costs only where the receiving GPU is moving data
// of its own at the same time. A ring AllGather sends and receives on every rank: 2 x 8 MiB
// - 2 x 512 MiB 1.08-1.18x faster, 2 x 2 MiB 0.88-0.90 (2 x H200, call 4, registered, three
// rounds: 2 x 2 MiB 0.83, 2 x 3 MiB 0.93, 2 x 4.5 MiB 0.99, 2 x 6.75 MiB 1.05, 2 x 10 MiB
// 1.11: from 6 MiB a rank). One-way transfers lost: Broadcast
// 1 - 16 MiB 0.60-0.96 (1.00 at 1 GiB), Gather and Scatter (one message of 2 - 32 MiB)
// 0.70-0.97; Send/Recv both ways and AlltoAll gained 1-6 % from 16 MiB messages. A
// Send/Recv takes it from 8 MiB (MCCL_USER_BUFFERS_SENDRECV_BYTES; 2 x H200,
// gpu-2026-11-28b calls 6-7, two ranks both ways, 2 - 1024 MiB: 1.15, 1.04 at 2 / 4 MiB,
// 0.93-0.97 at 8-64 MiB, 0.98-1.00 above) where it goes both ways, as
// markUserBuffers tells it; a Broadcast stays on the FIFO unless
// MCCL_USER_BUFFERS_MIN_BYTES says otherwise. An AlltoAll's Sends and Recvs say they go
// both ways (OpDesc::call, set alike at both ends) and take it from 8 MiB blocks
// (MCCL_USER_BUFFERS_ALLTOALL_BYTES; gpu-2xH200-2026-11-27f call 2: 64 MiB - 2 GiB
// 1.005-1.04x, from 4 MiB blocks 1.03-1.05x slower at 8-16 MiB; from 8 MiB blocks against
// 16: two ranks 16 MiB 0.934 / 0.946 the time, gpu-2026-11-28b call 6 and gpu-2026-11-28c
// call 1, four ranks 32 MiB 0.977, call 3, the other sizes 0.99-1.01). A ring AllReduce's final
// data (2 x H200, gpu-2xH200-2026-11-27b calls 2-3, plain buffers, path on against off,
// three rounds):
// 4 MiB 0.91, 5.3 MiB 0.95, 6.7 MiB 0.98, 8.4 MiB 1.00, 10.6 MiB 1.05, 13.3 MiB 1.07,
// 256 MiB 1.12, 2 GiB 1.06 (365 GB/s bus bandwidth; NCCL 340): from 10 MiB
// (MCCL_USER_BUFFERS_ALLREDUCE_BYTES). bytes: what the rank sends (AllGather: per rank;
// AllReduce: the vector).
namespace {
bool userBuffersWanted(Coll coll, size_t bytes, bool alltoall) {
  const int64_t min = knobInt(Knob::UserBuffersMinBytes);
  if (min > 0) return bytes >= static_cast<size_t>(min);
  switch (coll) {
    case Coll::AllReduce: return bytes >= static_cast<size_t>(knobInt(Knob::UserBuffersAllReduceBytes));
    case Coll::AllGather: return bytes >= (size_t{6} << 20);
    case Coll::Send:
    case Coll::Recv: {
      const int64_t at = knobInt(alltoall ? Knob::UserBuffersAlltoAllBytes : Knob::UserBuffersSendRecvBytes);
      return at > 0 && bytes >= static_cast<size_t>(at);
    }
    default: return false;
  }
}
}  // namespace

// User buffers (dev_work.h, ipc_transport/user_buffers.h): a Simple ring AllGather, chain
// Broadcast or Send/Recv with a peer of this node where userBuffersWanted is marked on both
// ends alike (from the size and the collective: each end of a connection decides the same
// without talking), and the receiving end offers its output where the sender's process
// maps it: a registered output at once; a plain one (MCCL_USER_BUFFERS=2, the default)
// from its second use, or its first in a graph capture (user_buffers.h says why).
// A plain Send/Recv (not an AlltoAll's) takes the path only both ways, which its two ends
// cannot tell alike: each knows only its own group (bothWays: it also sends to, or
// receives from, that peer in this group; the peer may split its two in two groups). So
// the Recv is marked from the size alone and always posts (a sender may wait for it), but
// offers null unless it goes both ways; the Send is marked only where it goes both ways,
// and a null offer sends it through the FIFO. A one-way Send (a ring's) never waits for an
// offer; a Recv whose sender is unmarked reads an old ack: the FIFO. Gather's and Scatter's
// are marked at neither end (both know they go one way).
void GpuWork::markUserBuffers(const OpDesc& op, const Schedule& s, DevWork* w, bool bothWays) {
  const int64_t mode = knobInt(Knob::UserBuffers);
  if (mode <= 0 || comm_->gpuNet || comm_->nranks < 2 || op.count == 0) return;
  const bool gather = s.algo == Algo::Ring && s.coll == Coll::AllGather;
  const bool allReduce = s.algo == Algo::Ring && s.coll == Coll::AllReduce;
  const bool bcast = s.algo == Algo::Chain && s.coll == Coll::Broadcast;
  const bool p2p = s.algo == Algo::P2p && op.root != comm_->rank;
  const bool alltoall = p2p && op.call == P2pCall::AlltoAll;
  if ((!gather && !allReduce && !bcast && !p2p) || !userBuffersWanted(s.coll, op.bytes(), alltoall)) return;
  const bool fifoOnly = p2p && !alltoall && !bothWays && knobInt(Knob::UserBuffersMinBytes) <= 0;
  // A Gather's or Scatter's ends both know it goes one way (OpDesc::oneWay()): neither posts.
  if (fifoOnly && (op.kind == OpKind::Send || op.oneWay())) return;
  w->xchg = p2p ? (op.kind == OpKind::Send ? kXchgSend : kXchgRecv) : kXchgRecv | kXchgSend;
  if (fifoOnly) return;  // a Recv that offers null: the plan is the same every call (cacheable)
  p_.userBuffers = true;
  if (!(w->xchg & kXchgRecv) || (bcast && op.root == comm_->rank)) return;
  const size_t outBytes = gather ? op.bytes() * static_cast<size_t>(comm_->nranks) : op.bytes();
  const int from = p2p ? op.root : dp_->devCommHost().ringPrev;
  w->offer = offerUserBuffer(comm_, from, w->out, outBytes, p_.capturing);
}

// AllGather and Broadcast on buffers that are no symmetric window, at sizes the copy engines
// take (PeerEngines::wanted: MCCL_PLAIN_CE_MIN_BYTES, or the zero-CTA policy), become their
// Sends and Recvs (OpDesc::call names the collective), which meet their peers' as AlltoAll's
// do (ipc_transport/p2p_engine.h): in each pair the first end to come decides, the copy
// engines where it offered its buffer, else (a plain buffer's first use, a peer's process
// that cannot import it) that pair's transfer takes the FIFOs as a Send and a Recv. A rank's
// own block is a copy beside them on the copy engines (selfCopies). Every rank cuts alike:
// from the size, the policy, the knobs, the communicator, and whether the output is a
// symmetric window (those take the windows' path, kernels/plan/direct_plan.cc), all the same
// on every rank. Not while capturing: a capture offers nothing (the ranks capture alike), so
// every pair would take the FIFOs, where the collective's own kernel is faster. A Broadcast
// only on two ranks: a root writing every peer at once shares its links among them, where
// the chain forwards each byte once a link.
void GpuWork::cutForEngines() {
  const int n = comm_->nranks, me = comm_->rank;
  PeerEngines& pe = dp_->peerEngines();
  if (n < 2 || p_.capturing || comm_->gpuNet || knobInt(Knob::UserBuffers) <= 0 || !pe.everyPeerMeets()) return;
  for (int r = 0; r < n; ++r)
    if (r != me && !dp_->ipc().canReach(r)) return;
  auto cuts = [&](const OpDesc& op) {
    const bool gather = op.kind == OpKind::AllGather, bcast = op.kind == OpKind::Broadcast && n == 2;
    if ((!gather && !bcast) || op.count == 0 || !pe.wanted(gather ? P2pCall::AllGather : P2pCall::Broadcast, op.bytes()))
      return false;
    std::vector<uint8_t*> at(static_cast<size_t>(n));
    return !(comm_->sym && comm_->sym->directBuffer(op.recvbuff, gather ? op.bytes() * n : op.bytes(), at.data()));
  };
  if (std::none_of(p_.ops.begin(), p_.ops.end(), cuts)) return;
  std::vector<OpDesc> ops;
  for (const OpDesc& op : p_.ops) {
    if (!cuts(op)) {
      ops.push_back(op);
      continue;
    }
    const bool gather = op.kind == OpKind::AllGather;
    const size_t bytes = op.bytes();
    auto xfer = [&](OpKind kind, const void* buf, int peer) {
      OpDesc d = op;  // its count, type, stream, sequence number and times
      d.kind = kind;
      d.sendbuff = kind == OpKind::Send ? buf : nullptr;
      d.recvbuff = kind == OpKind::Recv ? const_cast<void*>(buf) : nullptr;
      d.root = peer;
      d.call = gather ? P2pCall::AllGather : P2pCall::Broadcast;
      d.symAt = nullptr;
      ops.push_back(d);
    };
    char* const out = static_cast<char*>(op.recvbuff);
    const void* const own = gather ? out + static_cast<size_t>(me) * bytes : out;
    if (gather) {
      // Peers from the next rank on (and from the previous one back), so that the ranks
      // start on different peers.
      for (int k = 1; k < n; ++k) {
        const int to = (me + k) % n, from = (me - k + n) % n;
        xfer(OpKind::Send, op.sendbuff, to);
        xfer(OpKind::Recv, out + static_cast<size_t>(from) * bytes, from);
      }
    } else if (me == op.root) {
      xfer(OpKind::Send, op.sendbuff, 1 - me);
    } else {
      xfer(OpKind::Recv, out, op.root);
    }
    if ((gather || me == op.root) && own != op.sendbuff) p_.selfCopies.push_back(GpuPlan::Copy{const_cast<void*>(own), op.sendbuff, bytes});
    if (comm_->rank == 0 && logEnabled(LogLevel::Info, kLogTuning))
      INFO(kLogTuning, "%s: %zu Bytes -> Algo copy-engines channels 0 (its Sends and Recvs meet their peers')",
           opKindName(op.kind), bytes);
  }
  p_.ops = std::move(ops);
}

ncclResult_t GpuWork::init(std::vector<OpDesc>& ops) {
  if (!ops.empty() && ops.front().enqueueNs) planNs_[0] = steadyNs();  // MCCL_PROFILE
  p_.ops = ops;
  // Every operation of one launch runs in one stream order; mixing a captured stream with
  // an uncaptured one (or two captures) cannot be ordered. Known before planning: the
  // user-buffer path imports a captured output at once (markUserBuffers).
  cudaStreamCaptureStatus first = cudaStreamCaptureStatusNone;
  for (size_t i = 0; i < p_.ops.size(); ++i) {
    cudaStreamCaptureStatus st;
    if (cudaStreamIsCapturing(p_.ops[i].stream, &st) != cudaSuccess)
      return MCCL_ERR(ncclInvalidArgument, comm_, "stream %p of operation %zu is not a valid CUDA stream",
                      static_cast<void*>(p_.ops[i].stream), i);
    if (i == 0) first = st;
    else if (st != first)
      return MCCL_ERR(ncclInvalidUsage, comm_,
                      "a group mixes streams that are being captured into a CUDA graph with streams that "
                      "are not; capture every stream of the group or none");
  }
  p_.capturing = first == cudaStreamCaptureStatusActive;
  cutForEngines();
  madeTransfersFirst(&p_.ops);
  IpcTransport& ipc = dp_->ipc();
  const bool dump = knobBool(Knob::DumpSchedule);
  std::map<std::pair<int, int>, int> p2pQueue;
  int maxCh = 0;
  const bool copyOnly = planCopies();
  if (!copyOnly) p_.copies.clear();
  const std::vector<int> partner = copyOnly ? std::vector<int>() : pairSelf(p_.ops, ipc.slotBytes(ConnClass::P2p));
  // Sends and Recvs take units known to both ends (kUnitsOn: one Simple launch for all of
  // them, launchParts) on two ranks, where a group's operations with the peer are the same
  // number on both sides (each Send meets a Recv), when they fit one launch; elsewhere by
  // agreement at run time (kUnitsAgree, dev_work.h); the operations with itself never do.
  size_t peerOps = 0;
  std::vector<uint8_t> ways(static_cast<size_t>(comm_->nranks), 0);  // a peer's: 1 we send, 2 we receive
  for (const OpDesc& op : p_.ops)
    if (op.isP2p() && op.root != comm_->rank) {
      ++peerOps;
      ways[static_cast<size_t>(op.root)] |= op.kind == OpKind::Send ? 1 : 2;
    }
  const bool p2pUnits = comm_->nranks == 2 && peerOps <= static_cast<size_t>(kSmallLaunch);
  for (size_t oi = 0; oi < partner.size(); ++oi) {
    const OpDesc& op = p_.ops[oi];
    EngineCopy ec;
    if (planEngineP2p(comm_, op, &ec)) {
      // A block of an AlltoAll, Gather or Scatter on symmetric windows: the copy engines of
      // one end move it between this rank's buffer and the peer's window (planEngineP2p);
      // the other end only meets the barriers. No FIFO, no SM.
      ++p_.engineP2pOps;
      if (ec.bytes) p_.engineP2p.push_back(ec);
      if (dump)
        std::printf("[mccl rank %d] %s %s rank %d: %s on symmetric windows (copy engines)\n", comm_->rank,
                    opKindName(op.kind), op.kind == OpKind::Send ? "to" : "from", op.root, p2pCallName(op.call));
      if (comm_->rank == 0 && (ec.bytes || op.kind == OpKind::Send) && logEnabled(LogLevel::Info, kLogTuning))
        INFO(kLogTuning, "%s: %zu Bytes -> Algo copy-engines channels 0 (%s block, no SM moves data)",
             opKindName(op.kind), op.bytes(), p2pCallName(op.call));
      continue;
    }
    if (dp_->peerEngines().eligible(op) && ipc.canReach(op.root)) {
      // A user's large Send or Recv, or a collective's on buffers that are no window: the two
      // hosts meet (ipc_transport/p2p_engine.h); where the first to come offered its
      // buffer, the copy engines move it.
      p_.meets = true;
      PeerEngineOp pe;
      ncclResult_t res = ncclSuccess;
      if (dp_->peerEngines().meet(op, p_.capturing, &pe, &res)) {
        if (dump)
          std::printf("[mccl rank %d] %s %s rank %d (%s): on the copy engines (%s the copy)\n", comm_->rank,
                      opKindName(op.kind), op.kind == OpKind::Send ? "to" : "from", op.root, p2pCallName(op.call),
                      pe.issuer ? "this rank issues" : "the peer issues");
        if (comm_->rank == 0 && logEnabled(LogLevel::Info, kLogTuning))
          INFO(kLogTuning, "%s: %zu Bytes -> Algo copy-engines channels 0 (%s, no SM moves data)", opKindName(op.kind),
               op.bytes(), p2pCallName(op.call));
        p_.peerEngine.push_back(pe);
        continue;
      }
      if (res != ncclSuccess) return res;
    }
    if (partner[oi] == -2) continue;  // a Recv from itself: its Send's work writes its buffer
    const bool selfCopy = partner[oi] >= 0;
    if (selfCopy && selfCopyEngine(op.bytes())) {
      void* const dst = p_.ops[static_cast<size_t>(partner[oi])].recvbuff;
      if (dst != op.sendbuff) p_.selfCopies.push_back(GpuPlan::Copy{dst, op.sendbuff, op.bytes()});
      if (dump)
        std::printf("[mccl rank %d] seq %llu %s: to itself, copied into its Recv's buffer by the copy engines\n",
                    comm_->rank, static_cast<unsigned long long>(op.seq), opKindName(op.kind));
      if (comm_->rank == 0 && logEnabled(LogLevel::Info, kLogTuning))
        INFO(kLogTuning, "%s: %zu Bytes -> Algo copy-engines channels 0 (%s block to itself, no SM moves data)",
             opKindName(op.kind), op.bytes(), p2pCallName(op.call));
      continue;
    }
    DirectWork dw;
    const bool windows = planDirect(comm_, op, &dw);
    if (windows || planPlainDirect(comm_, op, p_.capturing, ipc.maxChannels(), &dw)) {
      const bool engines = dw.algo == kDirectCopyEngine;
      // Which direct path: copy engines, AllReduce one-shot or two-shot, or the one way of
      // the other collectives; in the dump's words and in the TUNING line's.
      const int kind = engines ? 0 : op.kind != OpKind::AllReduce ? 1 : dw.algo == kDirectOneShot ? 2 : 3;
      static const char* const kDumpName[] = {" (copy engines)", "", " (one-shot)", " (two-shot)"};
      static const char* const kTuningName[] = {"copy-engines", "direct", "direct-oneshot", "direct-twoshot"};
      const char* const where = windows ? "symmetric windows" : "plain buffers";
      if (dump)
        std::printf("[mccl rank %d] seq %llu %s: direct on %s%s, %d channel(s)\n", comm_->rank,
                    static_cast<unsigned long long>(op.seq), opKindName(op.kind), where, kDumpName[kind],
                    engines ? 0 : dw.nchannels);
      if (comm_->rank == 0 && logEnabled(LogLevel::Info, kLogTuning))
        INFO(kLogTuning, "%s: %zu Bytes -> Algo %s channels %d (%s)", opKindName(op.kind), op.bytes(),
             kTuningName[kind], engines ? 0 : dw.nchannels, engines ? "no SM moves data" : where);
      if (dw.plain) {
        // Its barriers and staged parts ride on the LL connections of its channels with
        // every peer (kernels/work/direct.h); its offers are made again whenever the plan is
        // reused (GpuDataPath::runCached).
        p_.plainDirect.push_back({static_cast<uint32_t>(p_.direct.size()), static_cast<uint32_t>(oi)});
        for (int c = 0; c < dw.nchannels; ++c)
          for (int r = 0; r < comm_->nranks; ++r) {
            if (r == comm_->rank) continue;
            MCCL_CHECK(ipc.need(ConnKey{r, c, ConnClass::Ll, true}));
            MCCL_CHECK(ipc.need(ConnKey{r, c, ConnClass::Ll, false}));
          }
      }
      (engines ? p_.engine : p_.direct).push_back(dw);
      continue;
    }
    // A Simple step fits a slot of the FIFOs it goes through (point-to-point ones differ).
    PlanChoice choice = choosePlan(comm_, op, ipc.slotBytes(op.isP2p() ? ConnClass::P2p : ConnClass::Ring));
    choice.nchannels = std::min(choice.nchannels, ipc.maxChannels());
    DevWork w;
    std::memset(&w, 0, sizeof w);
    const Schedule hostView = makeSchedule(comm_, op, choice);  // host ring pointers
    w.s = hostView;
    w.s.ring = dp_->devRing();
    w.s.ringPos = dp_->devRingPos();
    w.s.nodeFirst = dp_->devNodeFirst();
    w.in = op.sendbuff;
    w.out = op.recvbuff;
    w.type = static_cast<uint8_t>(op.datatype);
    w.red = devRed(op.red.kind);
    w.premul = op.hasReduction() && op.red.kind == RedKind::PreMulSum;
    w.scalarBits = op.red.scalarBits;
    w.scalarPtr = op.red.scalarPtr;
    w.postDiv = op.red.kind == RedKind::SumPostDiv ? op.red.postDivisor : 0;
    w.proto = choice.proto == Proto::LL ? kProtoLl : choice.proto == Proto::LL128 ? kProtoLl128 : kProtoSimple;
    const bool llFamily = w.proto != kProtoSimple;
    w.twoShot = w.proto == kProtoLl128 && choice.twoShot ? 1 : 0;
    if (w.proto == kProtoSimple && scratchElems(hostView) > 0)
      MCCL_CHECK(dp_->scratch(static_cast<size_t>(hostView.nchannels) * numLanes(hostView) *
                                  static_cast<size_t>(scratchElems(hostView)) * datatypeSize(op.datatype),
                              &w.scratch));
    if (selfCopy) {
      w.out = p_.ops[static_cast<size_t>(partner[oi])].recvbuff;
      w.selfCopy = 1;
    }
    w.units = unitsOf(w, ipc.slots(connClassOf(hostView.algo)), comm_->gpuNet, p2pUnits, op.oneWay());
    if (w.proto == kProtoSimple && !selfCopy)
      markUserBuffers(op, hostView, &w, op.isP2p() && ways[static_cast<size_t>(op.root)] == 3);
    if (dump) {
      if (selfCopy)
        std::printf("[mccl rank %d] seq %llu %s: to itself, copied into its Recv's buffer, %d channel(s)\n",
                    comm_->rank, static_cast<unsigned long long>(op.seq), opKindName(op.kind), hostView.nchannels);
      else if (llFamily)
        std::printf("[mccl rank %d] seq %llu %s: %s all pairs%s, %d channel(s)\n", comm_->rank,
                    static_cast<unsigned long long>(op.seq), opKindName(op.kind), w.proto == kProtoLl ? "LL" : "LL128",
                    w.twoShot ? " in two hops" : "", hostView.nchannels);
      else
        std::printf("[mccl rank %d] seq %llu %s", comm_->rank, static_cast<unsigned long long>(op.seq),
                    dumpSchedule(hostView).c_str());
    }
    // What NCCL prints at NCCL_DEBUG_SUBSYS=TUNING (rank 0), so the two can be read side by
    // side (scripts/channels_table.py): the blocks (SMs) a size takes are the user's.
    if (comm_->rank == 0 && logEnabled(LogLevel::Info, kLogTuning))
      INFO(kLogTuning, "%s: %zu Bytes -> Algo %s proto %s channels %d threads %d", opKindName(op.kind), op.bytes(),
           w.twoShot ? "twoshot" : llFamily ? "allpairs" : algoName(hostView.algo),
           w.proto == kProtoLl ? "LL" : w.proto == kProtoLl128 ? "LL128" : "SIMPLE", hostView.nchannels,
           launchThreads());
    const ConnClass cls = w.proto == kProtoLl     ? (op.isP2p() ? ConnClass::LlP2p : ConnClass::Ll)
                          : w.proto == kProtoLl128 ? (op.isP2p() ? ConnClass::Ll128P2p : ConnClass::Ll128)
                                                   : connClassOf(hostView.algo);
    if (op.isP2p()) {
      // Large messages to a peer are split over several channels, each its own queue
      // (block; a Simple launch gives a peer's two directions one, joinBothWays) and
      // connection; both sides choose the same split from the size.
      bool send = op.kind == OpKind::Send;
      for (int c = 0; c < hostView.nchannels; ++c) {
        int64_t off, cnt;
        scheduleChannelRange(hostView, c, &off, &cnt);
        if (cnt > 0 && !selfCopy) MCCL_CHECK(ipc.need(ConnKey{op.root, c, cls, send}));
        int& have = p2pQueue[{op.root * 2 + (send ? 1 : 0), c}];
        if (have) continue;
        have = 1;
        DevQueue q{};
        q.channel = static_cast<int16_t>(c);
        q.peer = static_cast<int16_t>(op.root);
        q.send = send ? 1 : 0;
        p_.queues.push_back(q);
      }
    } else if (llFamily) {
      maxCh = std::max(maxCh, hostView.nchannels);
      if (op.count > 0)
        for (int c = 0; c < hostView.nchannels; ++c)
          for (int r = 0; r < comm_->nranks; ++r) {
            if (allPairsSendsTo(hostView, r)) MCCL_CHECK(ipc.need(ConnKey{r, c, cls, true}));
            if (allPairsRecvsFrom(hostView, r)) MCCL_CHECK(ipc.need(ConnKey{r, c, cls, false}));
          }
    } else {
      maxCh = std::max(maxCh, hostView.nchannels);
      if (op.count > 0 && hostView.nranks > 1) {
        for (int c = 0; c < hostView.nchannels; ++c)
          for (int lane = 0; lane < numLanes(hostView); ++lane) {
            int64_t steps = numSteps(hostView, c, lane);
            int64_t probe = hostView.algo == Algo::Ring && hostView.coll == Coll::AllReduce ? 2 * hostView.nranks - 1
                            : hostView.algo == Algo::Ring                                   ? hostView.nranks
                            : hostView.algo == Algo::Binomial ? binomialStepsPerChunk(hostView)
                                                              : 1;
            for (int64_t i = 0; i < steps && i < probe; ++i) {
              Step st = stepAt(hostView, c, lane, i);
              for (int k = 0; k < st.nrecv; ++k) MCCL_CHECK(ipc.need(ConnKey{st.recvPeer[k], c, cls, false}));
              for (int k = 0; k < st.nsend; ++k) MCCL_CHECK(ipc.need(ConnKey{st.sendPeer[k], c, cls, true}));
            }
          }
      }
    }
    p_.works.push_back(w);
  }
  for (int c = 0; c < maxCh; ++c) {
    DevQueue q{};
    q.channel = static_cast<int16_t>(c);
    q.peer = -1;
    p_.queues.push_back(q);
  }
  if (p_.works.size() > static_cast<size_t>(kLargeLaunch))
    return MCCL_ERR(ncclInvalidUsage, comm_,
                    "a group holds %zu operations on one GPU communicator; at most %d are supported",
                    p_.works.size(), kLargeLaunch);
  if (p_.queues.size() > static_cast<size_t>(kMaxQueues))
    return MCCL_ERR(ncclInvalidUsage, comm_, "a group needs %zu GPU queues; at most %d are supported",
                    p_.queues.size(), kMaxQueues);
  {
    CudaDeviceGuard guard(comm_->cudaDev);  // the kernels' CUfunctions are the device's
    bool channelBlocks = true;  // queue i runs channel i (LaunchSpec::channelBlocks)
    for (size_t i = 0; i < p_.queues.size(); ++i)
      channelBlocks = channelBlocks && p_.queues[i].channel == static_cast<int>(i);
    p_.parts = launchParts(p_.works, p_.queues.size(), comm_->cudaDev, channelBlocks, &p_.queues);
    joinBothWays(&p_.parts, p_.queues);
    if (dump)
      for (const GpuPlan::LaunchPart& part : p_.parts)
        if (!part.queues.empty())
          std::printf("[mccl rank %d] a Simple launch of %zu works on %d blocks, %d of them a peer's both ways, "
                      "%d with a Recv half that only waits\n",
                      comm_->rank, part.works.size(), part.spec.blocks,
                      static_cast<int>(std::count_if(part.queues.begin(), part.queues.end(),
                                                     [](const DevQueue& q) { return q.send == kQueueBothWays; })),
                      static_cast<int>(std::count_if(part.queues.begin(), part.queues.end(), [](const DevQueue& q) {
                        return q.send == kQueueBothWays && q.sendWarps > 0;
                      })));
  }
  start_ = std::chrono::steady_clock::now();
  if (planNs_[0]) planNs_[1] = steadyNs();
  return ncclSuccess;
}

ncclResult_t GpuWork::progress(bool* done) {
  *done = false;
  IpcTransport& ipc = dp_->ipc();
  MCCL_CHECK(comm_->checkPeers());
  MCCL_CHECK(ipc.progress());
  if (!ipc.allReady()) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (s > bootstrapTimeoutSeconds())
      return MCCL_ERR(ncclRemoteError, comm_, "rank %d: connecting GPU peers took longer than %.0f s",
                      comm_->rank, bootstrapTimeoutSeconds());
    return ncclSuccess;
  }
  MCCL_CHECK(dp_->launch(p_, planNs_[0], planNs_[1]));
  *done = true;
  dp_->remember(std::move(p_));
  return ncclSuccess;
}

}  // namespace mccl
