/*
 * An unmodified MPI program: times MPI_Allreduce on GPU data. When MPI says it takes
 * device buffers (MPIX_Query_cuda_support) it passes them directly; otherwise it stages
 * through host memory, as codes do with an MPI that is not CUDA-aware. Run it plain, and
 * with LD_PRELOAD=libmccl_mpi.so to have mccl take the large reductions.
 *
 *   mpirun -np 2 mpi_allreduce_bench [max bytes] [min bytes]
 *
 * Sizes go from min bytes (default 1 MiB; at least one float) up by 4x to max bytes. Below
 * 1 MiB each size runs 2,000 calls (latency), above 20 (5 from 64 MiB).
 */
#include <cuda_runtime.h>
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t maxBytes = argc > 1 ? strtoull(argv[1], NULL, 10) : ((size_t)1 << 30);
  size_t minBytes = argc > 2 ? strtoull(argv[2], NULL, 10) : ((size_t)1 << 20);
  if (minBytes < sizeof(float)) minBytes = sizeof(float);
  int ndev = 0;
  cudaGetDeviceCount(&ndev);
  if (ndev == 0) {
    if (rank == 0) printf("no GPU: nothing to measure\n");
    MPI_Finalize();
    return 0;
  }
  cudaSetDevice(rank % ndev);
  int aware = MPIX_Query_cuda_support();
  float *d, *h = NULL;
  cudaMalloc((void**)&d, maxBytes);
  if (!aware) h = (float*)malloc(maxBytes);
  if (rank == 0) printf("# MPI_Allreduce of floats on GPU data, %d ranks, %s\n", size,
                        aware ? "device buffers passed to MPI" : "staged through host memory");
  if (rank == 0) printf("#%13s %12s %11s %8s\n", "size(B)", "time(us)", "busbw(GB/s)", "check");
  for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= 4) {
    int count = (int)(bytes / sizeof(float));
    float* fill = (float*)malloc(bytes);
    for (int i = 0; i < count; ++i) fill[i] = (float)(rank + 1);
    cudaMemcpy(d, fill, bytes, cudaMemcpyHostToDevice);
    int iters = bytes >= (64u << 20) ? 5 : bytes >= (1u << 20) ? 20 : 2000;
    double t = 0;
    for (int it = -1; it < iters; ++it) {
      if (it == 0) {
        cudaMemcpy(d, fill, bytes, cudaMemcpyHostToDevice);
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
      }
      if (aware) {
        MPI_Allreduce(MPI_IN_PLACE, d, count, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
      } else {
        cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
        MPI_Allreduce(MPI_IN_PLACE, h, count, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
        cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
      }
    }
    double us = (MPI_Wtime() - t) * 1e6 / iters, worst;
    MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    cudaMemcpy(fill, d, bytes, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < count; ++i) bad += fill[i] != (float)size;
    if (rank == 0)
      printf("%14zu %12.2f %11.2f %8s\n", bytes, worst, (double)bytes / (worst * 1e3) * 2.0 * (size - 1) / size,
             bad ? "WRONG" : "ok");
    free(fill);
  }
  cudaFree(d);
  free(h);
  MPI_Finalize();
  return 0;
}
