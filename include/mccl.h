/*
 * mccl.h — mccl's own extensions that need no MPI.
 */
#ifndef MCCL_H_
#define MCCL_H_

#include <stdint.h>

#include "nccl.h"

#define MCCL_VERSION_MAJOR 0
#define MCCL_VERSION_MINOR 1
#define MCCL_VERSION_PATCH 0
#define MCCL_VERSION (MCCL_VERSION_MAJOR * 10000 + MCCL_VERSION_MINOR * 100 + MCCL_VERSION_PATCH)

/* Device selectors for mcclCommInitFromMpi and MCCL_DEVICE. */
#define MCCL_DEVICE_AUTO (-1) /* the node-local rank's GPU, or host memory when none is usable */
#define MCCL_DEVICE_HOST (-2) /* a host communicator: buffers are host memory */

#ifdef __cplusplus
extern "C" {
#endif

/* "mccl 0.1.0 (NCCL API 2.28.3, CUDA on|off)". */
const char* mcclGetVersionString(void);

/* 1 when comm moves host memory (a host communicator), 0 when it moves device memory. */
ncclResult_t mcclCommIsHost(const ncclComm_t comm, int* isHost);

/* What a communicator holds, in bytes, by kind (mccl-perf --memory prints it). */
typedef struct {
  size_t fifoBytes;        /* receive FIFOs on comm's GPU (made when a connection is first used) */
  size_t controlBytes;     /* connection table and flag words on comm's GPU */
  size_t scratchBytes;     /* staging besides the FIFOs on comm's GPU (binomial Reduce) */
  size_t tableBytes;       /* ring and node tables, profile counters on comm's GPU */
  size_t hostMappedBytes;  /* pinned host memory mapped for the GPU (flags, network staging) */
  size_t peerMappedBytes;  /* peers' memory mapped into this process (not on comm's GPU) */
  size_t kernelStackBytes; /* the largest per-thread stack of mccl's kernels: the driver keeps
                              that much local memory for every thread slot of the GPU once
                              such a kernel ran (0 for a host communicator) */
} mcclMemoryInfo_t;
ncclResult_t mcclCommMemoryInfo(const ncclComm_t comm, mcclMemoryInfo_t* info);

/* Eager launches of comm replayed from CUDA graphs of their one kernel when they repeat
 * (MCCL_LAUNCH_GRAPH_BYTES): the graphs made and the launches replayed from them since comm
 * was made (0 and 0 on a host communicator). */
ncclResult_t mcclCommLaunchGraphCounters(const ncclComm_t comm, uint64_t* made, uint64_t* replayed);

/* All-to-all with a count per peer, like MPI_Alltoallv: sendcounts[j] elements from
 * sendbuff + sdispls[j] go to rank j, recvcounts[i] elements from rank i land at
 * recvbuff + rdispls[i] (counts and displacements in elements of datatype, one per rank).
 * recvcounts[i] must equal rank i's sendcounts[this rank]. The send and receive areas
 * must not overlap. Runs as one group of Send/Recv (inside the caller's group, if any). */
ncclResult_t mcclAlltoAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                           void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);

/* Every environment variable mccl reads: name, type, default and one line of help. */
const char* mcclKnobHelp(void);

/* Writes, for every live communicator of this process, the operation it is in (sequence
 * number, kind, size) and the peers it is waiting for, to the log at WARN (or to stderr
 * when logging is off). Also triggered by SIGUSR2 when MCCL_DUMP_SIGNAL=1. */
void mcclDumpState(void);

#ifdef __cplusplus
}
#endif

#endif /* MCCL_H_ */
