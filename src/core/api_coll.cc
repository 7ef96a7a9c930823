// Entry points of the data path: collectives, point to point, groups and reduction
// operators. Each packs an OpDesc and hands it to the one enqueue path.
#include "core/comm.h"
#include "core/enqueue.h"
#include "core/error.h"
#include "core/group.h"
#include "core/types.h"


using namespace mccl;

namespace {
ncclResult_t enqueue(OpKind kind, const void* sendbuff, void* recvbuff, size_t count,
                     ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                     cudaStream_t stream, const char* call) {
  MCCL_API_BEGIN
  OpDesc d = apiOp(kind, sendbuff, recvbuff, count, datatype, op, root, stream);
  return enqueueOp(comm, d, call);
  MCCL_API_END
}
}  // namespace

NCCL_API ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                    cudaStream_t stream) {
  return enqueue(OpKind::AllReduce, sendbuff, recvbuff, count, datatype, op, 0, comm, stream,
                 "ncclAllReduce");
}
NCCL_API_ALIAS(ncclAllReduce)

NCCL_API ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                    ncclDataType_t datatype, int root, ncclComm_t comm,
                                    cudaStream_t stream) {
  return enqueue(OpKind::Broadcast, sendbuff, recvbuff, count, datatype, ncclSum, root, comm,
                 stream, "ncclBroadcast");
}
NCCL_API_ALIAS(ncclBroadcast)

NCCL_API ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream) {
  return enqueue(OpKind::Broadcast, buff, buff, count, datatype, ncclSum, root, comm, stream,
                 "ncclBcast");
}
NCCL_API_ALIAS(ncclBcast)

NCCL_API ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 ncclDataType_t datatype, ncclRedOp_t op, int root,
                                 ncclComm_t comm, cudaStream_t stream) {
  return enqueue(OpKind::Reduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream,
                 "ncclReduce");
}
NCCL_API_ALIAS(ncclReduce)

NCCL_API ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(OpKind::AllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm,
                 stream, "ncclAllGather");
}
NCCL_API_ALIAS(ncclAllGather)

NCCL_API ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                        ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                        cudaStream_t stream) {
  return enqueue(OpKind::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0, comm,
                 stream, "ncclReduceScatter");
}
NCCL_API_ALIAS(ncclReduceScatter)

NCCL_API ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                               int peer, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(OpKind::Send, sendbuff, nullptr, count, datatype, ncclSum, peer, comm, stream,
                 "ncclSend");
}
NCCL_API_ALIAS(ncclSend)

NCCL_API ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                               ncclComm_t comm, cudaStream_t stream) {
  return enqueue(OpKind::Recv, nullptr, recvbuff, count, datatype, ncclSum, peer, comm, stream,
                 "ncclRecv");
}
NCCL_API_ALIAS(ncclRecv)

NCCL_API ncclResult_t ncclGroupStart(void) { return groupStart(); }
NCCL_API_ALIAS(ncclGroupStart)

NCCL_API ncclResult_t ncclGroupEnd(void) {
  MCCL_API_BEGIN
  return groupEnd();
  MCCL_API_END
}
NCCL_API_ALIAS(ncclGroupEnd)

NCCL_API ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  MCCL_API_BEGIN
  // A bad simInfo still ends the group (dropping its operations): nothing stays queued.
  return groupEnd(/*simulate=*/true, simInfo);
  MCCL_API_END
}
NCCL_API_ALIAS(ncclGroupSimulateEnd)

NCCL_API ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar,
                                               ncclDataType_t datatype,
                                               ncclScalarResidence_t residence, ncclComm_t comm) {
  MCCL_API_BEGIN
  const char* call = "ncclRedOpCreatePreMulSum";
  MCCL_CHECK(checkCommArg(comm, call));
  if (op == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: op is NULL", call);
  if (scalar == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: scalar is NULL", call);
  if (!validDatatype(datatype))
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: datatype = %d is not an ncclDataType_t", call,
                    static_cast<int>(datatype));
  if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: residence = %d is not an ncclScalarResidence_t", call,
                    static_cast<int>(residence));
  ncclResult_t r = comm->redOps.create(op, scalar, datatype, residence, comm->isHost(), call);
  if (r != ncclSuccess) comm->setLastError(threadLastError());
  return r;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclRedOpCreatePreMulSum)

NCCL_API ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  MCCL_API_BEGIN
  MCCL_CHECK(checkCommArg(comm, "ncclRedOpDestroy"));
  ncclResult_t r = comm->redOps.destroy(op, "ncclRedOpDestroy");
  if (r != ncclSuccess) comm->setLastError(threadLastError());
  return r;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclRedOpDestroy)
