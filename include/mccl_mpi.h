/*
 * mccl_mpi.h — communicators made from MPI communicators.
 */
#ifndef MCCL_MPI_H_
#define MCCL_MPI_H_

#include <mpi.h>

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

#ifdef __cplusplus
}
#endif

#endif /* MCCL_MPI_H_ */
