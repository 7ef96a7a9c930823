#include "host_engine/mpi_coll.h"

#include <atomic>
#include <cstdio>
#include <cstring>

#include "bootstrap_mpi/bootstrap_mpi.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/types.h"
#include "host_engine/lone_wait.h"

namespace mccl {
namespace {

std::atomic<uint64_t> gCount{0};

// The MPI type of an NCCL type MPI reduces the same way, or MPI_DATATYPE_NULL.
MPI_Datatype mpiType(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return MPI_INT8_T;
    case ncclUint8: return MPI_UINT8_T;
    case ncclInt32: return MPI_INT32_T;
    case ncclUint32: return MPI_UINT32_T;
    case ncclInt64: return MPI_INT64_T;
    case ncclUint64: return MPI_UINT64_T;
    case ncclFloat32: return MPI_FLOAT;
    case ncclFloat64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;  // half, bfloat16, fp8: MPI has none
  }
}

MPI_Op mpiOp(RedKind k) {
  switch (k) {
    case RedKind::Sum: return MPI_SUM;
    case RedKind::Prod: return MPI_PROD;
    case RedKind::Max: return MPI_MAX;
    case RedKind::Min: return MPI_MIN;
    default: return MPI_OP_NULL;  // PreMulSum (ncclAvg on floats), SumPostDiv (on integers)
  }
}

}  // namespace

uint64_t hostMpiCollCount() { return gCount.load(std::memory_order_relaxed); }

bool MpiCollRoute::takes(const ncclComm* comm, const OpDesc& op) const {
  if (mpiComm == MPI_COMM_NULL || op.isP2p() || op.count == 0) return false;
  // AlltoAll, Gather and Scatter move bytes (MPI_BYTE): every datatype.
  if (!op.isWholeP2pCall() && mpiType(op.datatype) == MPI_DATATYPE_NULL) return false;
  if (op.hasReduction() && mpiOp(op.red.kind) == MPI_OP_NULL) return false;
  // The larger buffer: AllGather's output, ReduceScatter's input, AlltoAll's buffers, a
  // Gather's output and a Scatter's input hold nranks blocks.
  size_t bytes = op.count * datatypeSize(op.datatype);
  if (op.kind == OpKind::AllGather || op.kind == OpKind::ReduceScatter || op.isWholeP2pCall()) {
    if (bytes > maxBytes / static_cast<size_t>(comm->nranks)) return false;
    bytes *= static_cast<size_t>(comm->nranks);
  }
  if (bytes > maxBytes) return false;
  if (threadMultiple) return true;
  // MPI_THREAD_SINGLE .. SERIALIZED: only MPI's main thread calls MPI from mccl.
  thread_local int isMain = -1;
  if (isMain < 0) {
    int flag = 0;
    MPI_Is_thread_main(&flag);
    isMain = flag ? 1 : 0;
  }
  return isMain == 1;
}

