// The one enqueue path: every collective and point-to-point call lands here, is checked,
// and is either queued in the caller's group or run as a group of one.
#pragma once

#include <cstdint>

#include "core/op.h"

struct ncclComm;

namespace mccl {

// An OpDesc at its defaults, defined out of line (enqueue.cc).
extern const OpDesc kBlankOp;

// The operation an API call names (the rest of OpDesc at its defaults). Copied from a blank
// one the compiler cannot see into rather than built by OpDesc's constructor, which GCC
// compiles to a `rep stos` clear: its start-up was three quarters of ncclSend's own time
// (perf, 2-core CI machine); the copy is a few vector moves.
inline OpDesc apiOp(OpKind kind, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                    ncclRedOp_t op, int root, cudaStream_t stream) {
  OpDesc d = kBlankOp;
  d.kind = kind;
  d.sendbuff = sendbuff;
  d.recvbuff = recvbuff;
  d.count = count;
  d.datatype = datatype;
  d.op = op;
  d.root = root;
  d.stream = stream;
  return d;
}

// op is the caller's and is completed in place (sequence number, resolved operator,
// profile stamp): passed by value, its copy cost a small call's store-forwarding stall
// (perf, 2-core CI machine: a quarter of the time of an 8-byte host Broadcast).
ncclResult_t enqueueOp(ncclComm* comm, OpDesc& op, const char* call);
// The same for an operation its caller has checked as part of a whole call (AlltoAll,
// Gather, Scatter, AlltoAllv: their communicator, type, sizes, buffers and peers): queued
// without checking it again (the checks of 2n Sends and Recvs were a third of a small
// host AlltoAll's time).
ncclResult_t enqueueChecked(ncclComm* comm, OpDesc& op, const char* call);

// Monotonic nanoseconds (MCCL_PROFILE timestamps).
uint64_t steadyNs();

}  // namespace mccl
