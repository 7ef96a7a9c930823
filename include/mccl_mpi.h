/*
 * mccl_mpi.h — communicators made from MPI communicators, MPI-typed collectives, and
 * waits that keep MPI progressing.
 */
#ifndef MCCL_MPI_H_
#define MCCL_MPI_H_

#include <mpi.h>
#include <stdint.h>

#include "mccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over mpiComm: every rank of mpiComm calls it. The new communicator has
 * mpiComm's ranks and size; mccl duplicates mpiComm for its own traffic.
 * cudaDev: a CUDA device, MCCL_DEVICE_AUTO (node-local rank modulo visible devices, or a
 * host communicator when no GPU is usable) or MCCL_DEVICE_HOST. config may be NULL. */
ncclResult_t mcclCommInitFromMpi(ncclComm_t* comm, MPI_Comm mpiComm, int cudaDev,
                                 ncclConfig_t* config);

/* The communicator cached on mpiComm (an MPI attribute), created collectively with
 * MCCL_DEVICE_AUTO on first use. It is destroyed when mpiComm is freed, and whatever is
 * left at MPI_Finalize. Do not destroy it yourself. Duplicates of mpiComm get their own. */
ncclResult_t mcclMpiComm(MPI_Comm mpiComm, ncclComm_t* comm);

/* Waits for stream to complete while driving MPI progress on progressComm (the guide's
 * "MPI Progress" loop, backing off to short sleeps when nothing moves). Returns at once
 * where there is nothing to wait for: without a usable GPU (host communicators complete
 * their operations before returning) and when the stream is already done. */
ncclResult_t mcclStreamSynchronize(cudaStream_t stream, MPI_Comm progressComm);

/* MPI-typed collectives on the communicator cached on comm, enqueued on stream (host
 * communicators: complete on return). MPI_IN_PLACE as sendbuf has its MPI meaning.
 * Predefined integer and float datatypes and MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN are
 * supported; others are ncclInvalidArgument with a sentence naming them. */
ncclResult_t mcclMpiAllreduce(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm, cudaStream_t stream);
ncclResult_t mcclMpiBcast(void* buffer, size_t count, MPI_Datatype datatype, int root, MPI_Comm comm,
                          cudaStream_t stream);
ncclResult_t mcclMpiReduce(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm, cudaStream_t stream);
/* count: elements each rank contributes (MPI's sendcount == recvcount). */
ncclResult_t mcclMpiAllgather(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype,
                              MPI_Comm comm, cudaStream_t stream);
ncclResult_t mcclMpiReduceScatterBlock(const void* sendbuf, void* recvbuf, size_t recvcount,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                       cudaStream_t stream);
/* count: elements sent to each rank. */
ncclResult_t mcclMpiAlltoall(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype,
                             MPI_Comm comm, cudaStream_t stream);
/* count: elements each rank sends to the root (Gather) or receives from it (Scatter).
 * MPI_IN_PLACE: Gather's sendbuf at the root, Scatter's recvbuf at the root. */
ncclResult_t mcclMpiGather(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype, int root,
                           MPI_Comm comm, cudaStream_t stream);
ncclResult_t mcclMpiScatter(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype, int root,
                            MPI_Comm comm, cudaStream_t stream);
/* The v-forms, with MPI's int count and displacement arrays (elements of datatype, one per
 * rank; the same datatype on both sides). Allgatherv's sendcount must be recvcounts[rank].
 * Alltoallv runs as mcclAlltoAllv; in place (sendbuf MPI_IN_PLACE) it sends recvcounts[j]
 * elements from rdispls[j] of a copy of recvbuf. Reduce_scatter's blocks (recvcounts, the
 * same array on every rank) of equal size run as ncclReduceScatter, else as one group of
 * ncclReduce, block j to rank j. */
ncclResult_t mcclMpiAllgatherv(const void* sendbuf, int sendcount, void* recvbuf, const int recvcounts[],
                               const int displs[], MPI_Datatype datatype, MPI_Comm comm, cudaStream_t stream);
ncclResult_t mcclMpiAlltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], void* recvbuf,
                              const int recvcounts[], const int rdispls[], MPI_Datatype datatype, MPI_Comm comm,
                              cudaStream_t stream);
ncclResult_t mcclMpiReduceScatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm, cudaStream_t stream);

/* The NCCL datatype / operator an MPI one maps to (ncclInvalidArgument if none). */
ncclResult_t mcclMpiDatatype(MPI_Datatype datatype, ncclDataType_t* type);
ncclResult_t mcclMpiOp(MPI_Op op, ncclRedOp_t* ncclOp);

/* libmccl_mpi (the PMPI preload): calls routed to mccl and to MPI since the start. */
void mcclMpiPathCounters(uint64_t* viaMccl, uint64_t* viaMpi);
/* Of the calls routed to mccl: those whose wait spun on a word the collective's kernel raised
 * in host memory (small LL-protocol collectives) and those that waited on the stream. */
void mcclMpiWaitCounters(uint64_t* byWord, uint64_t* byStream);
/* Of those: small blocking calls made again with the same arguments whose one kernel was
 * captured into a CUDA graph, and the calls that replayed such a graph (MCCL_MPI_GRAPH_BYTES). */
void mcclMpiReplayCounters(uint64_t* captured, uint64_t* replayed);

#ifdef __cplusplus
}
#endif

#endif /* MCCL_MPI_H_ */
