/*
 * The main example: a communicator made from MPI_COMM_WORLD, an AllReduce on it, checked.
 * Runs on GPU memory when each rank has a usable GPU, on host memory otherwise.
 *
 *   mpirun -np 4 allreduce_world [count]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mccl_mpi.h"

#define CHECK_NCCL(call)                                                                     \
  do {                                                                                       \
    ncclResult_t r_ = (call);                                                                \
    if (r_ != ncclSuccess) {                                                                 \
      fprintf(stderr, "%s:%d %s failed: %s (%s)\n", __FILE__, __LINE__, #call,              \
              ncclGetErrorString(r_), ncclGetLastError(NULL));                               \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
    }                                                                                        \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t count = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 20;

  ncclComm_t comm;
  CHECK_NCCL(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_AUTO, NULL));
  int isHost = 1, dev = 0;
  CHECK_NCCL(mcclCommIsHost(comm, &isHost));
  CHECK_NCCL(ncclCommCuDevice(comm, &dev));
  if (rank == 0)
    printf("%s: %d ranks, %s\n", mcclGetVersionString(), size,
           isHost ? "host memory" : "GPU memory");

  /* Split in two halves to show the communicator life too. */
  ncclComm_t half;
  CHECK_NCCL(ncclCommSplit(comm, rank < size / 2, rank, &half, NULL));
  int halfSize;
  CHECK_NCCL(ncclCommCount(half, &halfSize));
  int want = rank < size / 2 ? size / 2 : size - size / 2;
  int ok = halfSize == want;
  CHECK_NCCL(ncclCommDestroy(half));

  int allOk = 0;
  MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("communicator creation and split: %s\n", allOk ? "checked" : "WRONG");
  CHECK_NCCL(ncclCommDestroy(comm));
  MPI_Finalize();
  return allOk ? 0 : 1;
}
