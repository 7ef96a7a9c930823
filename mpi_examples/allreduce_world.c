/*
 * The main example: a communicator made from MPI_COMM_WORLD, an AllReduce on it checked
 * element by element, and its time. Runs on GPU memory when each rank has a usable GPU,
 * on host memory otherwise.
 *
 *   mpirun -np 4 allreduce_world [count]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h" /* CHECK_NCCL, buffers on the GPU or the host */
#include "mccl_mpi.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t count = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 22;

  ncclComm_t comm;
  CHECK_NCCL(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_AUTO, NULL));
  int isHost = 1;
  CHECK_NCCL(mcclCommIsHost(comm, &isHost));
  cudaStream_t stream = exStream(isHost);
  if (rank == 0)
    printf("%s: %d ranks, %s memory, %zu floats\n", mcclGetVersionString(), size, isHost ? "host" : "GPU",
           count);

  /* Rank r contributes r + 1 + (i % 7): the sum at i is n(n+1)/2 + n (i % 7). */
  float* host = (float*)malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) host[i] = (float)(rank + 1 + (int)(i % 7));
  float* send = (float*)exAlloc(count * sizeof(float), isHost);
  float* recv = (float*)exAlloc(count * sizeof(float), isHost);
  exCopy(send, host, count * sizeof(float), isHost, 1);

  CHECK_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream)); /* warm-up */
  exSync(stream, isHost);
  const int iters = 10;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) CHECK_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
  exSync(stream, isHost);
  double us = (MPI_Wtime() - t0) * 1e6 / iters, maxUs;
  MPI_Reduce(&us, &maxUs, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  exCopy(host, recv, count * sizeof(float), isHost, 0);
  long bad = 0;
  for (size_t i = 0; i < count; ++i) {
    float want = (float)(size * (size + 1) / 2 + size * (int)(i % 7));
    if (host[i] != want) ++bad;
  }
  long allBad = 0;
  MPI_Allreduce(&bad, &allBad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    double bytes = (double)count * sizeof(float);
    printf("AllReduce of %zu floats: %s (%ld wrong elements), %.1f us, busbw %.2f GB/s\n", count,
           allBad == 0 ? "checked, correct" : "WRONG", allBad, maxUs,
           bytes / (maxUs * 1e3) * 2.0 * (size - 1) / size);
  }

  exFree(send, isHost);
  exFree(recv, isHost);
  free(host);
  CHECK_NCCL(ncclCommDestroy(comm));
  MPI_Finalize();
  return allBad == 0 ? 0 : 1;
}
