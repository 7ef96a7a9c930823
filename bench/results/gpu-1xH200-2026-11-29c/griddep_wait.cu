// What griddepcontrol.wait (SASS ACQBULK) costs a thread with nothing in flight, and with a
// global load, a global store, a shared store or a local store in flight, in a launch made
// without programmatic serialization (the wait has nothing to wait for). Clock cycles of
// the wait alone (SM clock), averaged over the 32 threads of one warp and 200 launches;
// the load is of a line no launch has touched (an HBM miss). Call 4 of
// bench/results/gpu-1xH200-2026-11-29c; built there with
//   nvcc -O2 -arch=sm_90 -o griddep_wait griddep_wait.cu
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

__global__ void waitCost(const uint64_t* g, uint64_t* sink, uint64_t* cycles, int mode, size_t line) {
  __shared__ uint64_t sh[32];
  volatile uint64_t local[8];  // indexed at run time: local memory (STL / LDL)
  const int t = threadIdx.x;
  uint64_t v = 0;
  asm volatile("" ::: "memory");
  long long t0 = clock64();
  if (mode == 1) v = g[(line + t) * 16];                       // a global load (a line each)
  if (mode == 2) sink[(line + t) * 16] = t0;                   // a global store
  if (mode == 3) sh[t] = static_cast<uint64_t>(t0);            // a shared store
  if (mode == 4) local[(t + line) & 7] = static_cast<uint64_t>(t0);  // a local store
  long long t1 = clock64();
  asm volatile("griddepcontrol.wait;" ::: "memory");
  long long t2 = clock64();
  if (mode == 3) v += sh[(t + 1) & 31];
  if (mode == 4) v += local[(t + 1) & 7];
  long long t3 = clock64();
  v += g[t] * 0;  // keep g live
  atomicAdd(reinterpret_cast<unsigned long long*>(cycles + 0), static_cast<unsigned long long>(t2 - t1));
  atomicAdd(reinterpret_cast<unsigned long long*>(cycles + 1), static_cast<unsigned long long>(t3 - t2));
  atomicAdd(reinterpret_cast<unsigned long long*>(cycles + 2), static_cast<unsigned long long>(t1 - t0));
  if (v == 0x123456789ull) sink[0] = v;
}

int main() {
  const size_t lines = 1u << 22;  // 64 B * 16 * ... : a fresh line per thread per launch
  uint64_t *g, *sink, *cyc;
  cudaMalloc(&g, lines * 16 * sizeof(uint64_t) + 4096);
  cudaMalloc(&sink, lines * 16 * sizeof(uint64_t) + 4096);
  cudaMalloc(&cyc, 3 * sizeof(uint64_t));
  cudaMemset(g, 0, lines * 16 * sizeof(uint64_t));
  const char* names[] = {"nothing", "global load", "global store", "shared store", "local store"};
  const int launches = 200;
  for (int mode = 0; mode < 5; ++mode) {
    cudaMemset(cyc, 0, 3 * sizeof(uint64_t));
    for (int i = 0; i < launches; ++i) waitCost<<<1, 32>>>(g, sink, cyc, mode, static_cast<size_t>(i + 1) * 32 * 97);
    uint64_t c[3];
    cudaMemcpy(c, cyc, sizeof c, cudaMemcpyDeviceToHost);
    const double n = 32.0 * launches;
    std::printf("%-13s in flight: wait %7.1f cycles, after it %7.1f, issue %6.1f\n", names[mode], c[0] / n, c[1] / n,
                c[2] / n);
  }
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("%s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
