/*
 * libmccl_mpi: the PMPI preload. Used with LD_PRELOAD=libmccl_mpi.so (or linked before
 * libmpi), it takes MPI_Allreduce, MPI_Reduce, MPI_Bcast, MPI_Allgather, MPI_Allgatherv,
 * MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Alltoall, MPI_Alltoallv, MPI_Gather
 * and MPI_Scatter, and their nonblocking forms (MPI_Iallreduce, ...), on device buffers
 * to mccl, hands an MPI that cannot take device buffers host copies of those in
 * point-to-point calls and the other collectives (MPI_Gatherv, MPI_Scatterv, MPI_Scan,
 * MPI_Exscan, MPI_Alltoallw, MPI_Reduce_local), and forwards everything else to PMPI_*
 * unchanged. The decisions live in libmccl
 * (src/bootstrap_mpi/mpi_route.cc); this file only intercepts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>

#include "mpi_route.h"

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

/*
 * Each collective and its nonblocking form: mccl takes the call (rc is MPI's result; a
 * nonblocking one's request is a generalized request that MPI's progress completes, see
 * src/bootstrap_mpi/mpi_requests.h) or PMPI_* gets it unchanged.
 */
#define UNPAREN(...) __VA_ARGS__
#define ROUTED(Name, IName, Route, PARAMS, ARGS)                   \
  int MPI_##Name(UNPAREN PARAMS) {                                 \
    int rc;                                                        \
    realCudaAware();                                               \
    if (Route(UNPAREN ARGS, NULL, &rc)) return rc;                 \
    return PMPI_##Name(UNPAREN ARGS);                              \
  }                                                                \
  int MPI_##IName(UNPAREN PARAMS, MPI_Request* request) {          \
    int rc;                                                        \
    realCudaAware();                                               \
    if (Route(UNPAREN ARGS, request, &rc)) return rc;              \
    return PMPI_##IName(UNPAREN ARGS, request);                    \
  }

ROUTED(Allreduce, Iallreduce, mcclMpiRouteAllreduce,
       (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
       (sendbuf, recvbuf, count, datatype, op, comm))
ROUTED(Reduce, Ireduce, mcclMpiRouteReduce,
       (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm),
       (sendbuf, recvbuf, count, datatype, op, root, comm))
ROUTED(Bcast, Ibcast, mcclMpiRouteBcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm),
       (buffer, count, datatype, root, comm))
