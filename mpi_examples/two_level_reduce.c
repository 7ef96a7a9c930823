/*
 * A two-level AllReduce: MPI_COMM_WORLD split by node (MPI_Comm_split_type SHARED), a
 * Reduce inside each node, an AllReduce among the node leaders, a Broadcast inside each
 * node — every step on an mccl communicator cached on the MPI communicator — checked
 * against MPI_Allreduce of the same data.
 *
 *   mpirun -np 4 two_level_reduce [count]
 */
#include <math.h>

#include "example_util.h"
#include "mccl_mpi.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t count = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;

  MPI_Comm node, leaders;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int nodeRank, nodeSize;
  MPI_Comm_rank(node, &nodeRank);
  MPI_Comm_size(node, &nodeSize);
  MPI_Comm_split(MPI_COMM_WORLD, nodeRank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);

  ncclComm_t nodeComm, leaderComm = NULL;
  CHECK_NCCL(mcclMpiComm(node, &nodeComm));
  if (leaders != MPI_COMM_NULL) CHECK_NCCL(mcclMpiComm(leaders, &leaderComm));
  int isHost;
  CHECK_NCCL(mcclCommIsHost(nodeComm, &isHost));
  cudaStream_t s = exStream(isHost);

  double* host = (double*)malloc(count * sizeof(double));
  for (size_t i = 0; i < count; ++i) host[i] = sin((double)(rank * 7 + i)) * 1e-3 + rank;
  double* x = (double*)exAlloc(count * sizeof(double), isHost);
  double* sum = (double*)exAlloc(count * sizeof(double), isHost);
  exCopy(x, host, count * sizeof(double), isHost, 1);

  CHECK_NCCL(ncclReduce(x, sum, count, ncclDouble, ncclSum, 0, nodeComm, s));       /* in the node */
  if (leaderComm)
    CHECK_NCCL(ncclAllReduce(sum, sum, count, ncclDouble, ncclSum, leaderComm, s));   /* across nodes */
  CHECK_NCCL(ncclBroadcast(sum, sum, count, ncclDouble, 0, nodeComm, s));            /* back to all */
  exSync(s, isHost);

  double* got = (double*)malloc(count * sizeof(double));
  double* want = (double*)malloc(count * sizeof(double));
  exCopy(got, sum, count * sizeof(double), isHost, 0);
  MPI_Allreduce(host, want, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double maxErr = 0;
  for (size_t i = 0; i < count; ++i) {
    double e = fabs(got[i] - want[i]) / (fabs(want[i]) + 1e-30);
    if (e > maxErr) maxErr = e;
  }
  double worst;
  MPI_Reduce(&maxErr, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int leader = nodeRank == 0, nNodes = 0;
  MPI_Allreduce(&leader, &nNodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int ok = worst < 1e-12;
  if (rank == 0)
    printf("two-level AllReduce over %d node(s), %d ranks: max relative difference to MPI_Allreduce %.2e: %s\n",
           nNodes, size, worst, ok ? "correct" : "WRONG");
  exFree(x, isHost);
  exFree(sum, isHost);
  free(host);
  free(got);
  free(want);
  /* The cached communicators are released with their MPI communicators. */
  if (leaders != MPI_COMM_NULL) MPI_Comm_free(&leaders);
  MPI_Comm_free(&node);
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return ok ? 0 : 1;
}
