/*
 * libmccl_mpi: the PMPI preload. Used with LD_PRELOAD=libmccl_mpi.so (or linked before
 * libmpi), it takes MPI_Allreduce, MPI_Reduce, MPI_Bcast, MPI_Allgather, MPI_Allgatherv,
 * MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Alltoall, MPI_Alltoallv, MPI_Gather
 * and MPI_Scatter on large device buffers to mccl and forwards everything else to PMPI_*
 * unchanged. The decisions live in libmccl
 * (src/bootstrap_mpi/mpi_route.cc); this file only intercepts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>

int mcclMpiRouteAllreduce(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, int*);
int mcclMpiRouteReduce(const void*, void*, int, MPI_Datatype, MPI_Op, int, MPI_Comm, int*);
int mcclMpiRouteBcast(void*, int, MPI_Datatype, int, MPI_Comm, int*);
int mcclMpiRouteAllgather(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm, int*);
int mcclMpiRouteReduceScatterBlock(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, int*);
int mcclMpiRouteAlltoall(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm, int*);
int mcclMpiRouteGather(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm, int*);
int mcclMpiRouteScatter(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm, int*);
int mcclMpiRouteAllgatherv(const void*, int, MPI_Datatype, void*, const int*, const int*, MPI_Datatype, MPI_Comm,
                           int*);
int mcclMpiRouteReduceScatter(const void*, void*, const int*, MPI_Datatype, MPI_Op, MPI_Comm, int*);
int mcclMpiRouteAlltoallv(const void*, const int*, const int*, MPI_Datatype, void*, const int*, const int*,
                          MPI_Datatype, MPI_Comm, int*);
int mcclMpiRouteCudaAware(void);
void mcclMpiRouteSetMpiCudaAware(int aware);

/* The MPI library's own answer to MPIX_Query_cuda_support, told to libmccl once. */
static int realCudaAware(void) {
  static int value = -2;
  if (value == -2) {
    int (*real)(void) = (int (*)(void))dlsym(RTLD_NEXT, "MPIX_Query_cuda_support");
    value = real ? real() : 0;
    mcclMpiRouteSetMpiCudaAware(value);
  }
  return value;
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteAllreduce(sendbuf, recvbuf, count, datatype, op, comm, &rc)) return rc;
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteReduce(sendbuf, recvbuf, count, datatype, op, root, comm, &rc)) return rc;
  return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteBcast(buffer, count, datatype, root, comm, &rc)) return rc;
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteAllgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &rc)) return rc;
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteReduceScatterBlock(sendbuf, recvbuf, recvcount, datatype, op, comm, &rc)) return rc;
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteAlltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &rc)) return rc;
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteGather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &rc)) return rc;
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteScatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &rc)) return rc;
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteAllgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &rc))
    return rc;
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteReduceScatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, &rc)) return rc;
  return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  int rc;
  realCudaAware();
  if (mcclMpiRouteAlltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                            &rc))
    return rc;
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

/* Programs that ask whether MPI takes device buffers: the collectives above do. */
int MPIX_Query_cuda_support(void) {
  int real = realCudaAware();
  int v = mcclMpiRouteCudaAware();
  return v >= 0 ? v : real;
}
