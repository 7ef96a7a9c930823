/*
 * The routing functions libmccl exports for libmccl_mpi (src/bootstrap_mpi/mpi_route.cc):
 * one per intercepted MPI collective, shared by the shim (pmpi_shim.c), their definitions
 * and the benchmarks that call them, so a signature changes in one place or fails to build.
 *
 * Each returns 1 when mccl took the call (*rc is then the MPI result) and 0 when the shim
 * must call PMPI. req: a nonblocking call's request, NULL for the blocking form; set when
 * mccl takes the call.
 */
#ifndef MCCL_MPI_ROUTE_H_
#define MCCL_MPI_ROUTE_H_

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

int mcclMpiRouteAllreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                          MPI_Request* req, int* rc);
int mcclMpiRouteReduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                       MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiRouteBcast(void* buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiRouteAllgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiRouteReduceScatterBlock(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype dt, MPI_Op op,
                                   MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiRouteAlltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiRouteGather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiRouteScatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiRouteAllgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request* req, int* rc);
int mcclMpiRouteReduceScatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype dt, MPI_Op op,
                              MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiRouteAlltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                          void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request* req, int* rc);

/* What MPIX_Query_cuda_support reports under the preload (1, or -1: ask the MPI library). */
int mcclMpiRouteCudaAware(void);
/* The shim tells what the MPI library's own MPIX_Query_cuda_support says (0: device buffers
 * must never reach it). */
void mcclMpiRouteSetMpiCudaAware(int aware);

#ifdef __cplusplus
}
#endif

#endif /* MCCL_MPI_ROUTE_H_ */
