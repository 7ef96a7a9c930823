#include "core/enqueue.h"

#include <chrono>
#include <limits>

#include "core/comm.h"
#include "core/error.h"
#include "core/group.h"
#include "core/knobs.h"
#include "core/memory.h"
#include "core/types.h"

namespace mccl {

const char* opKindName(OpKind k) {
  switch (k) {
    case OpKind::AllReduce: return "AllReduce";
    case OpKind::Broadcast: return "Broadcast";
    case OpKind::Reduce: return "Reduce";
    case OpKind::AllGather: return "AllGather";
    case OpKind::ReduceScatter: return "ReduceScatter";
    case OpKind::Send: return "Send";
    case OpKind::Recv: return "Recv";
    case OpKind::AlltoAll: return "AlltoAll";
    case OpKind::Gather: return "Gather";
    case OpKind::Scatter: return "Scatter";
  }
  return "?";
}

const char* p2pCallName(P2pCall c) {
  switch (c) {
    case P2pCall::User: return "Send/Recv";
    case P2pCall::AlltoAll: return "AlltoAll";
    case P2pCall::Gather: return "Gather";
    case P2pCall::Scatter: return "Scatter";
    case P2pCall::AllGather: return "AllGather";
    case P2pCall::Broadcast: return "Broadcast";
  }
  return "?";
}

const OpDesc kBlankOp{};

size_t OpDesc::bytes() const { return count * datatypeSize(datatype); }

uint64_t steadyNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

namespace {

ncclResult_t validate(ncclComm* comm, OpDesc& op, const char* call) {
  MCCL_CHECK(checkCommArg(comm, call));
  MCCL_CHECK(comm->checkUsable(call));
  if (!validDatatype(op.datatype))
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: datatype = %d is not an ncclDataType_t (0..%d)",
                    call, static_cast<int>(op.datatype), ncclNumTypes - 1);
  const size_t esize = datatypeSize(op.datatype);
  // Every byte count the operation touches must be representable (checked without a
  // division: two of them were 8 % of a small host Send/Recv).
  size_t mult = (op.kind == OpKind::AllGather || op.kind == OpKind::ReduceScatter)
                    ? static_cast<size_t>(comm->nranks) : 1;
  size_t touched = 0;
  if (__builtin_mul_overflow(op.count, esize * mult, &touched) ||
      touched > static_cast<size_t>(std::numeric_limits<int64_t>::max()))
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: count = %zu of %s overflows the size of a buffer", call, op.count,
                    datatypeName(op.datatype));
  if (op.hasReduction())
    MCCL_CHECK(comm->redOps.resolve(op.op, op.datatype, comm->nranks, call, &op.red));
  bool rooted = op.kind == OpKind::Broadcast || op.kind == OpKind::Reduce;
  if (rooted && (op.root < 0 || op.root >= comm->nranks))
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: root = %d is out of range for a communicator of %d ranks", call, op.root,
                    comm->nranks);
  if (op.isP2p() && (op.root < 0 || op.root >= comm->nranks))
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: peer = %d is out of range for a communicator of %d ranks", call, op.root,
                    comm->nranks);
  if (op.count > 0) {
    bool needSend = true, needRecv = true;
    switch (op.kind) {
      case OpKind::Broadcast: needSend = comm->rank == op.root; break;
      case OpKind::Reduce: needRecv = comm->rank == op.root; break;
      case OpKind::Send: needRecv = false; break;
      case OpKind::Recv: needSend = false; break;
      default: break;
    }
    if (needSend && op.sendbuff == nullptr)
      return MCCL_ERR(ncclInvalidArgument, comm, "%s: sendbuff is NULL with count = %zu", call,
                      op.count);
    if (needRecv && op.recvbuff == nullptr)
      return MCCL_ERR(ncclInvalidArgument, comm, "%s: recvbuff is NULL with count = %zu", call,
                      op.count);
    // A GPU reduces elements with loads and stores of the type (or wider), which fault on an
    // address that is no multiple of its size: refused here, where the fault would end the
    // process's CUDA context. (Copies move bytes: any address.)
    if (op.hasReduction() && !comm->isHost() && esize > 1) {
      const auto misaligned = [esize](const void* p) { return reinterpret_cast<uintptr_t>(p) % esize != 0; };
      if (needSend && misaligned(op.sendbuff))
        return MCCL_ERR(ncclInvalidArgument, comm, "%s: sendbuff %p is not aligned to its %s elements (%zu bytes)", call,
                        op.sendbuff, datatypeName(op.datatype), esize);
      if (needRecv && misaligned(op.recvbuff))
        return MCCL_ERR(ncclInvalidArgument, comm, "%s: recvbuff %p is not aligned to its %s elements (%zu bytes)", call,
                        op.recvbuff, datatypeName(op.datatype), esize);
    }
    if (knobBool(Knob::CheckPointers)) {
      size_t total = op.bytes() * mult;
      size_t sendBytes = op.kind == OpKind::AllGather ? op.bytes() : total;
      size_t recvBytes = op.kind == OpKind::ReduceScatter ? op.bytes() : total;
      if (op.isP2p()) sendBytes = recvBytes = op.bytes();
      if (needSend) MCCL_CHECK(checkBufferUsable(comm, op.sendbuff, sendBytes, "sendbuff", call));
      if (needRecv) MCCL_CHECK(checkBufferUsable(comm, op.recvbuff, recvBytes, "recvbuff", call));
    }
  }
  return ncclSuccess;
}

}  // namespace

namespace {
ncclResult_t enqueueValid(ncclComm* comm, OpDesc& op, const char* call) {
  if (!op.isP2p()) op.seq = comm->collSeq.fetch_add(1);
  TRACE(kLogColl, "%s: seq %llu count %zu %s root/peer %d comm %p", call,
        static_cast<unsigned long long>(op.seq), op.count, datatypeName(op.datatype), op.root,
        static_cast<void*>(comm));
  if (groupDepth() > 0) {
    groupAddOp(comm, op);
    return ncclSuccess;
  }
  return runSingleOp(comm, op);
}
}  // namespace

ncclResult_t enqueueOp(ncclComm* comm, OpDesc& op, const char* call) {
  if (knobBool(Knob::Profile)) op.enqueueNs = steadyNs();
  ncclResult_t r = validate(comm, op, call);
  if (r != ncclSuccess) {
    groupSetError(r);
    return r;
  }
  return enqueueValid(comm, op, call);
}

ncclResult_t enqueueChecked(ncclComm* comm, OpDesc& op, const char* call) {
  if (knobBool(Knob::Profile)) op.enqueueNs = steadyNs();
  return enqueueValid(comm, op, call);
}

}  // namespace mccl
