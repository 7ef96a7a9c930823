// Microbenchmark: the fixed costs under a small collective on two GPUs of one node, each
// measured alone so a kernel's time can be broken down (bench/results/.../breakdown.md):
//   launch      an empty kernel, eager (cudaLaunchKernel per call) and replayed in a graph
//   flag        one 8-byte flag store over NVLink and the peer's poll that sees it: half a
//               ping-pong round trip (volatile store, volatile load spin)
//   line        the same with a 16-byte LL line (data + flags in one store)
//   fence       a flag preceded by fence.acq_rel.sys (what the Simple protocol pays per step)
// One process drives both GPUs (peer access). Times are medians of 5 runs of 1000 trips.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                    \
  do {                                                                           \
    cudaError_t e_ = (x);                                                        \
    if (e_ != cudaSuccess) {                                                     \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

__global__ void emptyKernel() {}

__device__ __forceinline__ void st64(volatile unsigned long long* p, unsigned long long v) { *p = v; }
__device__ __forceinline__ unsigned long long ld64(volatile unsigned long long* p) { return *p; }

// mode 0: 8-byte flag; 1: 16-byte LL line; 2: fence.acq_rel.sys then flag.
// Side 0 starts: for i in 1..trips: send i, wait for the peer's i. Side 1 answers.
__global__ void pingPong(unsigned long long* mine, unsigned long long* peers, int side, int trips, int mode,
                         unsigned long long* ns) {
  if (threadIdx.x != 0) return;
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (int i = 1; i <= trips; ++i) {
    if (side == 0) {
      if (mode == 2) asm volatile("fence.acq_rel.sys;" ::: "memory");
      if (mode == 1) {
        asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(peers), "r"(i), "r"(i), "r"(i), "r"(i)
                     : "memory");
      } else {
        st64(peers, i);
      }
    }
    if (mode == 1) {
      unsigned int d0, f0, d1, f1;
      do {
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(d0), "=r"(f0), "=r"(d1), "=r"(f1)
                     : "l"(mine)
                     : "memory");
      } while (f0 != static_cast<unsigned>(i) || f1 != static_cast<unsigned>(i) || d0 + d1 == 0);
    } else {
      while (ld64(mine) != static_cast<unsigned long long>(i)) {
      }
    }
    if (side == 1) {
      if (mode == 2) asm volatile("fence.acq_rel.sys;" ::: "memory");
      if (mode == 1) {
        asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(peers), "r"(i), "r"(i), "r"(i), "r"(i)
                     : "memory");
      } else {
        st64(peers, i);
      }
    }
  }
  unsigned long long t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  *ns = t1 - t0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  int ndev = 0;
  CK(cudaGetDeviceCount(&ndev));
  // Launch costs on GPU 0.
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  const int n = 1000;
  std::vector<double> eager, graph;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 100; ++i) emptyKernel<<<1, 512, 0, s>>>();
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  for (int rep = 0; rep < 6; ++rep) {
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < n; ++i) emptyKernel<<<1, 512, 0, s>>>();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (rep) eager.push_back(ms * 1e3 / n);
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < n / 100; ++i) CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    if (rep) graph.push_back(ms * 1e3 / n);
  }
  std::printf("launch   empty kernel, eager back to back: %6.2f us\n", median(eager));
  std::printf("launch   empty kernel, in a graph:         %6.2f us\n", median(graph));
  if (ndev < 2) {
    std::printf("flag     needs 2 GPUs\n");
    return 0;
  }
  unsigned long long *m0, *m1, *ns0, *ns1;
  CK(cudaSetDevice(1));
  CK(cudaDeviceEnablePeerAccess(0, 0));
  CK(cudaMalloc(&m1, 256));
  CK(cudaMalloc(&ns1, 8));
  cudaStream_t s1;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaSetDevice(0));
  CK(cudaDeviceEnablePeerAccess(1, 0));
  CK(cudaMalloc(&m0, 256));
  CK(cudaMalloc(&ns0, 8));
  const char* names[3] = {"flag     8-byte store over NVLink, one way:", "line     16-byte LL line, one way:       ",
                          "fence    fence.acq_rel.sys + flag, one way:"};
  for (int mode = 0; mode < 3; ++mode) {
    std::vector<double> oneWay;
    for (int rep = 0; rep < 5; ++rep) {
      CK(cudaSetDevice(0));
      CK(cudaMemset(m0, 0, 256));
      CK(cudaSetDevice(1));
      CK(cudaMemset(m1, 0, 256));
      CK(cudaDeviceSynchronize());
      pingPong<<<1, 32, 0, s1>>>(m1, m0, 1, n, mode, ns1);
      CK(cudaSetDevice(0));
      CK(cudaDeviceSynchronize());
      pingPong<<<1, 32, 0, s>>>(m0, m1, 0, n, mode, ns0);
      CK(cudaStreamSynchronize(s));
      CK(cudaSetDevice(1));
      CK(cudaStreamSynchronize(s1));
      CK(cudaSetDevice(0));
      unsigned long long t;
      CK(cudaMemcpy(&t, ns0, 8, cudaMemcpyDeviceToHost));
      oneWay.push_back(t / 1e3 / n / 2);
    }
    std::printf("%s %6.2f us\n", names[mode], median(oneWay));
  }
  return 0;
}