ROUTED(Allgather, Iallgather, mcclMpiRouteAllgather,
       (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
        MPI_Comm comm),
       (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
ROUTED(Reduce_scatter_block, Ireduce_scatter_block, mcclMpiRouteReduceScatterBlock,
       (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
       (sendbuf, recvbuf, recvcount, datatype, op, comm))
ROUTED(Alltoall, Ialltoall, mcclMpiRouteAlltoall,
       (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
        MPI_Comm comm),
       (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
ROUTED(Gather, Igather, mcclMpiRouteGather,
       (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
        int root, MPI_Comm comm),
       (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
ROUTED(Scatter, Iscatter, mcclMpiRouteScatter,
       (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
        int root, MPI_Comm comm),
       (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
ROUTED(Allgatherv, Iallgatherv, mcclMpiRouteAllgatherv,
       (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
        const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
       (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
ROUTED(Reduce_scatter, Ireduce_scatter, mcclMpiRouteReduceScatter,
       (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
       (sendbuf, recvbuf, recvcounts, datatype, op, comm))
ROUTED(Alltoallv, Ialltoallv, mcclMpiRouteAlltoallv,
       (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
        const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
       (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))

/*
 * Point-to-point calls on device buffers, for an MPI that cannot take them (its own
 * MPIX_Query_cuda_support 0): libmccl hands MPI host copies (mpi_route.h). Where it does
 * not take a call (host buffers, a CUDA-aware MPI) PMPI_* gets it unchanged.
 */
#define SEND_FORMS(Name, IName, InitName, Mode)                                                                \
  int MPI_##Name(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {              \
    int rc;                                                                                                    \
    realCudaAware();                                                                                           \
    if (mcclMpiStageSend(Mode, MCCL_MPI_BLOCKING, buf, count, dt, dest, tag, comm, NULL, &rc)) return rc;      \
    return PMPI_##Name(buf, count, dt, dest, tag, comm);                                                       \
  }                                                                                                            \
  int MPI_##IName(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,               \
                  MPI_Request* request) {                                                                      \
    int rc;                                                                                                    \
    realCudaAware();                                                                                           \
    if (mcclMpiStageSend(Mode, MCCL_MPI_NONBLOCKING, buf, count, dt, dest, tag, comm, request, &rc)) return rc; \
    return PMPI_##IName(buf, count, dt, dest, tag, comm, request);                                             \
  }                                                                                                            \
  int MPI_##InitName(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,            \
                     MPI_Request* request) {                                                                   \
    int rc;                                                                                                    \
    realCudaAware();                                                                                           \
    if (mcclMpiStageSend(Mode, MCCL_MPI_PERSISTENT, buf, count, dt, dest, tag, comm, request, &rc)) return rc;  \
    return PMPI_##InitName(buf, count, dt, dest, tag, comm, request);                                          \
  }

SEND_FORMS(Send, Isend, Send_init, MCCL_MPI_SEND_STANDARD)
SEND_FORMS(Ssend, Issend, Ssend_init, MCCL_MPI_SEND_SYNCHRONOUS)
SEND_FORMS(Rsend, Irsend, Rsend_init, MCCL_MPI_SEND_READY)
SEND_FORMS(Bsend, Ibsend, Bsend_init, MCCL_MPI_SEND_BUFFERED)

int MPI_Recv(void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  int rc;
  realCudaAware();
  if (mcclMpiStageRecv(MCCL_MPI_BLOCKING, buf, count, dt, source, tag, comm, status, NULL, &rc)) return rc;
  return PMPI_Recv(buf, count, dt, source, tag, comm, status);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  int rc;
  realCudaAware();
  if (mcclMpiStageRecv(MCCL_MPI_NONBLOCKING, buf, count, dt, source, tag, comm, NULL, request, &rc)) return rc;
  return PMPI_Irecv(buf, count, dt, source, tag, comm, request);
}
int MPI_Recv_init(void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  int rc;
  realCudaAware();
  if (mcclMpiStageRecv(MCCL_MPI_PERSISTENT, buf, count, dt, source, tag, comm, NULL, request, &rc)) return rc;
  return PMPI_Recv_init(buf, count, dt, source, tag, comm, request);
}
int MPI_Mrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* message, MPI_Status* status) {
  int rc;
  realCudaAware();
  if (mcclMpiStageMrecv(buf, count, dt, message, status, NULL, &rc)) return rc;
  return PMPI_Mrecv(buf, count, dt, message, status);
}
int MPI_Imrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* message, MPI_Request* request) {
  int rc;
  realCudaAware();
  if (mcclMpiStageMrecv(buf, count, dt, message, NULL, request, &rc)) return rc;
  return PMPI_Imrecv(buf, count, dt, message, request);
}
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  int rc;
  realCudaAware();
  if (mcclMpiStageSendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                           comm, status, &rc))
    return rc;
  return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                       comm, status);
}
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  int rc;
  realCudaAware();
  if (mcclMpiStageSendrecvReplace(buf, count, dt, dest, sendtag, source, recvtag, comm, status, &rc)) return rc;
  return PMPI_Sendrecv_replace(buf, count, dt, dest, sendtag, source, recvtag, comm, status);
}

/* The collectives the route does not take: host copies of device buffers for an MPI that
 * cannot take them, as for point-to-point (a nonblocking one's request completes through
 * the calls below). */
ROUTED(Gatherv, Igatherv, mcclMpiStageGatherv,
       (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
        const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),
       (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))
ROUTED(Scatterv, Iscatterv, mcclMpiStageScatterv,
       (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
       (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))
ROUTED(Alltoallw, Ialltoallw, mcclMpiStageAlltoallw,
       (const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
        void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
       (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
ROUTED(Neighbor_allgather, Ineighbor_allgather, mcclMpiStageNeighborAllgather,
       (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
        MPI_Comm comm),
       (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
ROUTED(Neighbor_allgatherv, Ineighbor_allgatherv, mcclMpiStageNeighborAllgatherv,
       (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
        const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
       (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
ROUTED(Neighbor_alltoall, Ineighbor_alltoall, mcclMpiStageNeighborAlltoall,
       (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
        MPI_Comm comm),
       (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
ROUTED(Neighbor_alltoallv, Ineighbor_alltoallv, mcclMpiStageNeighborAlltoallv,
       (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
        const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
       (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
ROUTED(Neighbor_alltoallw, Ineighbor_alltoallw, mcclMpiStageNeighborAlltoallw,
       (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
        void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
        MPI_Comm comm),
       (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
static int stageScan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                     MPI_Request* req, int* rc) {
  return mcclMpiStageScan(0, sendbuf, recvbuf, count, dt, op, comm, req, rc);
}
static int stageExscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                       MPI_Request* req, int* rc) {
  return mcclMpiStageScan(1, sendbuf, recvbuf, count, dt, op, comm, req, rc);
}
ROUTED(Scan, Iscan, stageScan,
       (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
       (sendbuf, recvbuf, count, datatype, op, comm))
ROUTED(Exscan, Iexscan, stageExscan,
       (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
       (sendbuf, recvbuf, count, datatype, op, comm))
int MPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  int rc;
  realCudaAware();
  if (mcclMpiStageReduceLocal(inbuf, inoutbuf, count, datatype, op, &rc)) return rc;
  return PMPI_Reduce_local(inbuf, inoutbuf, count, datatype, op);
}

/* The calls that complete requests: libmccl's while a staged request is alive (a receive's
 * host copy goes back to the device before they return), else PMPI_* directly. */
int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return mcclMpiStagedRequests() ? mcclMpiStagedWait(request, status) : PMPI_Wait(request, status);
}
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return mcclMpiStagedRequests() ? mcclMpiStagedTest(request, flag, status) : PMPI_Test(request, flag, status);
}
int MPI_Waitall(int n, MPI_Request requests[], MPI_Status statuses[]) {
  return mcclMpiStagedRequests() ? mcclMpiStagedWaitall(n, requests, statuses) : PMPI_Waitall(n, requests, statuses);
}
int MPI_Testall(int n, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return mcclMpiStagedRequests() ? mcclMpiStagedTestall(n, requests, flag, statuses)
                                 : PMPI_Testall(n, requests, flag, statuses);
}
int MPI_Waitany(int n, MPI_Request requests[], int* index, MPI_Status* status) {
  return mcclMpiStagedRequests() ? mcclMpiStagedWaitany(n, requests, index, status)
                                 : PMPI_Waitany(n, requests, index, status);
}
int MPI_Testany(int n, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return mcclMpiStagedRequests() ? mcclMpiStagedTestany(n, requests, index, flag, status)
                                 : PMPI_Testany(n, requests, index, flag, status);
}
int MPI_Waitsome(int n, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return mcclMpiStagedRequests() ? mcclMpiStagedWaitsome(n, requests, outcount, indices, statuses)
                                 : PMPI_Waitsome(n, requests, outcount, indices, statuses);
}
int MPI_Testsome(int n, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return mcclMpiStagedRequests() ? mcclMpiStagedTestsome(n, requests, outcount, indices, statuses)
                                 : PMPI_Testsome(n, requests, outcount, indices, statuses);
}
int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return mcclMpiStagedRequests() ? mcclMpiStagedRequestGetStatus(request, flag, status)
                                 : PMPI_Request_get_status(request, flag, status);
}
int MPI_Request_free(MPI_Request* request) {
  return mcclMpiStagedRequests() ? mcclMpiStagedRequestFree(request) : PMPI_Request_free(request);
}
int MPI_Start(MPI_Request* request) {
  return mcclMpiStagedRequests() ? mcclMpiStagedStart(request) : PMPI_Start(request);
}
int MPI_Startall(int n, MPI_Request requests[]) {
  return mcclMpiStagedRequests() ? mcclMpiStagedStartall(n, requests) : PMPI_Startall(n, requests);
}

/* Programs that ask whether MPI takes device buffers: the collectives and point-to-point
 * calls above do. */
int MPIX_Query_cuda_support(void) {
  int real = realCudaAware();
  int v = mcclMpiRouteCudaAware();
  return v >= 0 ? v : real;
}

/*
 * The Fortran bindings. Open MPI's Fortran wrappers (mpif.h, `use mpi`, `use mpi_f08`)
 * call PMPI_* directly, so the C functions above never see a Fortran program's calls. The
 * preload therefore also defines the Fortran entry points of the same collectives under
 * every name a Fortran compiler links to (mpi_allreduce, mpi_allreduce_, mpi_allreduce__,
 * MPI_ALLREDUCE) and under ompi_allreduce_f, the function Open MPI's `use mpi_f08` module
 * calls. Each turns the Fortran handles and constants into C ones and calls the C function
 * above, which routes the call or forwards it to PMPI_* as Open MPI's own wrapper would.
 */
#include <stddef.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER count arrays are passed on as int arrays");

/* Fortran's MPI_IN_PLACE and MPI_BOTTOM are the addresses of Open MPI's common blocks, as
 * the program and the MPI libraries resolved them (the first definition in load order). */
static void* fortranConstant(const char* const names[4]) {
  for (int i = 0; i < 4; ++i) {
    void* p = dlsym(RTLD_DEFAULT, names[i]);
    if (p) return p;
  }
  return NULL;
}
static void* fortranBuffer(void* p) {
  static void* inPlace = (void*)-1;
  static void* bottom = (void*)-1;
  if (inPlace == (void*)-1) {
    static const char* const ip[4] = {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
                                      "MPI_FORTRAN_IN_PLACE"};
    static const char* const bt[4] = {"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__",
                                      "MPI_FORTRAN_BOTTOM"};
    bottom = fortranConstant(bt);
    inPlace = fortranConstant(ip);
  }
  if (p != NULL && p == inPlace) return MPI_IN_PLACE;
  if (p != NULL && p == bottom) return MPI_BOTTOM;
  return p;
}

/* The Fortran names of MPI_<base> (mpi_<base> with 0-2 underscores, UPPER, and Open MPI's
 * ompi_<base>_f) as aliases of impl. */
#define FORTRAN_NAMES(base, UPPER, impl, params)                                                  \
  void mpi_##base params __attribute__((alias(#impl), visibility("default")));                  \
  void mpi_##base##_ params __attribute__((alias(#impl), visibility("default")));               \
  void mpi_##base##__ params __attribute__((alias(#impl), visibility("default")));              \
  void UPPER params __attribute__((alias(#impl), visibility("default")));                       \
  void ompi_##base##_f params __attribute__((alias(#impl), visibility("default")));

#define FT(x) MPI_Type_f2c(*(x))
#define FO(x) MPI_Op_f2c(*(x))
#define FC(x) MPI_Comm_f2c(*(x))

static void fAllreduce(char* sendbuf, char* recvbuf, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* op,
                       MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Allreduce(fortranBuffer(sendbuf), fortranBuffer(recvbuf), *count, FT(datatype), FO(op), FC(comm));
}
FORTRAN_NAMES(allreduce, MPI_ALLREDUCE, fAllreduce,
              (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fReduce(char* sendbuf, char* recvbuf, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* op, MPI_Fint* root,
                    MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Reduce(fortranBuffer(sendbuf), fortranBuffer(recvbuf), *count, FT(datatype), FO(op), *root,
                               FC(comm));
}
FORTRAN_NAMES(reduce, MPI_REDUCE, fReduce,
              (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fBcast(char* buffer, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* root, MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Bcast(fortranBuffer(buffer), *count, FT(datatype), *root, FC(comm));
}
FORTRAN_NAMES(bcast, MPI_BCAST, fBcast, (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fAllgather(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                       MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Allgather(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf), *recvcount,
                                  FT(recvtype), FC(comm));
}
FORTRAN_NAMES(allgather, MPI_ALLGATHER, fAllgather,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fAllgatherv(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcounts,
                        MPI_Fint* displs, MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Allgatherv(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf),
                                   (const int*)recvcounts, (const int*)displs, FT(recvtype), FC(comm));
}
FORTRAN_NAMES(allgatherv, MPI_ALLGATHERV, fAllgatherv,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fReduceScatterBlock(char* sendbuf, char* recvbuf, MPI_Fint* recvcount, MPI_Fint* datatype, MPI_Fint* op,
                                MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Reduce_scatter_block(fortranBuffer(sendbuf), fortranBuffer(recvbuf), *recvcount, FT(datatype),
                                             FO(op), FC(comm));
}
FORTRAN_NAMES(reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, fReduceScatterBlock,
              (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fReduceScatter(char* sendbuf, char* recvbuf, MPI_Fint* recvcounts, MPI_Fint* datatype, MPI_Fint* op,
                           MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Reduce_scatter(fortranBuffer(sendbuf), fortranBuffer(recvbuf), (const int*)recvcounts,
                                       FT(datatype), FO(op), FC(comm));
}
FORTRAN_NAMES(reduce_scatter, MPI_REDUCE_SCATTER, fReduceScatter,
              (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fAlltoall(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                      MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Alltoall(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf), *recvcount,
                                 FT(recvtype), FC(comm));
}
FORTRAN_NAMES(alltoall, MPI_ALLTOALL, fAlltoall,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fAlltoallv(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype, char* recvbuf,
                       MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Alltoallv(fortranBuffer(sendbuf), (const int*)sendcounts, (const int*)sdispls, FT(sendtype),
                                  fortranBuffer(recvbuf), (const int*)recvcounts, (const int*)rdispls, FT(recvtype),
                                  FC(comm));
}
FORTRAN_NAMES(alltoallv, MPI_ALLTOALLV, fAlltoallv,
              (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fGather(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                    MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Gather(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf), *recvcount,
                               FT(recvtype), *root, FC(comm));
}
FORTRAN_NAMES(gather, MPI_GATHER, fGather,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fScatter(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                     MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Scatter(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf), *recvcount,
                                FT(recvtype), *root, FC(comm));
}
FORTRAN_NAMES(scatter, MPI_SCATTER, fScatter,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

/* The nonblocking forms: the same conversions, and the request handed back as Fortran's. */
#define FREQUEST(call, request, ierr)        \
  do {                                       \
    MPI_Request r_ = MPI_REQUEST_NULL;       \
    *(ierr) = (MPI_Fint)(call);              \
    *(request) = MPI_Request_c2f(r_);        \
  } while (0)

static void fIallreduce(char* sendbuf, char* recvbuf, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* op,
                        MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Iallreduce(fortranBuffer(sendbuf), fortranBuffer(recvbuf), *count, FT(datatype), FO(op), FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(iallreduce, MPI_IALLREDUCE, fIallreduce,
              (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fIreduce(char* sendbuf, char* recvbuf, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* op, MPI_Fint* root,
                     MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Ireduce(fortranBuffer(sendbuf), fortranBuffer(recvbuf), *count, FT(datatype), FO(op), *root, FC(comm),
                       &r_),
           request, ierr);
}
FORTRAN_NAMES(ireduce, MPI_IREDUCE, fIreduce,
              (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fIbcast(char* buffer, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* root, MPI_Fint* comm,
                    MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Ibcast(fortranBuffer(buffer), *count, FT(datatype), *root, FC(comm), &r_), request, ierr);
}
FORTRAN_NAMES(ibcast, MPI_IBCAST, fIbcast, (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fIallgather(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                        MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Iallgather(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf), *recvcount,
                          FT(recvtype), FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(iallgather, MPI_IALLGATHER, fIallgather,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fIallgatherv(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcounts,
                         MPI_Fint* displs, MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Iallgatherv(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf),
                           (const int*)recvcounts, (const int*)displs, FT(recvtype), FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(iallgatherv, MPI_IALLGATHERV, fIallgatherv,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fIreduceScatterBlock(char* sendbuf, char* recvbuf, MPI_Fint* recvcount, MPI_Fint* datatype, MPI_Fint* op,
                                 MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Ireduce_scatter_block(fortranBuffer(sendbuf), fortranBuffer(recvbuf), *recvcount, FT(datatype), FO(op),
                                     FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(ireduce_scatter_block, MPI_IREDUCE_SCATTER_BLOCK, fIreduceScatterBlock,
              (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fIreduceScatter(char* sendbuf, char* recvbuf, MPI_Fint* recvcounts, MPI_Fint* datatype, MPI_Fint* op,
                            MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Ireduce_scatter(fortranBuffer(sendbuf), fortranBuffer(recvbuf), (const int*)recvcounts, FT(datatype),
                               FO(op), FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(ireduce_scatter, MPI_IREDUCE_SCATTER, fIreduceScatter,
              (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fIalltoall(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                       MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Ialltoall(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf), *recvcount,
                         FT(recvtype), FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(ialltoall, MPI_IALLTOALL, fIalltoall,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fIalltoallv(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype, char* recvbuf,
                        MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* request,
                        MPI_Fint* ierr) {
  FREQUEST(MPI_Ialltoallv(fortranBuffer(sendbuf), (const int*)sendcounts, (const int*)sdispls, FT(sendtype),
                          fortranBuffer(recvbuf), (const int*)recvcounts, (const int*)rdispls, FT(recvtype), FC(comm),
                          &r_),
           request, ierr);
}
FORTRAN_NAMES(ialltoallv, MPI_IALLTOALLV, fIalltoallv,
              (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
               MPI_Fint*))

static void fIgather(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                     MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Igather(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf), *recvcount,
                       FT(recvtype), *root, FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(igather, MPI_IGATHER, fIgather,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fIscatter(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                      MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Iscatter(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf), *recvcount,
                        FT(recvtype), *root, FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(iscatter, MPI_ISCATTER, fIscatter,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

/*
 * Point-to-point and the calls that complete requests, by their Fortran names: a Fortran
 * program's device buffers get host copies as a C program's do (the C entry points above),
 * and its MPI_WAIT and friends copy a staged receive back. Statuses are converted between
 * Fortran's integer arrays and C's (Fortran's MPI_STATUS(ES)_IGNORE are Open MPI's common
 * blocks, known by address); LOGICAL true is 1.
 */
#include <stdlib.h>

static int fortranIs(const void* p, const char* const names[4], void* found[4], int* looked) {
  if (!*looked) {
    for (int i = 0; i < 4; ++i) found[i] = dlsym(RTLD_DEFAULT, names[i]);
    *looked = 1;
  }
  for (int i = 0; i < 4; ++i)
    if (p != NULL && p == found[i]) return 1;
  return 0;
}
static int fStatusIgnored(const MPI_Fint* s) {
  static const char* const names[4] = {"mpi_fortran_status_ignore", "mpi_fortran_status_ignore_",
                                       "mpi_fortran_status_ignore__", "MPI_FORTRAN_STATUS_IGNORE"};
  static void* found[4];
  static int looked = 0;
  return s == NULL || (MPI_F_STATUS_IGNORE != NULL && s == MPI_F_STATUS_IGNORE) || fortranIs(s, names, found, &looked);
}
static int fStatusesIgnored(const MPI_Fint* s) {
  static const char* const names[4] = {"mpi_fortran_statuses_ignore", "mpi_fortran_statuses_ignore_",
                                       "mpi_fortran_statuses_ignore__", "MPI_FORTRAN_STATUSES_IGNORE"};
  static void* found[4];
  static int looked = 0;
  return s == NULL || (MPI_F_STATUSES_IGNORE != NULL && s == MPI_F_STATUSES_IGNORE) ||
         fortranIs(s, names, found, &looked);
}
/* One Fortran status: MPI_STATUS_SIZE integers, as many as C's MPI_Status holds. */
enum { FSTATUS = sizeof(MPI_Status) / sizeof(MPI_Fint) };
#define CSTATUS(f, c) (fStatusIgnored(f) ? MPI_STATUS_IGNORE : &(c))
static void toFStatus(MPI_Fint* f, const MPI_Status* c) {
  if (!fStatusIgnored(f)) MPI_Status_c2f(c, f);
}

/* Fortran request arrays as C ones, and back (n at most a few hundred in practice; the
 * heap for any n). */
typedef struct {
  MPI_Request* reqs;
  MPI_Status* sts;
} CArrays;
static int cArrays(CArrays* a, int n, const MPI_Fint* freqs, int withStatuses) {
  a->reqs = (MPI_Request*)malloc(sizeof(MPI_Request) * (size_t)(n > 0 ? n : 1));
  a->sts = withStatuses ? (MPI_Status*)malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1)) : NULL;
  if (a->reqs == NULL || (withStatuses && a->sts == NULL)) {
    free(a->reqs);
    free(a->sts);
    return 0;
  }
  for (int i = 0; i < n; ++i) a->reqs[i] = MPI_Request_f2c(freqs[i]);
  return 1;
}
static void fromCArrays(CArrays* a, int n, MPI_Fint* freqs) {
  for (int i = 0; i < n; ++i) freqs[i] = MPI_Request_c2f(a->reqs[i]);
  free(a->reqs);
  free(a->sts);
}

#define FSEND(base, UPPER, Cname)                                                                              \
  static void f_##base(char* buf, MPI_Fint* count, MPI_Fint* dt, MPI_Fint* dest, MPI_Fint* tag, MPI_Fint* comm, \
                       MPI_Fint* ierr) {                                                                       \
    *ierr = (MPI_Fint)Cname(fortranBuffer(buf), *count, FT(dt), *dest, *tag, FC(comm));                         \
  }                                                                                                            \
  FORTRAN_NAMES(base, UPPER, f_##base, (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))
#define FISEND(base, UPPER, Cname)                                                                             \
  static void f_##base(char* buf, MPI_Fint* count, MPI_Fint* dt, MPI_Fint* dest, MPI_Fint* tag, MPI_Fint* comm, \
                       MPI_Fint* request, MPI_Fint* ierr) {                                                    \
    FREQUEST(Cname(fortranBuffer(buf), *count, FT(dt), *dest, *tag, FC(comm), &r_), request, ierr);             \
  }                                                                                                            \
  FORTRAN_NAMES(base, UPPER, f_##base,                                                                         \
                (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

FSEND(send, MPI_SEND, MPI_Send)
FSEND(ssend, MPI_SSEND, MPI_Ssend)
FSEND(rsend, MPI_RSEND, MPI_Rsend)
FSEND(bsend, MPI_BSEND, MPI_Bsend)
FISEND(isend, MPI_ISEND, MPI_Isend)
FISEND(issend, MPI_ISSEND, MPI_Issend)
FISEND(irsend, MPI_IRSEND, MPI_Irsend)
FISEND(ibsend, MPI_IBSEND, MPI_Ibsend)
FISEND(send_init, MPI_SEND_INIT, MPI_Send_init)
FISEND(ssend_init, MPI_SSEND_INIT, MPI_Ssend_init)
FISEND(rsend_init, MPI_RSEND_INIT, MPI_Rsend_init)
FISEND(bsend_init, MPI_BSEND_INIT, MPI_Bsend_init)
FISEND(irecv, MPI_IRECV, MPI_Irecv)
FISEND(recv_init, MPI_RECV_INIT, MPI_Recv_init)

static void fRecv(char* buf, MPI_Fint* count, MPI_Fint* dt, MPI_Fint* source, MPI_Fint* tag, MPI_Fint* comm,
                  MPI_Fint* status, MPI_Fint* ierr) {
  MPI_Status c;
  *ierr = (MPI_Fint)MPI_Recv(fortranBuffer(buf), *count, FT(dt), *source, *tag, FC(comm), CSTATUS(status, c));
  if (*ierr == MPI_SUCCESS) toFStatus(status, &c);
}
FORTRAN_NAMES(recv, MPI_RECV, fRecv, (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fSendrecv(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, MPI_Fint* dest, MPI_Fint* sendtag,
                      char* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* source, MPI_Fint* recvtag,
                      MPI_Fint* comm, MPI_Fint* status, MPI_Fint* ierr) {
  MPI_Status c;
  *ierr = (MPI_Fint)MPI_Sendrecv(fortranBuffer(sendbuf), *sendcount, FT(sendtype), *dest, *sendtag,
                                 fortranBuffer(recvbuf), *recvcount, FT(recvtype), *source, *recvtag, FC(comm),
                                 CSTATUS(status, c));
  if (*ierr == MPI_SUCCESS) toFStatus(status, &c);
}
FORTRAN_NAMES(sendrecv, MPI_SENDRECV, fSendrecv,
              (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
               MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fSendrecvReplace(char* buf, MPI_Fint* count, MPI_Fint* dt, MPI_Fint* dest, MPI_Fint* sendtag,
                             MPI_Fint* source, MPI_Fint* recvtag, MPI_Fint* comm, MPI_Fint* status, MPI_Fint* ierr) {
  MPI_Status c;
  *ierr = (MPI_Fint)MPI_Sendrecv_replace(fortranBuffer(buf), *count, FT(dt), *dest, *sendtag, *source, *recvtag,
                                         FC(comm), CSTATUS(status, c));
  if (*ierr == MPI_SUCCESS) toFStatus(status, &c);
}
FORTRAN_NAMES(sendrecv_replace, MPI_SENDRECV_REPLACE, fSendrecvReplace,
              (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
               MPI_Fint*))

static void fMrecv(char* buf, MPI_Fint* count, MPI_Fint* dt, MPI_Fint* message, MPI_Fint* status, MPI_Fint* ierr) {
  MPI_Status c;
  MPI_Message m = MPI_Message_f2c(*message);
  *ierr = (MPI_Fint)MPI_Mrecv(fortranBuffer(buf), *count, FT(dt), &m, CSTATUS(status, c));
  *message = MPI_Message_c2f(m);
  if (*ierr == MPI_SUCCESS) toFStatus(status, &c);
}
FORTRAN_NAMES(mrecv, MPI_MRECV, fMrecv, (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fImrecv(char* buf, MPI_Fint* count, MPI_Fint* dt, MPI_Fint* message, MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Message m = MPI_Message_f2c(*message);
  FREQUEST(MPI_Imrecv(fortranBuffer(buf), *count, FT(dt), &m, &r_), request, ierr);
  *message = MPI_Message_c2f(m);
}
FORTRAN_NAMES(imrecv, MPI_IMRECV, fImrecv, (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fWait(MPI_Fint* request, MPI_Fint* status, MPI_Fint* ierr) {
  MPI_Request r = MPI_Request_f2c(*request);
  MPI_Status c;
  *ierr = (MPI_Fint)MPI_Wait(&r, CSTATUS(status, c));
  *request = MPI_Request_c2f(r);
  if (*ierr == MPI_SUCCESS) toFStatus(status, &c);
}
FORTRAN_NAMES(wait, MPI_WAIT, fWait, (MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fTest(MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierr) {
  MPI_Request r = MPI_Request_f2c(*request);
  MPI_Status c;
  int f = 0;
  *ierr = (MPI_Fint)MPI_Test(&r, &f, CSTATUS(status, c));
  *request = MPI_Request_c2f(r);
  *flag = f ? 1 : 0;
  if (*ierr == MPI_SUCCESS && f) toFStatus(status, &c);
}
FORTRAN_NAMES(test, MPI_TEST, fTest, (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fRequestGetStatus(MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierr) {
  MPI_Status c;
  int f = 0;
  *ierr = (MPI_Fint)MPI_Request_get_status(MPI_Request_f2c(*request), &f, CSTATUS(status, c));
  *flag = f ? 1 : 0;
  if (*ierr == MPI_SUCCESS && f) toFStatus(status, &c);
}
FORTRAN_NAMES(request_get_status, MPI_REQUEST_GET_STATUS, fRequestGetStatus, (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fRequestFree(MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request r = MPI_Request_f2c(*request);
  *ierr = (MPI_Fint)MPI_Request_free(&r);
  *request = MPI_Request_c2f(r);
}
FORTRAN_NAMES(request_free, MPI_REQUEST_FREE, fRequestFree, (MPI_Fint*, MPI_Fint*))

static void fStart(MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request r = MPI_Request_f2c(*request);
  *ierr = (MPI_Fint)MPI_Start(&r);
  *request = MPI_Request_c2f(r);
}
FORTRAN_NAMES(start, MPI_START, fStart, (MPI_Fint*, MPI_Fint*))

static void fStartall(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierr) {
  CArrays a;
  if (!cArrays(&a, *count, requests, 0)) {
    *ierr = MPI_ERR_NO_MEM;
    return;
  }
  *ierr = (MPI_Fint)MPI_Startall(*count, a.reqs);
  fromCArrays(&a, *count, requests);
}
FORTRAN_NAMES(startall, MPI_STARTALL, fStartall, (MPI_Fint*, MPI_Fint*, MPI_Fint*))

/* The statuses of an -all call: a C array where the program wants them, copied back for
 * the k < n entries the call filled. */
static void toFStatuses(MPI_Fint* f, const MPI_Status* c, int n) {
  if (fStatusesIgnored(f)) return;
  for (int k = 0; k < n; ++k) MPI_Status_c2f(&c[k], f + (size_t)k * FSTATUS);
}

static void fWaitall(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* statuses, MPI_Fint* ierr) {
  CArrays a;
  const int ign = fStatusesIgnored(statuses);
  if (!cArrays(&a, *count, requests, !ign)) {
    *ierr = MPI_ERR_NO_MEM;
    return;
  }
  *ierr = (MPI_Fint)MPI_Waitall(*count, a.reqs, ign ? MPI_STATUSES_IGNORE : a.sts);
  if (*ierr == MPI_SUCCESS || *ierr == MPI_ERR_IN_STATUS) toFStatuses(statuses, a.sts, *count);
  fromCArrays(&a, *count, requests);
}
FORTRAN_NAMES(waitall, MPI_WAITALL, fWaitall, (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fTestall(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* flag, MPI_Fint* statuses, MPI_Fint* ierr) {
  CArrays a;
  const int ign = fStatusesIgnored(statuses);
  int f = 0;
  if (!cArrays(&a, *count, requests, !ign)) {
    *ierr = MPI_ERR_NO_MEM;
    return;
  }
  *ierr = (MPI_Fint)MPI_Testall(*count, a.reqs, &f, ign ? MPI_STATUSES_IGNORE : a.sts);
  *flag = f ? 1 : 0;
  if ((*ierr == MPI_SUCCESS && f) || *ierr == MPI_ERR_IN_STATUS) toFStatuses(statuses, a.sts, *count);
  fromCArrays(&a, *count, requests);
}
FORTRAN_NAMES(testall, MPI_TESTALL, fTestall, (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

/* Fortran indices count from 1. */
static void fWaitany(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* status, MPI_Fint* ierr) {
  CArrays a;
  MPI_Status c;
  int i = MPI_UNDEFINED;
  if (!cArrays(&a, *count, requests, 0)) {
    *ierr = MPI_ERR_NO_MEM;
    return;
  }
  *ierr = (MPI_Fint)MPI_Waitany(*count, a.reqs, &i, CSTATUS(status, c));
  *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
  if (*ierr == MPI_SUCCESS && i != MPI_UNDEFINED) toFStatus(status, &c);
  fromCArrays(&a, *count, requests);
}
FORTRAN_NAMES(waitany, MPI_WAITANY, fWaitany, (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fTestany(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* flag, MPI_Fint* status,
                     MPI_Fint* ierr) {
  CArrays a;
  MPI_Status c;
  int i = MPI_UNDEFINED, f = 0;
  if (!cArrays(&a, *count, requests, 0)) {
    *ierr = MPI_ERR_NO_MEM;
    return;
  }
  *ierr = (MPI_Fint)MPI_Testany(*count, a.reqs, &i, &f, CSTATUS(status, c));
  *index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
  *flag = f ? 1 : 0;
  if (*ierr == MPI_SUCCESS && f && i != MPI_UNDEFINED) toFStatus(status, &c);
  fromCArrays(&a, *count, requests);
}
FORTRAN_NAMES(testany, MPI_TESTANY, fTestany, (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

#define FSOME(base, UPPER, Cname)                                                                                \
  static void f_##base(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices,              \
                       MPI_Fint* statuses, MPI_Fint* ierr) {                                                   \
    CArrays a;                                                                                                 \
    const int ign = fStatusesIgnored(statuses);                                                                \
    int out = 0;                                                                                               \
    int* idx = (int*)malloc(sizeof(int) * (size_t)(*count > 0 ? *count : 1));                                 \
    if (idx == NULL || !cArrays(&a, *count, requests, !ign)) {                                                 \
      free(idx);                                                                                               \
      *ierr = MPI_ERR_NO_MEM;                                                                                  \
      return;                                                                                                  \
    }                                                                                                          \
    *ierr = (MPI_Fint)Cname(*count, a.reqs, &out, idx, ign ? MPI_STATUSES_IGNORE : a.sts);                     \
    *outcount = out;                                                                                           \
    if (out != MPI_UNDEFINED) {                                                                                \
      for (int k = 0; k < out; ++k) indices[k] = idx[k] + 1;                                                   \
      if (*ierr == MPI_SUCCESS || *ierr == MPI_ERR_IN_STATUS) toFStatuses(statuses, a.sts, out);              \
    }                                                                                                          \
    free(idx);                                                                                                 \
    fromCArrays(&a, *count, requests);                                                                         \
  }                                                                                                            \
  FORTRAN_NAMES(base, UPPER, f_##base, (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

FSOME(waitsome, MPI_WAITSOME, MPI_Waitsome)
FSOME(testsome, MPI_TESTSOME, MPI_Testsome)

/* The other collectives' Fortran names (host copies of device buffers, as in C). */
static void fGatherv(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcounts,
                     MPI_Fint* displs, MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Gatherv(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf),
                                (const int*)recvcounts, (const int*)displs, FT(recvtype), *root, FC(comm));
}
FORTRAN_NAMES(gatherv, MPI_GATHERV, fGatherv,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))
static void fIgatherv(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcounts,
                      MPI_Fint* displs, MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm, MPI_Fint* request,
                      MPI_Fint* ierr) {
  FREQUEST(MPI_Igatherv(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf),
                        (const int*)recvcounts, (const int*)displs, FT(recvtype), *root, FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(igatherv, MPI_IGATHERV, fIgatherv,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
               MPI_Fint*))

static void fScatterv(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* displs, MPI_Fint* sendtype, char* recvbuf,
                      MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Scatterv(fortranBuffer(sendbuf), (const int*)sendcounts, (const int*)displs, FT(sendtype),
                                 fortranBuffer(recvbuf), *recvcount, FT(recvtype), *root, FC(comm));
}
FORTRAN_NAMES(scatterv, MPI_SCATTERV, fScatterv,
              (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))
static void fIscatterv(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* displs, MPI_Fint* sendtype, char* recvbuf,
                       MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm, MPI_Fint* request,
                       MPI_Fint* ierr) {
  FREQUEST(MPI_Iscatterv(fortranBuffer(sendbuf), (const int*)sendcounts, (const int*)displs, FT(sendtype),
                         fortranBuffer(recvbuf), *recvcount, FT(recvtype), *root, FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(iscatterv, MPI_ISCATTERV, fIscatterv,
              (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
               MPI_Fint*))

#define FSCAN(base, UPPER, Cname, Iname, IUPPER, Ibase)                                                          \
  static void f_##base(char* sendbuf, char* recvbuf, MPI_Fint* count, MPI_Fint* dt, MPI_Fint* op, MPI_Fint* comm, \
                       MPI_Fint* ierr) {                                                                        \
    *ierr = (MPI_Fint)Cname(fortranBuffer(sendbuf), fortranBuffer(recvbuf), *count, FT(dt), FO(op), FC(comm));  \
  }                                                                                                             \
  FORTRAN_NAMES(base, UPPER, f_##base, (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))   \
  static void f_##Ibase(char* sendbuf, char* recvbuf, MPI_Fint* count, MPI_Fint* dt, MPI_Fint* op,              \
                        MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {                                    \
    FREQUEST(Iname(fortranBuffer(sendbuf), fortranBuffer(recvbuf), *count, FT(dt), FO(op), FC(comm), &r_),      \
             request, ierr);                                                                                    \
  }                                                                                                             \
  FORTRAN_NAMES(Ibase, IUPPER, f_##Ibase,                                                                       \
                (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))
FSCAN(scan, MPI_SCAN, MPI_Scan, MPI_Iscan, MPI_ISCAN, iscan)
FSCAN(exscan, MPI_EXSCAN, MPI_Exscan, MPI_Iexscan, MPI_IEXSCAN, iexscan)

static void fReduceLocal(char* inbuf, char* inoutbuf, MPI_Fint* count, MPI_Fint* dt, MPI_Fint* op, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Reduce_local(fortranBuffer(inbuf), fortranBuffer(inoutbuf), *count, FT(dt), FO(op));
}
FORTRAN_NAMES(reduce_local, MPI_REDUCE_LOCAL, fReduceLocal, (char*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

/* Alltoallw: one Fortran datatype a rank on each side, converted for the call. */
static int cTypes(MPI_Datatype** out, const MPI_Fint* f, int n) {
  *out = (MPI_Datatype*)malloc(sizeof(MPI_Datatype) * (size_t)(n > 0 ? n : 1));
  if (*out == NULL) return 0;
  for (int i = 0; i < n; ++i) (*out)[i] = f ? MPI_Type_f2c(f[i]) : MPI_DATATYPE_NULL;
  return 1;
}
static void fAlltoallwCall(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtypes, char* recvbuf,
                           MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm,
                           MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Comm c = FC(comm);
  int n = 0;
  MPI_Datatype *st = NULL, *rt = NULL;
  if (MPI_Comm_size(c, &n) != MPI_SUCCESS) n = 0;
  if (!cTypes(&st, fortranBuffer(sendbuf) == MPI_IN_PLACE ? NULL : sendtypes, n) || !cTypes(&rt, recvtypes, n)) {
    free(st);
    *ierr = MPI_ERR_NO_MEM;
    return;
  }
  if (request) {
    FREQUEST(MPI_Ialltoallw(fortranBuffer(sendbuf), (const int*)sendcounts, (const int*)sdispls, st,
                            fortranBuffer(recvbuf), (const int*)recvcounts, (const int*)rdispls, rt, c, &r_),
             request, ierr);
  } else {
    *ierr = (MPI_Fint)MPI_Alltoallw(fortranBuffer(sendbuf), (const int*)sendcounts, (const int*)sdispls, st,
                                    fortranBuffer(recvbuf), (const int*)recvcounts, (const int*)rdispls, rt, c);
  }
  free(st);
  free(rt);
}
/* Neighbor_alltoallw: one datatype a neighbour, byte displacements of MPI_ADDRESS_KIND. */
static void fNeighborAlltoallwCall(char* sendbuf, MPI_Fint* sendcounts, MPI_Aint* sdispls, MPI_Fint* sendtypes,
                                   char* recvbuf, MPI_Fint* recvcounts, MPI_Aint* rdispls, MPI_Fint* recvtypes,
                                   MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Comm c = FC(comm);
  int in = 0, out = 0;
  mcclMpiStageNeighbours(c, &in, &out);
  MPI_Datatype *st = NULL, *rt = NULL;
  if (!cTypes(&st, sendtypes, out) || !cTypes(&rt, recvtypes, in)) {
    free(st);
    *ierr = MPI_ERR_NO_MEM;
    return;
  }
  if (request) {
    FREQUEST(MPI_Ineighbor_alltoallw(fortranBuffer(sendbuf), (const int*)sendcounts, sdispls, st,
                                     fortranBuffer(recvbuf), (const int*)recvcounts, rdispls, rt, c, &r_),
             request, ierr);
  } else {
    *ierr = (MPI_Fint)MPI_Neighbor_alltoallw(fortranBuffer(sendbuf), (const int*)sendcounts, sdispls, st,
                                             fortranBuffer(recvbuf), (const int*)recvcounts, rdispls, rt, c);
  }
  free(st);
  free(rt);
}
static void fNeighborAlltoallw(char* sendbuf, MPI_Fint* sendcounts, MPI_Aint* sdispls, MPI_Fint* sendtypes,
                               char* recvbuf, MPI_Fint* recvcounts, MPI_Aint* rdispls, MPI_Fint* recvtypes,
                               MPI_Fint* comm, MPI_Fint* ierr) {
  fNeighborAlltoallwCall(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, NULL,
                         ierr);
}
FORTRAN_NAMES(neighbor_alltoallw, MPI_NEIGHBOR_ALLTOALLW, fNeighborAlltoallw,
              (char*, MPI_Fint*, MPI_Aint*, MPI_Fint*, char*, MPI_Fint*, MPI_Aint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))
static void fIneighborAlltoallw(char* sendbuf, MPI_Fint* sendcounts, MPI_Aint* sdispls, MPI_Fint* sendtypes,
                                char* recvbuf, MPI_Fint* recvcounts, MPI_Aint* rdispls, MPI_Fint* recvtypes,
                                MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  fNeighborAlltoallwCall(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                         request, ierr);
}
FORTRAN_NAMES(ineighbor_alltoallw, MPI_INEIGHBOR_ALLTOALLW, fIneighborAlltoallw,
              (char*, MPI_Fint*, MPI_Aint*, MPI_Fint*, char*, MPI_Fint*, MPI_Aint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
               MPI_Fint*))

/* The other neighbourhood collectives. */
#define FNEIGHBOR_GATHER_TOALL(base, UPPER, Cname, Ibase, IUPPER, Iname)                                          \
  static void f_##base(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount, \
                       MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* ierr) {                                       \
    *ierr = (MPI_Fint)Cname(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf), *recvcount,  \
                            FT(recvtype), FC(comm));                                                               \
  }                                                                                                                \
  FORTRAN_NAMES(base, UPPER, f_##base, (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*,       \
                                        MPI_Fint*))                                                                \
  static void f_##Ibase(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf,                    \
                        MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* comm, MPI_Fint* request,                \
                        MPI_Fint* ierr) {                                                                          \
    FREQUEST(Iname(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf), *recvcount,          \
                   FT(recvtype), FC(comm), &r_),                                                                   \
             request, ierr);                                                                                       \
  }                                                                                                                \
  FORTRAN_NAMES(Ibase, IUPPER, f_##Ibase, (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*,    \
                                           MPI_Fint*, MPI_Fint*))

FNEIGHBOR_GATHER_TOALL(neighbor_allgather, MPI_NEIGHBOR_ALLGATHER, MPI_Neighbor_allgather, ineighbor_allgather,
                       MPI_INEIGHBOR_ALLGATHER, MPI_Ineighbor_allgather)
FNEIGHBOR_GATHER_TOALL(neighbor_alltoall, MPI_NEIGHBOR_ALLTOALL, MPI_Neighbor_alltoall, ineighbor_alltoall,
                       MPI_INEIGHBOR_ALLTOALL, MPI_Ineighbor_alltoall)

static void fNeighborAllgatherv(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf,
                                MPI_Fint* recvcounts, MPI_Fint* displs, MPI_Fint* recvtype, MPI_Fint* comm,
                                MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Neighbor_allgatherv(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf),
                                            (const int*)recvcounts, (const int*)displs, FT(recvtype), FC(comm));
}
FORTRAN_NAMES(neighbor_allgatherv, MPI_NEIGHBOR_ALLGATHERV, fNeighborAllgatherv,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))
static void fIneighborAllgatherv(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf,
                                 MPI_Fint* recvcounts, MPI_Fint* displs, MPI_Fint* recvtype, MPI_Fint* comm,
                                 MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Ineighbor_allgatherv(fortranBuffer(sendbuf), *sendcount, FT(sendtype), fortranBuffer(recvbuf),
                                    (const int*)recvcounts, (const int*)displs, FT(recvtype), FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(ineighbor_allgatherv, MPI_INEIGHBOR_ALLGATHERV, fIneighborAllgatherv,
              (char*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

static void fNeighborAlltoallv(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype,
                               char* recvbuf, MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype,
                               MPI_Fint* comm, MPI_Fint* ierr) {
  *ierr = (MPI_Fint)MPI_Neighbor_alltoallv(fortranBuffer(sendbuf), (const int*)sendcounts, (const int*)sdispls,
                                           FT(sendtype), fortranBuffer(recvbuf), (const int*)recvcounts,
                                           (const int*)rdispls, FT(recvtype), FC(comm));
}
FORTRAN_NAMES(neighbor_alltoallv, MPI_NEIGHBOR_ALLTOALLV, fNeighborAlltoallv,
              (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))
static void fIneighborAlltoallv(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtype,
                                char* recvbuf, MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtype,
                                MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  FREQUEST(MPI_Ineighbor_alltoallv(fortranBuffer(sendbuf), (const int*)sendcounts, (const int*)sdispls, FT(sendtype),
                                   fortranBuffer(recvbuf), (const int*)recvcounts, (const int*)rdispls, FT(recvtype),
                                   FC(comm), &r_),
           request, ierr);
}
FORTRAN_NAMES(ineighbor_alltoallv, MPI_INEIGHBOR_ALLTOALLV, fIneighborAlltoallv,
              (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
               MPI_Fint*))

static void fAlltoallw(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtypes, char* recvbuf,
                       MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm, MPI_Fint* ierr) {
  fAlltoallwCall(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, NULL, ierr);
}
FORTRAN_NAMES(alltoallw, MPI_ALLTOALLW, fAlltoallw,
              (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))
static void fIalltoallw(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* sdispls, MPI_Fint* sendtypes, char* recvbuf,
                        MPI_Fint* recvcounts, MPI_Fint* rdispls, MPI_Fint* recvtypes, MPI_Fint* comm, MPI_Fint* request,
                        MPI_Fint* ierr) {
  fAlltoallwCall(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request, ierr);
}
FORTRAN_NAMES(ialltoallw, MPI_IALLTOALLW, fIalltoallw,
              (char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
               MPI_Fint*))
