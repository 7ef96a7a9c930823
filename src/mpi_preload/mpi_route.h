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

/*
 * Point-to-point calls on device buffers, where the MPI library cannot take them (its own
 * MPIX_Query_cuda_support 0, while the preload says 1): host copies of the buffers, as a
 * CUDA-aware MPI makes inside itself (src/bootstrap_mpi/mpi_stage_p2p.cc). Each returns 1
 * when it took the call (*rc the MPI result; a request handed out in *req), 0 when the shim
 * must call PMPI_* as it is (host buffers, a CUDA-aware MPI).
 * mode: how a send completes (MPI_Send, MPI_Ssend, MPI_Rsend, MPI_Bsend). form: the
 * blocking call, its nonblocking form (MPI_Isend) or its persistent one (MPI_Send_init).
 */
enum { MCCL_MPI_SEND_STANDARD, MCCL_MPI_SEND_SYNCHRONOUS, MCCL_MPI_SEND_READY, MCCL_MPI_SEND_BUFFERED };
enum { MCCL_MPI_BLOCKING, MCCL_MPI_NONBLOCKING, MCCL_MPI_PERSISTENT };
int mcclMpiStageSend(int mode, int form, const void* buf, int count, MPI_Datatype dt, int dest, int tag,
                     MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiStageRecv(int form, void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                     MPI_Status* status, MPI_Request* req, int* rc);
/* MPI_Mrecv (req NULL) and MPI_Imrecv. */
int mcclMpiStageMrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* message, MPI_Status* status,
                      MPI_Request* req, int* rc);
int mcclMpiStageSendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                         void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                         MPI_Status* status, int* rc);
int mcclMpiStageSendrecvReplace(void* buf, int count, MPI_Datatype dt, int dest, int sendtag, int source,
                                int recvtag, MPI_Comm comm, MPI_Status* status, int* rc);

/*
 * The collectives the route does not take, on device buffers and an MPI that cannot take
 * them: host copies too (req NULL: the blocking call; exclusive: MPI_Exscan). Return as
 * the point-to-point ones do.
 */
int mcclMpiStageGatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Request* req, int* rc);
int mcclMpiStageScatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                         void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request* req, int* rc);
int mcclMpiStageScan(int exclusive, const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                     MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiStageAlltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                          const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiStageReduceLocal(const void* inbuf, void* inoutbuf, int count, MPI_Datatype dt, MPI_Op op, int* rc);
/* The neighbourhood collectives of a topology communicator (Cartesian, graph, distributed
 * graph): each buffer's span by the counts of the neighbours it receives from and sends to. */
/* How many neighbours comm's topology receives from (*in) and sends to (*out); 0 and 0
 * without a topology. */
void mcclMpiStageNeighbours(MPI_Comm comm, int* in, int* out);
int mcclMpiStageNeighborAllgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiStageNeighborAllgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Request* req, int* rc);
int mcclMpiStageNeighborAlltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiStageNeighborAlltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, int* rc);
int mcclMpiStageNeighborAlltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                  MPI_Request* req, int* rc);

/*
 * The requests those calls hand out are MPI's own, on the host copies; a receive's copy goes
 * back to the device buffer when the request completes, in the calls that complete it
 * (below, each the PMPI_* call's meaning and result). While mcclMpiStagedRequests() is 0
 * (no such request alive: every program on host buffers or a CUDA-aware MPI) the shim calls
 * PMPI_* directly.
 */
int mcclMpiStagedRequests(void);
int mcclMpiStagedWait(MPI_Request* req, MPI_Status* status);
int mcclMpiStagedTest(MPI_Request* req, int* flag, MPI_Status* status);
int mcclMpiStagedWaitall(int n, MPI_Request reqs[], MPI_Status statuses[]);
int mcclMpiStagedTestall(int n, MPI_Request reqs[], int* flag, MPI_Status statuses[]);
int mcclMpiStagedWaitany(int n, MPI_Request reqs[], int* index, MPI_Status* status);
int mcclMpiStagedTestany(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* status);
int mcclMpiStagedWaitsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]);
int mcclMpiStagedTestsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]);
int mcclMpiStagedRequestGetStatus(MPI_Request req, int* flag, MPI_Status* status);
int mcclMpiStagedRequestFree(MPI_Request* req);
int mcclMpiStagedStart(MPI_Request* req);
int mcclMpiStagedStartall(int n, MPI_Request reqs[]);
/* Point-to-point calls staged since the start, and their requests alive now. */
void mcclMpiStageCounters(unsigned long long* staged, unsigned long long* live);
/* Tests: stage host buffers too (the staging path on a machine without a GPU). */
void mcclMpiStageHostForTests(int on);

#ifdef __cplusplus
}
#endif

#endif /* MCCL_MPI_ROUTE_H_ */