ncclResult_t MpiCollOp::start(ncclComm* comm, MPI_Comm mc) {
  const MPI_Datatype dt = mpiType(op.datatype);
  const int count = static_cast<int>(op.count);  // <= MCCL_HOST_MPI_MAX_BYTES (an int)
  const size_t bytes = op.count * datatypeSize(op.datatype);
  const int block = static_cast<int>(bytes);  // AlltoAll, Gather, Scatter: a block as MPI_BYTEs
  const char* in = static_cast<const char*>(op.sendbuff);
  char* out = static_cast<char*>(op.recvbuff);
  int rc = MPI_SUCCESS;
  const char* call = "";
  switch (op.kind) {
    case OpKind::AllReduce:
      call = "MPI_Iallreduce";
      rc = PMPI_Iallreduce(in == out ? MPI_IN_PLACE : in, out, count, dt, mpiOp(op.red.kind), mc, &req);
      break;
    case OpKind::Broadcast:
      call = "MPI_Ibcast";
      if (comm->rank == op.root && in != out) std::memcpy(out, in, bytes);
      rc = PMPI_Ibcast(out, count, dt, op.root, mc, &req);
      break;
    case OpKind::Reduce:
      call = "MPI_Ireduce";
      rc = PMPI_Ireduce(comm->rank == op.root && in == out ? MPI_IN_PLACE : in, out, count, dt,
                        mpiOp(op.red.kind), op.root, mc, &req);
      break;
    case OpKind::AllGather:
      call = "MPI_Iallgather";
      // In place: this rank's block already sits at its place in the output (as MPI's).
      rc = PMPI_Iallgather(in == out + comm->rank * bytes ? MPI_IN_PLACE : in, count, dt, out, count, dt, mc, &req);
      break;
    case OpKind::ReduceScatter:
      call = "MPI_Ireduce_scatter_block";
      if (out == in + comm->rank * bytes) {
        // NCCL's in-place form keeps the result at this rank's block; MPI's would put it
        // at the start of the buffer: reduce into scratch, copied there when done.
        tmp.resize(bytes);
        copyTo = out;
        out = tmp.data();
      }
      rc = PMPI_Ireduce_scatter_block(in, out, count, dt, mpiOp(op.red.kind), mc, &req);
      break;
    case OpKind::AlltoAll:
      call = "MPI_Ialltoall";
      if (in == out) {
        // In place: the blocks to send from a copy (MPI_IN_PLACE for nonblocking AlltoAll
        // is not in every MPI this runs on).
        tmp.assign(in, in + bytes * static_cast<size_t>(comm->nranks));
        in = tmp.data();
      }
      rc = PMPI_Ialltoall(in, block, MPI_BYTE, out, block, MPI_BYTE, mc, &req);
      break;
    case OpKind::Gather: {
      call = "MPI_Igather";
      const bool inPlace = comm->rank == op.root && in == out + static_cast<size_t>(op.root) * bytes;
      rc = PMPI_Igather(inPlace ? MPI_IN_PLACE : in, block, MPI_BYTE, out, block, MPI_BYTE, op.root,
                        mc, &req);
      break;
    }
    case OpKind::Scatter: {
      call = "MPI_Iscatter";
      const bool inPlace = comm->rank == op.root && out == in + static_cast<size_t>(op.root) * bytes;
      rc = PMPI_Iscatter(in, block, MPI_BYTE, inPlace ? MPI_IN_PLACE : out, block, MPI_BYTE, op.root,
                         mc, &req);
      break;
    }
    default:
      return MCCL_ERR(ncclInternalError, comm, "%s seq %llu is not a collective MPI runs", opKindName(op.kind),
                      static_cast<unsigned long long>(op.seq));
  }
  if (rc != MPI_SUCCESS) {
    done = true;
    return MCCL_ERR(ncclSystemError, comm, "%s seq %llu: %s failed: %s", opKindName(op.kind),
                    static_cast<unsigned long long>(op.seq), call, mpiErrorString(rc).c_str());
  }
  gCount.fetch_add(1, std::memory_order_relaxed);
  return ncclSuccess;
}

ncclResult_t MpiCollOp::test(ncclComm* comm) {
  if (done) return ncclSuccess;
  int flag = 0;
  int rc = PMPI_Test(&req, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    abandon();
    return MCCL_ERR(ncclRemoteError, comm, "%s seq %llu: MPI_Test failed: %s", opKindName(op.kind),
                    static_cast<unsigned long long>(op.seq), mpiErrorString(rc).c_str());
  }
  if (!flag) return ncclSuccess;
  if (copyTo) std::memcpy(copyTo, tmp.data(), tmp.size());
  done = true;
  return ncclSuccess;
}

void MpiCollOp::abandon() {
  if (done) return;
  done = true;
  if (!tmp.empty()) (void)new std::vector<char>(std::move(tmp));  // MPI may still write it
}

std::string MpiCollOp::describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s seq %llu (%zu x %s) on MPI's collective, waiting for the other ranks",
                opKindName(op.kind), static_cast<unsigned long long>(op.seq), op.count, datatypeName(op.datatype));
  return buf;
}

ncclResult_t runMpiCollAlone(ncclComm* comm, MPI_Comm mc, const OpDesc& op, const std::atomic<bool>& aborted) {
  MpiCollOp o;
  o.op = op;
  MCCL_CHECK(o.start(comm, mc));
  LoneWait wait(comm, aborted);
  for (;;) {
    MCCL_CHECK(o.test(comm));
    if (o.done) return ncclSuccess;
    ncclResult_t r = wait.idle([&] { return o.describe(); });
    if (r != ncclSuccess) {
      o.abandon();
      return r;
    }
  }
}

MpiColls::~MpiColls() {
  for (MpiCollOp& o : ops_) o.abandon();
}

ncclResult_t MpiColls::start(ncclComm* comm, MPI_Comm mc, const OpDesc& op) {
  ops_.emplace_back();
  ops_.back().op = op;
  ncclResult_t r = ops_.back().start(comm, mc);
  if (r != ncclSuccess) {
    ops_.pop_back();
    return r;
  }
  ++left_;
  return ncclSuccess;
}

ncclResult_t MpiColls::test(ncclComm* comm, bool* allDone, bool* progressed) {
  for (size_t i = 0; i < ops_.size() && left_ > 0; ++i) {
    MpiCollOp& o = ops_[i];
    if (o.done) continue;
    MCCL_CHECK(o.test(comm));
    if (!o.done) continue;
    --left_;
    *progressed = true;
  }
  *allDone = left_ == 0;
  return ncclSuccess;
}

std::string MpiColls::describe() const {
  for (const MpiCollOp& o : ops_)
    if (!o.done) return o.describe();
  return "";
}

}  // namespace mccl
