// A GPU group's plan (what GpuWork::init makes once and a repeated lone call launches
// again) and the helpers that turn its works into launches: which kernel runs which works
// (specFor, launchParts) and the kernel arguments (fillArgs). Used by gpu_datapath.cc.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "core/op.h"
#include "core/planner.h"
#include "ipc_transport/p2p_engine.h"
#include "kernels/work/direct.h"
#include "kernels/plan/direct_plan.h"
#include "kernels/work/dev_work.h"
#include "kernels/launch/launch.h"

namespace mccl {

// What one group's launch needs, made once by GpuWork::init: the operations, and what
// moves them (copies on one rank; kernel works and the queues (blocks) that run them; the
// direct and copy-engine works on symmetric windows). A lone operation that repeats one of
// the last few (GpuDataPath::runAlone) is launched again from its plan.
struct GpuPlan {
  std::vector<OpDesc> ops;
  // One rank: the group is copies (cudaMemcpyAsync) instead of a kernel (planCopies).
  struct Copy {
    void* dst;
    const void* src;
    size_t bytes;
  };
  std::vector<Copy> copies;
  // A rank's copies to itself (pairSelf's pairs) the copy engines move beside the kernels,
  // on a side stream forked from the launch's stream before them and joined after
  // (MCCL_SELF_COPY_ENGINE_BYTES): their blocks are the user's SMs.
  std::vector<Copy> selfCopies;
  std::vector<DevWork> works;
  std::vector<DevQueue> queues;
  std::vector<DirectWork> direct;  // collectives on symmetric windows or plain buffers (kernels/work/direct.h)
  // The works of direct on plain buffers, and their operations: (index in direct, in ops).
  // Their offers are made again each time the plan is reused (offerPlainBuffers).
  struct PlainDirect {
    uint32_t work;
    uint32_t op;
  };
  std::vector<PlainDirect> plainDirect;
  std::vector<DirectWork> engine;  // those of them the copy engines move (kDirectCopyEngine)
  // AlltoAll and Gather Sends and Recvs on symmetric windows the copy engines move (planEngineP2p):
  // the Sends' copies, and how many operations (Recvs too) take part in their barriers.
  std::vector<EngineCopy> engineP2p;
  size_t engineP2pOps = 0;
  // A user's Sends and Recvs the copy engines move (ipc_transport/p2p_engine.h), and whether
  // any operation met its peer to decide (then the plan is never reused: each call meets).
  std::vector<PeerEngineOp> peerEngine;
  bool meets = false;
  // One launch of the group: its kernel and the works it runs (in call order).
  struct LaunchPart {
    LaunchSpec spec;
    std::vector<DevWork> works;
    CUfunction func = nullptr;  // the kernel on the comm's device, for the driver's launch (null: the runtime)
    // Launched with programmatic stream serialization (MCCL_PDL, the driver's launch only):
    // the kernel may start while the previous kernel on the stream still runs, and waits
    // for it on the device before it reads anything that kernel or the user wrote.
    bool pdl = false;
    // Its own queues (blocks), where it joins a peer's two directions (joinBothWays); empty:
    // the plan's.
    std::vector<DevQueue> queues;
  };
  std::vector<LaunchPart> parts;  // launchParts(works, queues)
  bool capturing = false;         // the first stream is being captured into a graph
  // Sends to this rank paired with its Recvs (DevWork::selfCopy, GpuWork::pairSelf), and the
  // Sends to itself minus the Recvs from itself left to the rank's connection to itself
  // (what the plan leaves in that FIFO, or takes from it).
  bool selfPaired = false;
  int selfBacklog = 0;
  // A work takes the user-buffer path (DevWork::xchg): its offer is this call's, so the
  // plan is not reused (its buffers' mappings are looked up again next call).
  bool userBuffers = false;
};

// AllReduce, ReduceScatter and Reduce: the collectives whose works add (or otherwise reduce).
bool collReducesHost(Coll c);

// Whether a Simple work's channels take its units as they free up (DevWork::units: 0,
// kUnitsOn, kUnitsAgree): fifoSlots of the FIFOs, network: the communicator has peers over
// the network, p2pUnits: both ends of the group's Sends and Recvs know they run in the
// Simple kernel (GpuWork::init), oneWay: a Gather's or Scatter's (OpDesc::oneWay()).
uint8_t unitsOf(const DevWork& w, uint32_t fifoSlots, bool network, bool p2pUnits, bool oneWay = false);

// The kernel for works that reduce at most one type (see gpu_plan.cc).
LaunchSpec specFor(const std::vector<DevWork>& works, size_t nqueues);

// The launches of a group on device dev (the current one; -1: none, launched without the
// overlap), each kernel's function looked up there. channelBlocks: the queues are channels
// 0, 1, ... in order (LaunchSpec::channelBlocks). queues: the group's nqueues queues, where
// known, for the lean LL kernel's two-work form (leanTwoLayout; none: that form is not taken).
std::vector<GpuPlan::LaunchPart> launchParts(const std::vector<DevWork>& works, size_t nqueues, int dev,
                                             bool channelBlocks = false,
                                             const std::vector<DevQueue>* queues = nullptr);

// Whether the blocks of a launch of these one or two LL works over the group's queues (block
// b runs queue b) run what the lean kernel's two-work form gives them (LeanTwoArgs): every
// block b exactly the works i with 0 <= b - first[i] < works[i].s.nchannels, in order, on
// channel b - first[i], as queueRuns says. Sets first (the block of each work's channel 0).
bool leanTwoLayout(const DevWork* works, int nworks, const std::vector<DevQueue>& queues, int32_t first[2]);

// MCCL_P2P_BLOCK_BOTH_WAYS: a Simple launch's Sends to a peer and Recvs from it on one
// channel share a block (kQueueBothWays); sets such parts' own queues and blocks.
void joinBothWays(std::vector<GpuPlan::LaunchPart>* parts, const std::vector<DevQueue>& queues);

// Two lone operations that make the same plan.
bool samePlan(const OpDesc& a, const OpDesc& b);

// A launch's kernel arguments: the communicator, the queues and the works.
template <typename Args>
void fillArgs(Args* args, const DevComm& comm, const std::vector<DevQueue>& queues, const std::vector<DevWork>& works) {
  std::memset(static_cast<void*>(args), 0, offsetof(Args, works));
  args->comm = comm;
  args->nqueues = static_cast<int32_t>(queues.size());
  args->nworks = static_cast<int32_t>(works.size());
  std::copy(queues.begin(), queues.end(), args->queues);
  std::copy(works.begin(), works.end(), args->works);
}

}  // namespace mccl
