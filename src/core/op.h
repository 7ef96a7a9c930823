// One operation as the API received it, validated and with its operator resolved.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/redop.h"
#include "nccl.h"

namespace mccl {

// AlltoAll, Gather and Scatter are operations of their own only where a data path runs them
// whole (DataPath::runsWhole: a host communicator's shared-memory segment); everywhere else
// the API queues them as their Sends and Recvs (core/api_alltoall.cc), so the GPU path and
// the host engine never see these three kinds.
enum class OpKind : uint8_t { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, Send, Recv, AlltoAll, Gather, Scatter };

// What made a Send or Recv: the user's own call, or one of the collectives made of them
// (AlltoAll, Gather, Scatter at the API; AllGather and Broadcast on plain buffers where the
// copy engines may move them, by the GPU path's planner: kernels/plan/gpu_work.cc).
enum class P2pCall : uint8_t { User, AlltoAll, Gather, Scatter, AllGather, Broadcast };

const char* opKindName(OpKind k);
const char* p2pCallName(P2pCall c);

struct OpDesc {
  OpKind kind = OpKind::AllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  // Elements: AllReduce/Broadcast/Reduce the whole vector, AllGather per rank (sendcount),
  // ReduceScatter per rank (recvcount), Send/Recv the message, AlltoAll/Gather/Scatter a
  // block (one rank's share).
  size_t count = 0;
  ncclDataType_t datatype = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  RedOpInfo red;
  int root = 0;  // Broadcast/Reduce/Gather/Scatter root; Send/Recv peer
  // The call a Send or Recv came from (api_alltoall.cc); both ends of each pair know it
  // alike. A Gather's, Scatter's or Broadcast's go one way (oneWay()): nothing flows back from the peer
  // in the same call, so the protocol thresholds differ (planner.cc); an AlltoAll's go both
  // ways (the user-buffer path, kernels/plan/gpu_work.cc markUserBuffers).
  P2pCall call = P2pCall::User;
  // A Send or Recv of an AlltoAll or Gather: where the transfer's bytes land at the receiver,
  // as the same place in this rank's own receive buffer (a Send: recvbuff + rank * block; a
  // Recv: its own block), which on symmetric windows is where they land at the receiver
  // (NCCL_WIN_COLL_SYMMETRIC promises the same offsets on every rank). The copy engines may
  // move them into the peer's window there (kernels/plan/direct_plan.cc planEngineP2p); both
  // ends of each pair decide alike from it. Null for other Sends and Recvs, and for a
  // Gather's Send where the non-root passed no recvbuff (NCCL reads it only at the root).
  const void* symAt = nullptr;
  cudaStream_t stream = nullptr;
  uint64_t seq = 0;  // collective sequence number on its communicator (p2p: 0)
  uint64_t enqueueNs = 0;  // MCCL_PROFILE: when the API call entered the library

  bool isP2p() const { return kind == OpKind::Send || kind == OpKind::Recv; }
  // AlltoAll, Gather, Scatter run whole (the kinds above).
  bool isWholeP2pCall() const { return kind == OpKind::AlltoAll || kind == OpKind::Gather || kind == OpKind::Scatter; }
  bool oneWay() const { return call == P2pCall::Gather || call == P2pCall::Scatter || call == P2pCall::Broadcast; }
  bool hasReduction() const {
    return kind == OpKind::AllReduce || kind == OpKind::Reduce || kind == OpKind::ReduceScatter;
  }
  // Bytes each rank contributes / the collective's nominal size (for plans and logs).
  size_t bytes() const;
};

}  // namespace mccl
