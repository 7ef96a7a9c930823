// One operation as the API received it, validated and with its operator resolved.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/redop.h"
#include "nccl.h"

namespace mccl {

enum class OpKind : uint8_t { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, Send, Recv };

const char* opKindName(OpKind k);

struct OpDesc {
  OpKind kind = OpKind::AllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  // Elements: AllReduce/Broadcast/Reduce the whole vector, AllGather per rank (sendcount),
  // ReduceScatter per rank (recvcount), Send/Recv the message.
  size_t count = 0;
  ncclDataType_t datatype = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  RedOpInfo red;
  int root = 0;  // Broadcast/Reduce root; Send/Recv peer
  // Send/Recv of a Gather or Scatter: nothing flows back from the peer in the same call, so
  // the protocol thresholds differ (planner.cc). Both ends of each pair set it alike.
  bool oneWay = false;
  // A Send or Recv of an AlltoAll: the place of the transfer's bytes at the receiver, as the
  // same place in this rank's own receive buffer (a Send to q: recvbuff + rank * block,
  // where q receives it on symmetric windows; a Recv: its own block). On symmetric windows
  // the copy engines may move it into the peer's window (kernels/direct_plan.cc
  // planEngineP2p); both ends of each pair decide alike from it. Null for other Sends and Recvs.
  const void* a2aRecvAt = nullptr;
  cudaStream_t stream = nullptr;
  uint64_t seq = 0;  // collective sequence number on its communicator (p2p: 0)
  uint64_t enqueueNs = 0;  // MCCL_PROFILE: when the API call entered the library

  bool isP2p() const { return kind == OpKind::Send || kind == OpKind::Recv; }
  bool hasReduction() const {
    return kind == OpKind::AllReduce || kind == OpKind::Reduce || kind == OpKind::ReduceScatter;
  }
  // Bytes each rank contributes / the collective's nominal size (for plans and logs).
  size_t bytes() const;
};

}  // namespace mccl
