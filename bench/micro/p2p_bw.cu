// Microbenchmark: bytes per second one GPU's SMs move to (write) or from (read) a peer
// GPU over NVLink, and locally, for 1..64 blocks of 512 threads with 16-byte accesses.
// Guides the design of the kernels (how many channels, write or read mode).
#include <cuda_runtime.h>
#include <cstdio>

__global__ void copyKernel(const uint4* __restrict src, uint4* __restrict dst, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride * 8) {
    uint4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) if (i + u * stride < n) v[u] = __ldcg(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < 8; ++u) if (i + u * stride < n) dst[i + u * stride] = v[u];
  }
}

int main() {
  int ndev = 0;
  cudaGetDeviceCount(&ndev);
  if (ndev < 2) { printf("needs 2 GPUs\n"); return 0; }
  size_t bytes = 1ull << 30, n = bytes / 16;
  uint4 *a0, *b0, *a1;
  cudaSetDevice(1); cudaMalloc(&a1, bytes);
  cudaSetDevice(0); cudaMalloc(&a0, bytes); cudaMalloc(&b0, bytes);
  cudaDeviceEnablePeerAccess(1, 0);
  cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
  const char* names[3] = {"local copy", "write to peer", "read from peer"};
  for (int mode = 0; mode < 3; ++mode) {
    for (int blocks : {1, 4, 8, 16, 32, 64, 132}) {
      const uint4* src = mode == 2 ? a1 : a0;
      uint4* dst = mode == 1 ? a1 : b0;
      copyKernel<<<blocks, 512>>>(src, dst, n);
      cudaEventRecord(s);
      for (int r = 0; r < 3; ++r) copyKernel<<<blocks, 512>>>(src, dst, n);
      cudaEventRecord(e); cudaEventSynchronize(e);
      float ms; cudaEventElapsedTime(&ms, s, e);
      double gbs = 3.0 * bytes / (ms * 1e6);
      printf("%-15s blocks %3d: %7.1f GB/s (%.1f per block)\n", names[mode], blocks, gbs, gbs / blocks);
    }
  }
  return 0;
}
