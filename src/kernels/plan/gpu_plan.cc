// A GPU group's plan: which kernel runs which works, and when two calls make one plan.
#include "kernels/plan/gpu_plan.h"

#include <algorithm>
#include <vector>

#include "core/knobs.h"
#include "core/planner.h"
#include "core/types.h"
#include "kernels/launch/driver_launch.h"
#include "kernels/launch/launch_fn.h"

namespace mccl {

bool collReducesHost(Coll c) { return c == Coll::AllReduce || c == Coll::ReduceScatter || c == Coll::Reduce; }

// A Simple work of a ring collective, a chain or a point-to-point operation (with itself
// too: Gather, Scatter and AlltoAll send a rank's own block through its connection to
// itself), without the integer average's division (which only the generic kernel does).
bool simpleKernelFits(const DevWork& w) {
  const Schedule& s = w.s;
  if (w.proto != kProtoSimple || s.nranks < 2 || w.postDiv > 1 || w.scratch != nullptr) return false;
  switch (s.algo) {
    case Algo::Ring: return s.coll == Coll::AllReduce || s.coll == Coll::AllGather || s.coll == Coll::ReduceScatter;
    case Algo::Chain: return s.coll == Coll::Broadcast || s.coll == Coll::Reduce;
    case Algo::P2p: return s.coll == Coll::Send || s.coll == Coll::Recv;
    default: return false;
  }
}

bool simpleWorkUnaligned(const DevWork& w) {
  const uintptr_t buffers = reinterpret_cast<uintptr_t>(w.in) | reinterpret_cast<uintptr_t>(w.out);
  const bool blocks = w.s.algo == Algo::Ring && (w.s.coll == Coll::AllGather || w.s.coll == Coll::ReduceScatter);
  const uint64_t blockBytes = static_cast<uint64_t>(w.s.count) * datatypeSize(static_cast<ncclDataType_t>(w.type));
  return (buffers & 15) != 0 || (blocks && blockBytes % 16 != 0);
}

// Whether a work's channels take its units as they free up (DevWork::units): a Simple ring
// or chain collective that the Simple kernel runs, or a Send or Recv with another rank, over
// CUDA IPC only (the unit words live next to the tail of a receiver's FIFO, one per slot),
// with kUnitsPerChannel units a channel or more (core/planner.h). Both sides of a
// connection decide alike: from the size, the channels and the FIFO, which they share. A
// Send or Recv takes kUnitsOn where the group lets both ends know it runs in the Simple
// kernel (p2pUnits, GpuWork::init), else kUnitsAgree (dev_work.h), from twice as many units
// and not for Gather's and Scatter's (oneWay, OpDesc::oneWay()). Four ranks on 4 x H200, units
// by agreement against fixed ranges (bench/results/gpu-2026-11-28c call 2): Send/Recv ring
// 256 MiB - 1 GiB 1.03-1.05x faster, pairs both ways 1.06-1.10x from 128 MiB, AlltoAll
// 1.04-1.05x from 256 MiB; but at four units a channel (64 MiB) the ring took 1.04x as long
// (the round trip, and units too coarse to even out), and Gather and Scatter, whose root
// takes three peers' data at once, 1.01-1.07x as long from 256 MiB.
uint8_t unitsOf(const DevWork& w, uint32_t fifoSlots, bool network, bool p2pUnits, bool oneWay) {
  const Schedule& s = w.s;
  if (network || fifoSlots > static_cast<uint32_t>(kUnitSlots) || !simpleKernelFits(w) || w.selfCopy ||
      !knobBool(Knob::SimpleUnits) || !knobBool(Knob::SimpleKernel))
    return 0;
  const bool p2p = s.algo == Algo::P2p;
  if (p2p && s.root == s.rank) return 0;
  const bool agree = p2p && !p2pUnits;
  if (agree && oneWay) return 0;
  if (divUp(s.count, unitElems(s)) < kUnitsPerChannel * s.nchannels * (agree ? 2 : 1)) return 0;
  return agree ? kUnitsAgree : kUnitsOn;
}

static_assert(kGpuMaxThreads == kMaxThreads, "the planner's threads are the kernels' launch bounds");
static_assert(kBothWaysMinThreads == 2 * kPostWarpMin, "a block both ways is two halves of kPostWarpMin");

// The kernel for works that reduce at most one type: the LL (or LL128) kernel of that type
// when every work is LL (or every work LL128), not of fp8 on LL128 (which the planner never
// chooses); the Simple kernel of the type when every work is one it runs (simpleKernelFits);
// else the kernel of every protocol for the type. The LL kernels take every
// operator (the work's, at run time: LlTypedRt).
LaunchSpec specFor(const std::vector<DevWork>& works, size_t nqueues) {
  LaunchSpec spec;
  spec.large = works.size() > static_cast<size_t>(kSmallLaunch);
  bool allLl = !spec.large, allLl128 = !spec.large;
  for (const DevWork& w : works) {
    allLl = allLl && w.proto == kProtoLl;
    allLl128 = allLl128 && w.proto == kProtoLl128;
    if (!collReducesHost(w.s.coll)) continue;
    spec.reduces = true;
    spec.type = w.type;
  }
  if (spec.reduces && (spec.type == ncclFloat8e4m3 || spec.type == ncclFloat8e5m2)) allLl128 = false;
  if (allLl || allLl128) {
    spec.kind = spec.reduces ? LaunchKind::LlReduce : LaunchKind::LlCopy;
    spec.ll128 = allLl128;
  } else if (!spec.large && knobBool(Knob::SimpleKernel) &&
             std::all_of(works.begin(), works.end(), [](const DevWork& w) { return simpleKernelFits(w); })) {
    spec.kind = LaunchKind::Simple;
    spec.unaligned = std::any_of(works.begin(), works.end(), [](const DevWork& w) { return simpleWorkUnaligned(w); });
  }
  spec.blocks = static_cast<int>(nqueues);
  spec.threads = launchThreads();
  const bool llFamily = spec.kind == LaunchKind::LlReduce || spec.kind == LaunchKind::LlCopy;
  spec.tiny = llFamily && works.size() <= static_cast<size_t>(TinyArgs::kWorks) &&
              nqueues <= static_cast<size_t>(TinyArgs::kQueues);
  return spec;
}

// The lean LL kernel's two-work form (LeanTwoArgs) runs a launch where its blocks' queues
// say what the form's arithmetic does: each work's first block is the queue of its channel
// 0, and every block b runs exactly the works whose channels b - first[i] are (queueRuns),
// on those channels. The queues GpuWork::init makes pass: a peer's channels are in order
// and follow the peers in call order, the collectives' channels after them.
bool leanTwoLayout(const DevWork* works, int nworks, const std::vector<DevQueue>& queues, int32_t first[2]) {
  first[0] = first[1] = 0;
  if (nworks < 1 || nworks > 2) return false;
  for (int i = 0; i < nworks; ++i) {
    const auto zero = std::find_if(queues.begin(), queues.end(),
                                   [&](const DevQueue& q) { return q.channel == 0 && queueRuns(q, works[i]); });
    if (zero == queues.end()) return false;
    first[i] = static_cast<int32_t>(zero - queues.begin());
  }
  for (size_t b = 0; b < queues.size(); ++b)
    for (int i = 0; i < nworks; ++i) {
      const int64_t ch = static_cast<int64_t>(b) - first[i];
      const bool lean = ch >= 0 && ch < works[i].s.nchannels;
      if (lean != queueRuns(queues[b], works[i]) || (lean && queues[b].channel != ch)) return false;
    }
  return true;
}

// The launches of a group. A collective with units (DevWork::units) is a Simple launch of
// its own, first, in call order: every rank runs it in the Simple kernel, whatever else its
// group holds (a rank's own works may send the rest to the generic kernel, which takes
// fixed ranges: more than kSmallLaunch of them, or protocols mixed). The Sends and Recvs
// with units are one Simple launch after those (a Send's peer may be waiting in its Recv:
// they run at once; at most kSmallLaunch of them, GpuWork::init), at the same place on both
// ranks whatever the order of the calls, with the rank's copies to itself. Kernels are compiled per arithmetic type, so the other works,
// if they reduce several types, are launched once per type, in order of first appearance;
// those that only move data (point-to-point among them) go with the first. Every rank
// splits its group the same way (collectives come in the same order everywhere), so the
// launches match across ranks and no connection is used by two at once.
std::vector<GpuPlan::LaunchPart> launchParts(const std::vector<DevWork>& works, size_t nqueues, int dev,
                                             bool channelBlocks, const std::vector<DevQueue>* queues) {
  if (works.empty()) return {};
  std::vector<GpuPlan::LaunchPart> parts;
  for (const DevWork& w : works)
    if (w.units && w.s.algo != Algo::P2p) {
      parts.emplace_back();
      parts.back().works.push_back(w);
    }
  bool p2pPart = false;
  for (const DevWork& w : works)
    if (w.units == kUnitsOn && w.s.algo == Algo::P2p) {
      if (!p2pPart) parts.emplace_back();
      p2pPart = true;
      parts.back().works.push_back(w);
    }
  // A rank's copies to itself (Gather's and Scatter's root, AlltoAll's own block) run beside
  // its Sends and Recvs, not after them, where the launch has room.
  std::vector<char> moved(works.size(), 0);
  for (size_t i = 0; p2pPart && i < works.size(); ++i)
    if (works[i].selfCopy && parts.back().works.size() < static_cast<size_t>(kSmallLaunch)) {
      parts.back().works.push_back(works[i]);
      moved[i] = 1;
    }
  std::vector<int> types;
  bool rest = false;
  // Sends and Recvs of units by agreement (kUnitsAgree) stay with the rest: whichever
  // kernel runs them, the two ends agree at run time.
  auto own = [](const DevWork& w) { return w.units == kUnitsOn || (w.units && w.s.algo != Algo::P2p); };
  for (size_t i = 0; i < works.size(); ++i) {
    const DevWork& w = works[i];
    if (own(w) || moved[i]) continue;
    rest = true;
    if (collReducesHost(w.s.coll) && std::find(types.begin(), types.end(), w.type) == types.end())
      types.push_back(w.type);
  }
  const size_t first = parts.size();
  if (rest) parts.resize(first + std::max<size_t>(types.size(), 1));
  for (size_t i = 0; i < works.size(); ++i) {
    const DevWork& w = works[i];
    if (own(w) || moved[i]) continue;
    size_t k = 0;
    if (collReducesHost(w.s.coll)) k = std::find(types.begin(), types.end(), w.type) - types.begin();
    parts[first + k].works.push_back(w);
  }
  const bool overlap = gridDepAllowed();  // programmatic dependent launch (LaunchPart::pdl)
  for (GpuPlan::LaunchPart& p : parts) {
    p.spec = specFor(p.works, nqueues);
    p.spec.channelBlocks = channelBlocks;
    const int n = static_cast<int>(p.works.size());
    p.spec.leanOne = leanOneLaunch(p.spec, p.works.data(), n);
    p.spec.leanTwo = p.spec.tiny && !p.spec.leanOne && queues != nullptr && queues->size() == nqueues &&
                     leanTwoLayout(p.works.data(), n, *queues, p.spec.leanFirst);
    if (p.spec.leanTwo && !leanLlLaunch(p.spec, p.works.data(), n)) p.spec.leanTwo = false;
    p.func = driverFunction(kernelFunction(p.spec, p.works.data(), n));
    p.pdl = overlap && p.func && kernelWaitsForGrid(p.spec, dev);
  }
  return parts;
}

// MCCL_P2P_BLOCK_BOTH_WAYS: in a Simple launch, the two queues of a peer and channel that
// both have works (its Sends and its Recvs) become one block of two halves (kQueueBothWays,
// simpleKernel), as NCCL's point-to-point blocks serve both directions: a Send/Recv pair
// both ways takes half the SMs. Each half needs a posting warp and movers (128 threads);
// only launches that reduce nothing (the kernel of NoArith) split their blocks.
//
// Where every Recv of the queue offers its output to the peer (the user-buffer path: the
// peer's Sends write there), the Recv half moves nothing: it waits for each step's tail and
// posts the head. It keeps MCCL_P2P_DIRECT_RECV_THREADS, and the Send half, which moves its
// direction's data, takes the rest: 448 of 512 threads, 416 of them moving, against 224 in
// even halves. 2 x H200: AlltoAll of 32-256 MiB 1.004-1.014x faster than even halves,
// Send/Recv within the noise (+-0.6 %); 32 or 128 waiting threads the same as 64
// (bench/results/gpu-2xH200-2026-11-29b, calls 1 and 5). A Recv whose sender does not
// answer (it sent in a group of its own) reads its data from the FIFO on those threads:
// right, slower.
void joinBothWays(std::vector<GpuPlan::LaunchPart>* parts, const std::vector<DevQueue>& queues) {
  if (!knobBool(Knob::P2pBlockBothWays)) return;
  const int64_t recvKnob = knobInt(Knob::P2pDirectRecvThreads);
  for (GpuPlan::LaunchPart& part : *parts) {
    const int threads = part.spec.threads;
    if (part.spec.kind != LaunchKind::Simple || part.spec.reduces || threads < kBothWaysMinThreads) continue;
    // Whether a work of the part runs on q in direction send and meets pred.
    auto anyRuns = [&](DevQueue q, int8_t send, auto&& pred) {
      q.send = send;
      return std::any_of(part.works.begin(), part.works.end(),
                         [&](const DevWork& w) { return queueRuns(q, w) && pred(w); });
    };
    auto runs = [&](const DevQueue& q, int8_t send) { return anyRuns(q, send, [](const DevWork&) { return true; }); };
    // The Recv half's threads where it only waits: a multiple of 32 that leaves the Send
    // half a posting warp and movers.
    const int64_t recvThreads = recvKnob / 32 * 32;
    const bool uneven = recvThreads >= 32 && threads - recvThreads >= kPostWarpMin;
    auto recvsDirect = [&](const DevQueue& q) {
      auto copies = [](const DevWork& w) { return !((w.xchg & kXchgRecv) && w.offer != nullptr && !w.selfCopy); };
      return !anyRuns(q, 0, copies);  // no Recv of q copies out of the FIFO
    };
    std::vector<DevQueue> joined;
    std::vector<char> taken(queues.size(), 0);
    bool any = false;
    for (size_t i = 0; i < queues.size(); ++i) {
      if (taken[i]) continue;
      DevQueue q = queues[i];
      if (q.peer >= 0 && runs(q, q.send) && runs(q, static_cast<int8_t>(!q.send))) {
        for (size_t j = i + 1; j < queues.size(); ++j)
          if (!taken[j] && queues[j].peer == q.peer && queues[j].channel == q.channel && queues[j].send != q.send) {
            taken[j] = 1;
            q.send = kQueueBothWays;
            q.sendWarps = uneven && recvsDirect(q) ? static_cast<int8_t>((threads - recvThreads) / 32) : 0;
            any = true;
            break;
          }
      }
      joined.push_back(q);
    }
    if (!any) continue;
    part.queues = std::move(joined);
    part.spec.blocks = static_cast<int>(part.queues.size());
  }
}

// Two lone operations that make the same plan: the same collective on the same buffers,
// count, type, operator (as resolved), root and stream. (seq and enqueueNs differ per call.)
bool samePlan(const OpDesc& a, const OpDesc& b) {
  return a.kind == b.kind && a.sendbuff == b.sendbuff && a.recvbuff == b.recvbuff && a.count == b.count &&
         a.datatype == b.datatype && a.op == b.op && a.root == b.root && a.stream == b.stream &&
         a.red.kind == b.red.kind && a.red.scalarBits == b.red.scalarBits && a.red.scalarPtr == b.red.scalarPtr &&
         a.red.postDivisor == b.red.postDivisor && a.red.uniformScalar == b.red.uniformScalar && a.call == b.call &&
         a.symAt == b.symAt;
}

}  // namespace mccl
