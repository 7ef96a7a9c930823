/*
 * Buffers for the examples: device memory when the communicator is a GPU one, host
 * memory otherwise, with the few copies the examples need.
 */
#ifndef MCCL_EXAMPLE_UTIL_H_
#define MCCL_EXAMPLE_UTIL_H_

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mccl.h"

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

static inline void* exAlloc(size_t bytes, int isHost) {
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) {
    void* p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) MPI_Abort(MPI_COMM_WORLD, 1);
    return p;
  }
#endif
  (void)isHost;
  return malloc(bytes ? bytes : 1);
}

static inline void exFree(void* p, int isHost) {
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) {
    cudaFree(p);
    return;
  }
#endif
  (void)isHost;
  free(p);
}

/* Host to buffer (toBuf = 1) or buffer to host. */
static inline void exCopy(void* dst, const void* src, size_t bytes, int isHost, int toBuf) {
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) {
    cudaMemcpy(dst, src, bytes, toBuf ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
    return;
  }
#endif
  (void)isHost;
  (void)toBuf;
  memcpy(dst, src, bytes);
}

static inline cudaStream_t exStream(int isHost) {
  cudaStream_t s = NULL;
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) cudaStreamCreate(&s);
#endif
  (void)isHost;
  return s;
}

static inline void exSync(cudaStream_t s, int isHost) {
#if defined(MCCL_EXAMPLE_CUDA)
  if (!isHost) cudaStreamSynchronize(s);
#endif
  (void)s;
  (void)isHost;
}

#endif /* MCCL_EXAMPLE_UTIL_H_ */
