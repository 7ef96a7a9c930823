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

#include "mccl_mpi.h"

#if defined(MCCL_EXAMPLE_CUDA)
#include <cuda_runtime.h>
#endif

#define CHECK_NCCL(call)                                                                     \
  do {                                                                                       \
    ncclResult_t r_ = (call);                                                                \
    if (r_ != ncclSuccess) {                                                                 \
      fprintf(stderr, "%s:%d %s failed: %s (%s)\n", __FILE__, __LINE__, #call,              \
              ncclGetErrorString(r_), ncclGetLastError(NULL));                               \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
    }                                                                                        \
  } while (0)

/* Buffers live on the GPU for a GPU communicator, in host memory otherwise. */
static void* allocBuf(size_t bytes, int isHost) {
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) {
    void* p = NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) MPI_Abort(MPI_COMM_WORLD, 1);
    return p;
  }
#endif
  (void)isHost;
  return malloc(bytes);
}
static void freeBuf(void* p, int isHost) {
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) {
    cudaFree(p);
    return;
  }
#endif
  (void)isHost;
  free(p);
}
static void toBuf(void* dst, const void* src, size_t bytes, int isHost) {
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) {
    cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
    return;
  }
#endif
  (void)isHost;
  memcpy(dst, src, bytes);
}
static void fromBuf(void* dst, const void* src, size_t bytes, int isHost) {
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) {
    cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
    return;
  }
#endif
  (void)isHost;
  memcpy(dst, src, bytes);
}
static void syncStream(cudaStream_t s, int isHost) {
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) cudaStreamSynchronize(s);
#endif
  (void)s;
  (void)isHost;
}

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
  cudaStream_t stream = NULL;
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) cudaStreamCreate(&stream);
#endif
  if (rank == 0)
    printf("%s: %d ranks, %s memory, %zu floats\n", mcclGetVersionString(), size, isHost ? "host" : "GPU",
           count);

  /* Rank r contributes r + 1 + (i % 7): the sum at i is n(n+1)/2 + n (i % 7). */
  float* host = (float*)malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) host[i] = (float)(rank + 1 + (int)(i % 7));
  float* send = (float*)allocBuf(count * sizeof(float), isHost);
  float* recv = (float*)allocBuf(count * sizeof(float), isHost);
  toBuf(send, host, count * sizeof(float), isHost);

  CHECK_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream)); /* warm-up */
  syncStream(stream, isHost);
  const int iters = 10;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) CHECK_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
  syncStream(stream, isHost);
  double us = (MPI_Wtime() - t0) * 1e6 / iters, maxUs;
  MPI_Reduce(&us, &maxUs, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  fromBuf(host, recv, count * sizeof(float), isHost);
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

  freeBuf(send, isHost);
  freeBuf(recv, isHost);
  free(host);
  CHECK_NCCL(ncclCommDestroy(comm));
  MPI_Finalize();
  return allBad == 0 ? 0 : 1;
}
