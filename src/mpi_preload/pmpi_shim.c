/*
 * libmccl_mpi: the PMPI preload. Used with LD_PRELOAD=libmccl_mpi.so (or linked before
 * libmpi), it takes MPI_Allreduce, MPI_Reduce, MPI_Bcast, MPI_Allgather, MPI_Allgatherv,
 * MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Alltoall, MPI_Alltoallv, MPI_Gather
 * and MPI_Scatter, and their nonblocking forms (MPI_Iallreduce, ...), on device buffers
 * to mccl, hands an MPI that cannot take device buffers host copies of those in
 * point-to-point calls, and forwards everything else to PMPI_* unchanged. The decisions live in libmccl
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
