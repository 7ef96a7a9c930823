// The direct path on the host: collectives whose buffers lie in symmetric windows, or plain
// buffers the peers map, read and written in place (kernels/work/direct.h), or moved by the copy
// engines; planned per operation and launched after a group's other kernels
// (kernels/launch/gpu_datapath.cc).
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include <cstddef>
#include <cstdint>

#include "core/op.h"
#include "core/redop.h"
#include "kernels/work/dev_work.h"
#include "kernels/work/direct.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

struct OpDesc;

// The kernels' operator for a reduction (PreMulSum and SumPostDiv are sums with extras).
inline DevRed devRed(RedKind k) {
  switch (k) {
    case RedKind::Prod: return kRedProd;
    case RedKind::Max: return kRedMax;
    case RedKind::Min: return kRedMin;
    default: return kRedSum;
  }
}

// True when op runs on the direct path, with w filled: the communicator is one node's GPUs
// (2 to kDirectMaxRanks), and the buffer every rank passes (the input of AllReduce,
// ReduceScatter and Reduce, the output of AllGather and Broadcast) lies in a window all
// ranks registered with NCCL_WIN_COLL_SYMMETRIC. Every rank decides alike without talking.
bool planDirect(ncclComm* comm, const OpDesc& op, DirectWork* w);

// True when op runs on the direct path on plain buffers (kernels/work/direct.h), with w filled:
// an AllReduce, ReduceScatter or AllGather on a communicator of one node's GPUs that reach
// each other over CUDA IPC (2 to kDirectMaxRanks), at the sizes MCCL_PLAIN_DIRECT takes,
// on at most maxChannels channels (the LL connections the kernel signals on, which the caller
// connects: w->nchannels of them with every peer, both ways). Every rank decides alike from
// the size; w->in[p] and w->out[p] get this rank's buffers as peer p maps them (the
// user-buffer path's imports; capturing: a graph keeps them, so they are imported at once).
bool planPlainDirect(ncclComm* comm, const OpDesc& op, bool capturing, int maxChannels, DirectWork* w);

// Sets w->in[p], w->out[p] (p not this rank) of a plain work planPlainDirect made for op: what
// this rank offers each peer now. Called again each time a cached plan is reused, since the
// peers' mappings come and go between calls on the same buffers (a cudaMalloc'ed buffer is
// imported on its second use; one freed and allocated again at the same address is imported
// anew): the offers are always this call's.
void offerPlainBuffers(ncclComm* comm, const OpDesc& op, bool capturing, DirectWork* w);

// True when a collective of this kind moving wholeBytes (AllGather, ReduceScatter: every
// rank's block) takes the direct path on windows under MCCL_WIN_DIRECT = mode: 0 never,
// 2 always, 1 where the direct path measured faster than the FIFO path (the copy engines
// aside: where they move an AllGather or Broadcast, that path is taken under any mode but 0).
bool directWanted(int64_t mode, OpKind kind, size_t wholeBytes);

// True when an AllGather or Broadcast of perRank bytes on windows, or a block (kind Send or
// Recv) of that many of an AlltoAll or Gather, is moved by the copy engines
// (NCCL_CTA_POLICY_ZERO above kLlBytesPerChannel, a Broadcast from 2 MiB; or
// MCCL_WIN_CE_MIN_BYTES and above; never where two ranks of one process share a GPU, on any
// rank): planDirect then sets algo = kDirectCopyEngine.
bool copyEnginesMove(const ncclComm* comm, OpKind kind, size_t perRank);

// One copy of a copy-engine launch: bytes from src (this rank's) to dst (a window of peer,
// as reached here; this rank's own for peer == rank).
struct EngineCopy {
  uint8_t* dst;
  const uint8_t* src;
  uint64_t bytes;
  int peer;
};

// True when a Send or Recv of an AlltoAll or (under NCCL_CTA_POLICY_ZERO only) a Gather is
// moved by the copy engines: the receiving block (OpDesc::symAt) lies in a
// symmetric window and its size is one copyEnginesMove takes. A Send then fills *copy (into
// the peer's window at the block's offset); a Recv leaves copy->bytes 0 (its peer's copy
// fills it) and only takes part in the barriers. Both ends of a pair decide alike: the
// block's offset and the window are the same on every rank.
bool planEngineP2p(ncclComm* comm, const OpDesc& op, EngineCopy* copy);

// Side streams the copies of a copy-engine launch fork onto, so that copies to different
// peers (and this rank's own) run at once on different engines and links; with their
// fork and join events. A communicator's, made at first use; release() on its device.
struct CopyEngineLanes {
  std::vector<cudaStream_t> side;
  std::vector<cudaEvent_t> joined;  // one per side stream
  cudaEvent_t fork = nullptr;
  // Side streams 0..k-1 (made at first use) wait for what stream has queued so far.
  ncclResult_t forkFrom(ncclComm* comm, cudaStream_t stream, int k);
  // stream waits for what side streams 0..k-1 have queued so far.
  ncclResult_t joinInto(ncclComm* comm, cudaStream_t stream, int k);
  void release();
};

// Launches the copy-engine works of a group on stream: a barrier with every peer, the
// copies into the peers' windows (spread over stream and lanes' side streams), a barrier.
// works are AllGathers and Broadcasts, p2p the copies of the Sends planEngineP2p took;
// p2pOps counts the Sends and Recvs it took (a Recv adds no copy but needs the barriers).
// The barriers are stream memory operations (no SM) unless capturing or MCCL_CE_SYNC=0.
ncclResult_t launchCopyEngines(ncclComm* comm, const DevComm& devComm, const std::vector<DirectWork>& works,
                               const std::vector<EngineCopy>& p2p, size_t p2pOps, CopyEngineLanes* lanes,
                               cudaStream_t stream, bool capturing);

// Launches the direct works of a group on stream, in call order, once per arithmetic type.
ncclResult_t launchDirect(ncclComm* comm, const DevComm& devComm, const std::vector<DirectWork>& works, int threads,
                          cudaStream_t stream);

}  // namespace mccl
