#include "core/planner.h"

#include <algorithm>
#include <cmath>

#include "core/comm.h"
#include "core/debug.h"
#include "core/knobs.h"
#include "core/types.h"

namespace mccl {
namespace {

// LL up to a threshold of bytes sent by the busiest rank (MCCL_LL_MAX_BYTES overrides), LL128
// above that up to its own (MCCL_LL128_MAX_BYTES), Simple beyond. Measured on 2 x H100 (NV18)
// with each protocol forced, 16 KiB - 32 MiB, NCCL alongside (bench/results/gpu-2xH100-
// 2026-11-25/protosweep.md), after Simple got kernels of its own and warp tiles (its 2 MiB
// AllReduce 28.7 -> 20.2 us since the 2 x H200 sweep of 2026-11-24 that set the limits
// before). LL128 wins where a collective only moves data, up to where Simple's fixed cost
// is paid back: AllGather (LL to 256 KiB sent, LL128 to 512 KiB: at 1 MiB sent Simple 17.1
// us against 21.7), Broadcast (512 KiB, 1 MiB), Send/Recv and AlltoAll (128 KiB, then LL128
// to 2 MiB: AlltoAll of 2 MiB a peer 19.5 against Simple's 21.7). AllReduce takes LL128 at
// 1 MiB (15.9 against LL's 16.6) and Simple from 2 MiB (20.2 against 24.5). Reduce and
// ReduceScatter stay on LL up to 512 KiB sent, then Simple (ReduceScatter of 1 MiB sent:
// 14.0 against LL's 17.8; Reduce 1 MiB 11.1 against 12.4).
// Point-to-point again on 2 x H200 (bench/results/gpu-2xH200-2026-11-26c, call 1): where both
// peers send (Send/Recv, AlltoAll) Simple wins from 2 MiB a peer (Send/Recv of 2 MiB 17.1 us
// against LL128's 18.1, AlltoAll of 2 MiB a peer 17.6 against 18.9), LL128 at 256 KiB - 1 MiB;
// where one side only sends (Gather, Scatter: OpDesc::oneWay()) LL128 never wins: LL to 512
// KiB a peer (Gather of 2 x 512 KiB 8.8 against LL128's 9.8), Simple from 1 MiB (Gather of
// 2 x 1 MiB 10.2 against 12.9, Scatter 10.5 against 12.6; 2 x 2 MiB 12.9 against 17.9).
// After the LL loops read a thread's lines from a peer at once (ll_proto.cuh, llReadLines),
// LL moved further (2 x H200, bench/results/gpu-2026-11-28e
// calls 5-6, three rounds each): ReduceScatter of 1 MiB (512 KiB sent) LL 9.8 us against
// Simple's 10.7 (NCCL 10.0-11.5), 2 MiB Simple still (13.1 against 13.3); Send/Recv both
// ways of 256 / 512 KiB LL 6.1 / 8.1 against LL128's 6.5 / 8.6, 1 MiB LL128 still (11.05
// both), AlltoAll of 2 x 512 KiB 8.5 against 9.3. Sends and Recvs both ways on more than two
// ranks keep LL to 128 KiB: an AlltoAll's peers share the links, and LL's doubled bytes
// there were not measured.
// AllGather on two ranks (2 x H200, bench/results/gpu-2026-11-28f call 1, three rounds):
// LL128 wins at 512 KiB sent (1 MiB total 7.5 us, LL 7.7) but not at 1 MiB, where it takes
// Simple's time (12.3-12.5) and LL 11.2-11.4: LL again there, before Simple. Not measured
// on more ranks, whose LL at large traffic lost (AllReduce of 2 MiB on four, above).
struct ProtoLimits {
  int64_t ll;       // LL up to this many bytes sent per rank
  int64_t ll128;    // then LL128 up to this many (0: never)
  int64_t llAgain;  // then LL again up to this many (0: never; measured on two ranks only)
};
ProtoLimits protoLimits(const OpDesc& op, int nranks) {
  if (op.isP2p() && op.oneWay()) return {512 << 10, 0, 0};
  switch (op.kind) {
    case OpKind::AllReduce: return {512 << 10, 1 << 20, 0};
    // ReduceScatter on 2 x H200 (bench/results/gpu-2xH200-2026-11-26h call 5): LL 7.2 us
    // against Simple's 8.6 (24 channels) at 256 KiB sent, 11.4 against 9.6 at 512 KiB; with
    // the batched reads 512 KiB goes LL too (above).
    case OpKind::ReduceScatter: return {512 << 10, 0, 0};
    case OpKind::Reduce: return {512 << 10, 0, 0};
    case OpKind::AllGather: return {256 << 10, 512 << 10, nranks == 2 ? 1 << 20 : 0};
    case OpKind::Broadcast: return {512 << 10, 0, 0};  // 1 MiB: Simple on 24 channels 8.4 us, LL128 9.3
    case OpKind::Send:
    case OpKind::Recv: return {nranks == 2 ? 512 << 10 : 128 << 10, 1 << 20, 0};
    case OpKind::AlltoAll:
    case OpKind::Gather:
    case OpKind::Scatter: break;  // run whole only in a host segment, never planned (op.h)
  }
  return {1 << 20, 0, 0};
}
// Without LL128 (NCCL_PROTO), LL runs to its crossover with Simple (sweep_ll_simple.md of
// bench/results/gpu-2xH200-2026-11-23): AllReduce 2 MiB, every other collective 1 MiB.
constexpr int64_t kLlOnlyMaxTraffic = 1 << 20;
constexpr int64_t kLlOnlyAllReduceMaxTraffic = 2 << 20;
// Bytes of each peer's data per channel: LL kLlBytesPerChannel (planner.h), LL128 16 KiB.
// LL128 per block is bound by the latency of its rounds: at 1 MiB AllGather 32 channels
// took 10.7 us, 16 took 13.0.
constexpr double kLl128BytesPerChannel = 16 * 1024;
// The most channels of an LL or LL128 collective (MCCL_LL_MAX_CHANNELS, 1 to kLlMaxChannels):
// 24, the most NCCL's own take on 2 x H200 (RING/LL 16-24 from 128 KiB to 1 MiB,
// bench/results/gpu-2xH200-2026-11-26c/channels.md), where mccl took 32 (the SMs are the
// user's). A channel's share of 128 KiB - 1 MiB is then several lines a thread, which the
// lean LL kernel moves in one step (kernels/collectives/ll_kernel.cu, llLeanWorkLines).
int llMaxChannels() {
  return static_cast<int>(std::clamp<int64_t>(knobInt(Knob::LlMaxChannels), 1, kLlMaxChannels));
}
// Bytes of each peer's data an LL channel takes: MCCL_LL_CHANNEL_BYTES for collectives
// (kLlBytesPerChannel unless set), kLlBytesPerChannel for point-to-point.
double llChannelBytes(const OpDesc& op) {
  const int64_t b = op.isP2p() ? 0 : knobInt(Knob::LlChannelBytes);
  return static_cast<double>(b > 0 ? static_cast<size_t>(b) : kLlBytesPerChannel);
}
constexpr int64_t kP2pMinChunkBytes = 256 * 1024;
// From 32 MiB a peer, two ranks' Sends and Recvs step 128 KiB (at 32 MiB on 24 channels
// 256 units where the rule below gives 96 of 341 KiB; from 64 MiB it gave whole 512 KiB
// slots). 2 x H200, 128 KiB slots against the default 512 KiB, eight deep each
// (bench/results/gpu-2026-11-28d calls 8-10, NCCL_P2P_NVL_CHUNKSIZE): Gather 0.96-0.99x
// the time at 32-128 MiB a peer, Scatter and AlltoAll 0.97-0.98x at 32 MiB a peer and
// 0.98-1.00x above, Send/Recv 0.976-0.979x at 32 MiB and 0.99-1.00x above; at 16 MiB a
// peer 1.00-1.02x (Gather 0.98), at 8 MiB 1.02x: there the rule below stays. Landed
// against the old rule (call 11, three rounds): Gather, Scatter, AlltoAll of 64-128 MiB
// and Send/Recv of 32 MiB 1.01-1.04x faster, 256 MiB - 1 GiB 1.000-1.010x.
constexpr int64_t kP2pFineStepFromBytes = int64_t{32} << 20;
constexpr int64_t kP2pFineStepBytes = 128 * 1024;
constexpr int64_t kUnitMinChunkBytes = 256 * 1024;
// The step of a chain of more than two ranks on one node (choosePlan).
constexpr int64_t kChainStepBytes = 128 * 1024;
// Units a channel of a two-rank chain (Broadcast, Reduce) aims at, where the ring keeps
// kUnitsPerChannel (MCCL_SIMPLE_UNIT_STEPS overrides both). 2 x H200 at 24 channels, each
// forced (bench/results/gpu-2026-11-28d call 2): 16 steps took Broadcast of 64 / 128 MiB
// 0.952 / 0.950x the time of 4 (196.4 us against 205.7, NCCL 203.2; 383.0 against 402.3,
// NCCL 388.7), Reduce of 64 - 256 MiB 0.982-0.988x; the other sizes within 1.5 % (the same
// plan: the rule needs 256 KiB steps at 4 units a channel). The ring lost with more:
// ReduceScatter 128 MiB 1.09x, AllReduce and AllGather 128 MiB 1.05-1.06x at 8-16 steps.
constexpr int64_t kChainUnitSteps = 16;
// Simple channels of a GPU communicator: what NCCL 2.28 takes from 4 MiB on 2 x H100 and
// 2 x H200 (NV18), 24 (bench/results/gpu-2xH100-2026-11-25/channels.md).
constexpr int kSimpleGpuMaxChannels = 24;
constexpr int kP2pGpuMaxChannels = 32;  // point-to-point with blocks both ways (choosePlan)
constexpr int kSelfP2pMaxChannels = 8;  // point-to-point with itself (choosePlan)

// Latency per step (us) and bandwidth per link (GB/s) of the fabric a comm uses.
struct Fabric {
  double alphaUs;
  double gbps;
};

Fabric fabricOf(const ncclComm* comm) {
  if (comm->isHost()) return {5.0, 5.0};
  if (comm->gpuNet) return {10.0, 5.0};  // the proxy and UCX (TCP-class network)
  return {2.0, 300.0};
}

double log2i(int n) { return n > 1 ? std::ceil(std::log2(static_cast<double>(n))) : 0; }

double ringAllReduceUs(Fabric f, int n, double bytes) {
  return 2 * (n - 1) * f.alphaUs + 2.0 * (n - 1) / n * bytes / (f.gbps * 1e3);
}
// Depth of the tree a Tree schedule uses: a binary tree over ranks on one node; over
// several, a binary tree between nodes plus the chain inside the largest node.
double treeDepth(const ncclComm* comm) {
  const Topology& t = comm->topo;
  if (t.nNodes() <= 1) return log2i(comm->nranks);
  const int largest = std::max(1, t.maxLocalRanks());
  return log2i(t.nNodes()) + static_cast<double>(largest - 1);
}
double treeAllReduceUs(Fabric f, double depth, double bytes) {
  return 2 * depth * f.alphaUs + 2.0 * bytes / (f.gbps * 1e3);
}
double chainUs(Fabric f, int n, double bytes) { return (n - 1) * f.alphaUs + bytes / (f.gbps * 1e3); }
double binomialUs(Fabric f, int n, double bytes) { return log2i(n) * (f.alphaUs + bytes / (f.gbps * 1e3)); }

bool allowed(const char* algo) { return knobListAllows(knobStr(Knob::Algo), algo); }

// Bytes the busiest rank sends when op runs on the all-pairs LL protocol.
double llTrafficBytes(const OpDesc& op, int n) {
  const double b = static_cast<double>(op.bytes());
  return op.isP2p() ? b : b * (n - 1);
}

// An LL128 AllReduce on more than two ranks may run in two hops (DevWork::twoShot): each
// rank reduces its 1/n of the data from every peer's, then sends it to every peer, 2 (n - 1)
// / n of the data sent where the one-shot form sends it whole to each of n - 1 peers (the
// last count % n elements go one-shot after them), for a second hop. Measured on 4 x H200
// with each form forced (bench/results/gpu-2xH200-2026-11-27d call 4): four ranks, 512 KiB
// one hop 18.0 us, two 19.5; 1 MiB 26.3 against 21.4; 2 MiB 45.1 against 30.8 (Simple 32.0,
// so LL128 keeps 2 MiB); 4 MiB Simple 41.7, two hops 49.4; three ranks never better than
// one hop or Simple (768 KiB 16.6 against 18.7, 1.5 MiB Simple 23.7 against 24.9).
// MCCL_LL128_TWO_SHOT: 1 where that was faster (four ranks or more, from 1 MiB), 2 at every
// size of more than two ranks, 0 never.
constexpr size_t kTwoShotMinBytes = 1 << 20;
bool ll128TwoShot(const ncclComm* comm, const OpDesc& op) {
  const int64_t mode = knobInt(Knob::Ll128TwoShot);
  if (op.kind != OpKind::AllReduce || comm->nranks <= 2 || op.count < static_cast<size_t>(comm->nranks) || mode <= 0)
    return false;
  return mode >= 2 || (comm->nranks >= 4 && op.bytes() >= kTwoShotMinBytes);
}

// The LL-family protocols run between GPUs that reach each other over CUDA IPC, all pairs
// at once (so up to kLlMaxRanks ranks for collectives), below traffic thresholds: one-shot
// latency wins over the ring's bandwidth until the extra bytes of flagged lines (LL: twice
// the data, LL128: 16/15) cost more. NCCL_PROTO limits the choice; a protocol that is the
// only one allowed runs every size.
Proto chooseProto(const ncclComm* comm, const OpDesc& op) {
  if (comm->isHost() || comm->gpuNet) return Proto::Simple;
  if (!op.isP2p() && comm->nranks > kLlMaxRanks) return Proto::Simple;
  const std::string protos = knobStr(Knob::Proto);
  // LL128 has no fp8 reductions (the kernel's stack budget): LL and Simple serve them.
  const bool fp8Reduction =
      op.hasReduction() && (op.datatype == ncclFloat8e4m3 || op.datatype == ncclFloat8e5m2);
  const bool ll = knobListAllows(protos, "LL"), ll128 = !fp8Reduction && knobListAllows(protos, "LL128"),
             simple = knobListAllows(protos, "Simple");
  if (!ll && !ll128 && !simple) return fp8Reduction ? Proto::LL : Proto::Simple;
  if (!ll && !ll128) return Proto::Simple;
  const double traffic = llTrafficBytes(op, comm->nranks);
  const ProtoLimits lim = protoLimits(op, comm->nranks);
  // protoLimits was measured on two ranks. A collective's ring or chain takes a step per
  // further rank while the all-pairs step stays one, so on more ranks the flagged lines win
  // over more traffic: LL's limit times n / 2, LL128's times n - 1 (4 x H100, bench/results/
  // gpu-4x-2026-11-27 call 2, each protocol forced: AllReduce of 256 KiB LL 12.4 us, 512 KiB
  // LL128 17.3 against LL's 20.3, 1 MiB LL128 25.0 against the ring's 29.0, 2 MiB the ring
  // 33.7 against 41.4; AllGather of 4 x 512 KiB LL128 15.1 against Simple's 19.1, 4 x 1 MiB
  // Simple 25.6 against 28.7; Reduce of 256 KiB LL 7.4 against the chain's 9.2, 512 KiB the
  // chain 9.8 against 11.8). Point-to-point sends one message whatever the rank count. LL
  // without LL128 keeps its crossover with Simple (AllReduce 512 KiB LL 20.3 against the
  // ring's 30.4, 1 MiB 35.5 against 29.0).
  const double ranks = static_cast<double>(comm->nranks);
  const double llScale = op.isP2p() ? 1.0 : std::max(1.0, ranks / 2);
  const double ll128Scale = op.isP2p() ? 1.0 : std::max(1.0, ranks - 1);
  int64_t llLimit = knobInt(Knob::LlMaxBytes);
  const bool llKnob = llLimit > 0;
  if (llLimit <= 0)
    llLimit = ll128 ? static_cast<int64_t>(static_cast<double>(lim.ll) * llScale)
              : op.kind == OpKind::AllReduce ? kLlOnlyAllReduceMaxTraffic
                                             : kLlOnlyMaxTraffic;
  int64_t ll128Limit = knobInt(Knob::Ll128MaxBytes);
  const bool ll128Knob = ll128Limit > 0;
  if (ll128Limit <= 0) ll128Limit = static_cast<int64_t>(static_cast<double>(lim.ll128) * ll128Scale);
  // With LL excluded, LL128 takes LL's sizes too (it beats Simple there: AllReduce 8 B 12.6
  // against 21 us).
  if (!ll) ll128Limit = std::max(ll128Limit, llLimit);
  if (ll && (traffic <= static_cast<double>(llLimit) || (!ll128 && !simple))) return Proto::LL;
  const double traffic128 = ll128TwoShot(comm, op) ? 2.0 * (ranks - 1) / ranks * static_cast<double>(op.bytes()) : traffic;
  if (ll128 && (traffic128 <= static_cast<double>(ll128Limit) || !simple)) return Proto::LL128;
  // LL's second range (ProtoLimits::llAgain), where the limits are not set by knobs.
  if (ll && ll128 && !llKnob && !ll128Knob && traffic <= static_cast<double>(lim.llAgain))
    return Proto::LL;
  return simple ? Proto::Simple : Proto::LL;
}

}  // namespace

int launchThreads() {
  int64_t t = knobInt(Knob::NThreads);
  if (t <= 0) return kGpuMaxThreads;
  t = std::max<int64_t>(64, std::min<int64_t>(kGpuMaxThreads, t));
  return static_cast<int>(t / 64 * 64);
}

PlanChoice choosePlan(const ncclComm* comm, const OpDesc& op, size_t slotBytes) {
  PlanChoice c;
  const int n = comm->nranks;
  const size_t esize = datatypeSize(op.datatype);
  const double bytes = static_cast<double>(op.bytes());
  const Fabric f = fabricOf(comm);
  // A GPU communicator on one node runs the ring and the chain unless NCCL_ALGO leaves them
  // out: the tree and the binomial schedule run in the generic kernel, the ring and the
  // chain in the Simple kernel with its pipelined steps, and there they lost at every size
  // the model gave them (4 x H100, bench/results/gpu-4x-2026-11-27 call 2, Simple: AllReduce
  // 64 KiB - 2 MiB on the tree 39.5-61.9 us, on the ring 28.5-33.7; Broadcast and Reduce of
  // 64 - 512 KiB binomial 13.8-14.5, chain 8.5-9.8). Host communicators and those over the
  // network keep the model.
  const bool oneNodeGpu = !comm->isHost() && !comm->gpuNet;
  switch (op.kind) {
    case OpKind::AllReduce: {
      bool ring = allowed("ring"), tree = allowed("tree");
      if (!ring && !tree) ring = true;
      int64_t thresh = knobInt(Knob::TreeThreshold);
      bool preferTree = thresh > 0 ? bytes < static_cast<double>(thresh)
                                   : !oneNodeGpu && treeAllReduceUs(f, treeDepth(comm), bytes) < ringAllReduceUs(f, n, bytes);
      c.algo = (tree && (!ring || (preferTree && n > 2))) ? Algo::Tree : Algo::Ring;
      break;
    }
    case OpKind::Broadcast:
    case OpKind::Reduce: {
      bool chain = allowed("ring") || allowed("chain"), bin = allowed("tree") || allowed("binomial");
      if (!chain && !bin) chain = true;
      bool preferBin = !oneNodeGpu && binomialUs(f, n, bytes) < chainUs(f, n, bytes);
      c.algo = (bin && (!chain || (preferBin && n > 2))) ? Algo::Binomial : Algo::Chain;
      break;
    }
    case OpKind::AllGather:
    case OpKind::ReduceScatter: c.algo = Algo::Ring; break;
    case OpKind::Send:
    case OpKind::Recv: c.algo = Algo::P2p; break;
    case OpKind::AlltoAll:
    case OpKind::Gather:
    case OpKind::Scatter: break;  // run whole only in a host segment, never planned (op.h)
  }
  c.proto = chooseProto(comm, op);
  c.twoShot = c.proto == Proto::LL128 && ll128TwoShot(comm, op);
  if (c.proto != Proto::Simple) {
    // LL/LL128: a block per channel, each moving a share of every peer's data in steps of
    // one slot. A step's cost is mostly latency (load, store over NVLink, poll), so more
    // blocks with less each beat fewer blocks with more steps.
    const double perPeer = static_cast<double>(op.bytes());
    const double perChannel =
        c.proto == Proto::LL ? llChannelBytes(op) : kLl128BytesPerChannel;
    // Send/Recv: all-to-all patterns run every peer's operations at once, so fewer
    // channels per peer on larger cliques. Collectives: no more than NCCL's LL and LL128
    // collectives take (llMaxChannels).
    const int cap = op.isP2p() ? std::min(kLlMaxChannels, std::max(4, 32 / n)) : llMaxChannels();
    int nch = static_cast<int>(std::min<double>(cap, std::max(1.0, std::ceil(perPeer / perChannel))));
    int64_t minc = knobInt(Knob::MinNChannels), maxc = knobInt(Knob::MaxNChannels);
    if (minc > 0) nch = std::max<int>(nch, static_cast<int>(minc));
    if (maxc > 0) nch = std::min<int>(nch, static_cast<int>(maxc));
    nch = std::max(comm->config.minCTAs, std::min(nch, comm->config.maxCTAs));
    c.nchannels = std::max(1, std::min(nch, kLlMaxChannels));
    c.align = 1;
    c.chunk = 0;
    return c;
  }
  // Channels: a host rank is one thread, so one channel unless asked. A GPU uses one block
  // per channel: enough of them to fill NVLink for large messages, one for small ones.
  int nch;
  if (comm->isHost()) {
    nch = static_cast<int>(knobInt(Knob::HostChannels));
    if (nch <= 0) nch = 1;
  } else {
    // A channel a 32 KiB of the bytes a rank moves, up to the SMs NCCL takes (they are the
    // user's): with units (DevWork::units) no block waits for a slower one, and 24 channels
    // match or beat NCCL's 24 from 8 MiB to 2 GiB on 2 x H200 but for AllReduce and
    // Broadcast of 32 MiB (0.98, 0.99; bench/results/gpu-2xH200-2026-11-25/ratio.md). Below
    // 3 MiB a collective's step costs about its round trip whatever its bytes, so all 24
    // from 768 KiB (a channel a 128 KiB until 2026-11-26h: ReduceScatter of 1 MiB on 8
    // channels 11.4 us, on 24 9.6; AllGather of 2 MiB on 16 11.6, on 24 11.1; 2 x H200,
    // bench/results/gpu-2xH200-2026-11-26h call 5). Point-to-point, where a block serves a
    // peer's Sends and Recvs on its channel (MCCL_P2P_BLOCK_BOTH_WAYS, joinBothWays): a
    // channel a 64 KiB up to NCCL's 32 (its blocks serve both ways too), 32 blocks for a pair
    // both ways where there were 48 (24 channels, a block a channel and direction), and
    // faster at 2-4 MiB a peer: Send/Recv of 4 MiB 0.989x the time, AlltoAll of 2 x 2 MiB
    // 0.930x, 2 x 8 MiB 0.977x, 64 MiB - 1 GiB 1.003-1.013x (2 x H200,
    // bench/results/gpu-2xH200-2026-11-29 call 1). Without it (or in blocks of fewer than
    // kBothWaysMinThreads, which serve one direction) a channel a 128 KiB, 24 at most.
    const bool joined =
        op.isP2p() && knobBool(Knob::P2pBlockBothWays) && launchThreads() >= kBothWaysMinThreads;
    const double perChannel = (joined ? 64.0 : op.isP2p() ? 128.0 : 32.0) * 1024;
    const double total = bytes * (op.kind == OpKind::AllGather || op.kind == OpKind::ReduceScatter ? n : 1);
    nch = static_cast<int>(std::min<double>(joined ? kP2pGpuMaxChannels : kSimpleGpuMaxChannels,
                                            std::max(1.0, std::ceil(total / perChannel))));
    // Over the network the proxy, not the SMs, is the limit: a few channels keep enough
    // puts in flight, and each costs pinned staging memory per peer.
    if (comm->gpuNet) nch = std::min<int>(nch, static_cast<int>(std::max<int64_t>(1, knobInt(Knob::NetChannels))));
  }
  int64_t minc = knobInt(Knob::MinNChannels), maxc = knobInt(Knob::MaxNChannels);
  if (minc > 0) nch = std::max<int>(nch, static_cast<int>(minc));
  if (maxc > 0) nch = std::min<int>(nch, static_cast<int>(maxc));
  nch = std::max(comm->config.minCTAs, std::min(nch, comm->config.maxCTAs));
  if (op.isP2p()) {
    // Host: one queue per peer. GPU: a block per channel, peer and direction; all-to-all
    // patterns use every peer at once, so fewer channels per peer on larger cliques.
    nch = comm->isHost() ? 1 : std::min(nch, std::max(1, 64 / n));
    // To itself (an AlltoAll's own block, a Gather's or Scatter's root): a copy within the
    // GPU's memory beside the NVLink traffic, which few blocks keep up with; its blocks are
    // the user's SMs too (a two-rank AlltoAll took 32 more than its Sends and Recvs' 32).
    if (!comm->isHost() && op.root == comm->rank) nch = std::min(nch, kSelfP2pMaxChannels);
  }
  c.nchannels = std::max(1, std::min(nch, kMaxChannels));
  c.align = std::max<int64_t>(1, 64 / static_cast<int64_t>(esize));
  // A step is a whole FIFO slot (each step pays a fence and flags), except that a
  // Send/Recv pipelines sender and receiver only over two steps or more: half a channel's
  // bytes, but never under 256 KiB (smaller measured slower; bench/results/gpu-2xH200-2026-11-22).
  // On two ranks, where Sends and Recvs take units (gpu_plan.cc, unitsOf), a quarter
  // (kUnitsPerChannel steps a channel), so the channels share the work from 24 MiB at 24,
  // and from 32 MiB kP2pFineStepBytes.
  int64_t chunkBytes = static_cast<int64_t>(slotBytes);
  const int64_t stepsKnob = knobInt(Knob::SimpleUnitSteps);
  if (!comm->isHost() && op.isP2p()) {
    const bool twoRanks = n == 2 && !comm->gpuNet;
    const int64_t steps = twoRanks ? (stepsKnob > 0 ? stepsKnob : kUnitsPerChannel) : 2;
    chunkBytes = std::min(chunkBytes, std::max(kP2pMinChunkBytes, static_cast<int64_t>(bytes) / c.nchannels / steps));
    if (twoRanks && stepsKnob <= 0 && static_cast<int64_t>(bytes) >= kP2pFineStepFromBytes)
      chunkBytes = std::min(chunkBytes, kP2pFineStepBytes);
  }
  // A chain on more than two ranks (Broadcast, Reduce) forwards every step, so its
  // pipeline fills over n - 1 hops, while every channel takes only a few steps: a 64 MiB
  // Broadcast on 24 channels, 5.3 steps of 512 KiB each, spent about a quarter of its time
  // filling (bench/results/gpu-2026-11-28 call 2). Steps of kChainStepBytes (128 KiB; at
  // most half a slot) took a four-rank Broadcast of 16 MiB - 1 GiB 0.84-0.98x the time of
  // 512 KiB steps (64 MiB 210 us against 227-250, NCCL 217) and Reduce 0.90-0.99x; 256 KiB
  // steps gained about half as much (4 x H100, NCCL_BUFFSIZE=1 MiB and 2 MiB against 4 MiB,
  // call 3). Half a slot (512 KiB) had already beaten whole slots (1 MiB) by 3-11 %
  // (bench/results/gpu-2xH200-2026-11-27g call 2).
  if (!comm->isHost() && !comm->gpuNet && c.algo == Algo::Chain && n > 2)
    chunkBytes = std::min({chunkBytes, static_cast<int64_t>(slotBytes / 2), kChainStepBytes});
  // A ring or chain collective that would have too few slot-sized units for every channel
  // to take kUnitsPerChannel (gpu_plan.cc, unitsOf) takes smaller steps, down to 256
  // KiB, so its channels still share the work as they free up: on 2 x H200 at 24 channels
  // an AllReduce of 128 MiB took 455.5 us in 256 KiB steps against 488.9 in fixed 1 MiB
  // ranges (NCCL 471.7); below 256 KiB the steps' fixed costs outweigh it (Broadcast of
  // 8 MiB in 256 KiB steps 36.1 us against 33.4). A chain of two ranks aims at
  // kChainUnitSteps units a channel: its last units, taken by channels that free up at
  // different times, then leave less idle.
  if (!comm->isHost() && !comm->gpuNet && !op.isP2p() && (c.algo == Algo::Ring || c.algo == Algo::Chain) &&
      knobBool(Knob::SimpleUnits)) {
    const int64_t perRank = static_cast<int64_t>(op.kind == OpKind::AllGather || op.kind == OpKind::ReduceScatter
                                                     ? op.count * esize
                                                     : op.bytes());
    const int64_t unitRanks = c.algo == Algo::Ring && op.kind == OpKind::AllReduce ? n : 1;
    const int64_t perStep = c.nchannels * unitRanks;
    const int64_t steps = stepsKnob > 0 ? stepsKnob : c.algo == Algo::Chain ? kChainUnitSteps : kUnitsPerChannel;
    const int64_t want = std::max(perRank / (steps * perStep), kUnitMinChunkBytes);
    if (want < chunkBytes && perRank / (kUnitsPerChannel * perStep) >= kUnitMinChunkBytes) chunkBytes = want;
  }
  c.chunk = std::max<int64_t>(c.align, chunkBytes / static_cast<int64_t>(esize) / c.align * c.align);
  return c;
}

Schedule makeSchedule(const ncclComm* comm, const OpDesc& op, const PlanChoice& choice) {
  Schedule s;
  switch (op.kind) {
    case OpKind::AllReduce: s.coll = Coll::AllReduce; break;
    case OpKind::AllGather: s.coll = Coll::AllGather; break;
    case OpKind::ReduceScatter: s.coll = Coll::ReduceScatter; break;
    case OpKind::Broadcast: s.coll = Coll::Broadcast; break;
    case OpKind::Reduce: s.coll = Coll::Reduce; break;
    case OpKind::Send: s.coll = Coll::Send; break;
    case OpKind::Recv: s.coll = Coll::Recv; break;
    case OpKind::AlltoAll:
    case OpKind::Gather:
    case OpKind::Scatter: break;  // run whole only in a host segment, never planned (op.h)
  }
  s.algo = choice.algo;
  s.nranks = comm->nranks;
  s.rank = comm->rank;
  s.root = op.root;
  s.nchannels = choice.nchannels;
  s.count = static_cast<int64_t>(op.count);
  s.chunk = choice.chunk;
  s.align = choice.align;
  s.ring = comm->topo.ringTable();  // nullptr: the identity ring
  s.ringPos = comm->topo.ringPosTable();
  s.nnodes = comm->topo.nNodes();
  s.nodeFirst = comm->topo.nodeFirst().empty() ? nullptr : comm->topo.nodeFirst().data();
  return s;
}

double estimateOpTimeUs(const ncclComm* comm, const OpDesc& op) {
  const Fabric f = fabricOf(comm);
  const int n = comm->nranks;
  const double bytes = static_cast<double>(op.bytes());
  if (n <= 1) return f.alphaUs;
  switch (op.kind) {
    case OpKind::AllReduce: return std::min(ringAllReduceUs(f, n, bytes), treeAllReduceUs(f, treeDepth(comm), bytes));
    case OpKind::AllGather:
    case OpKind::ReduceScatter: return (n - 1) * f.alphaUs + (n - 1) * bytes / (f.gbps * 1e3);
    case OpKind::Broadcast:
    case OpKind::Reduce: return std::min(chainUs(f, n, bytes), binomialUs(f, n, bytes));
    case OpKind::Send:
    case OpKind::Recv: return f.alphaUs + bytes / (f.gbps * 1e3);
    // Queued whole (op.h): as their Sends and Recvs at once (estimateGroupTimeUs), the
    // busiest rank moving a block for every rank.
    case OpKind::AlltoAll:
    case OpKind::Gather:
    case OpKind::Scatter: return f.alphaUs + n * bytes / (f.gbps * 1e3);
  }
  return f.alphaUs;
}

double estimateGroupTimeUs(const ncclComm* comm, const std::vector<OpDesc>& ops) {
  const Fabric f = fabricOf(comm);
  double us = 0, sendBytes = 0, recvBytes = 0;
  bool p2p = false;
  for (const OpDesc& op : ops) {
    if (!op.isP2p()) {
      us += estimateOpTimeUs(comm, op);
      continue;
    }
    p2p = true;
    (op.kind == OpKind::Send ? sendBytes : recvBytes) += static_cast<double>(op.bytes());
  }
  if (p2p) us += f.alphaUs + std::max(sendBytes, recvBytes) / (f.gbps * 1e3);
  return us;
}

}  // namespace mccl
