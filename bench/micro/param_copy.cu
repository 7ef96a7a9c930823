// Microbenchmark: the fixed costs at the start of an LL kernel's block, where an 8-byte
// AllReduce spends about 1 us before its first setup (MCCL_PROFILE on an H100). One block
// per launch, thread 0 stamps clock64() and %globaltimer around each phase:
//   divergent   the kernel's parameters (DevComm and the works of a TinyArgs) copied to
//               shared memory a word per thread (each thread its own address: the constant
//               cache serves a warp one address per pass)
//   uniform     the same copy with warp-uniform loads: warp k copies 128-byte piece k, 16
//               loads of one address each, and lane j keeps word j
//   global      the same bytes read from device memory (coalesced), as if a plan stored its
//               works there
//   none        only the block barrier
//   ctrl        two threads load three words each from device memory the previous launch
//               wrote (a connection's step counters: the LL setup's round trip)
//   spread      the divergent copy with word i in warp i % nwarps (a warp's few addresses)
//   div64       thread 0 divides two 64-bit integers (llRange)
//   div32       the same in 32 bits
//   code        N instructions of straight-line code against the same N in a loop: the
//               cost of fetching code the SM has not run lately
// For each: eager (2,000 launches back to back) and in a CUDA graph (20 kernels replayed
// 100 times), 64 and 512 threads a block; mean ns (globaltimer) and cycles (clock64) per
// block, then the time per kernel of the graph (events).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/work/dev_work.h"

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

using mccl::DevComm;
using mccl::DevWork;
using Args = mccl::TinyArgs;

enum Variant { kDivergent, kUniform, kSpread, kGlobal, kNone, kCtrl, kDiv64, kDiv32, kVariants };
const char* kNames[] = {"divergent", "uniform", "spread", "global", "none", "ctrl", "div64", "div32"};

struct Shared {
  DevComm comm;
  DevWork works[Args::kWorks];
};

__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <int V>
__global__ void __launch_bounds__(512, 1) startKernel(const __grid_constant__ Args args, const Args* gargs,
                                                       unsigned long long* ctrl, unsigned long long* acc) {
  __shared__ Shared a;
  __shared__ unsigned long long sctrl[6];
  const unsigned long long c0 = clock64(), g0 = gtimer();
  constexpr int kCommWords = sizeof(DevComm) / 8, kWorkWords = sizeof(DevWork) / 8;
  const int words = kCommWords + args.nworks * kWorkWords;
  uint64_t* dst = reinterpret_cast<uint64_t*>(&a);
  if (V == kDivergent) {
    const uint64_t* comm = reinterpret_cast<const uint64_t*>(&args.comm);
    const uint64_t* works = reinterpret_cast<const uint64_t*>(&args.works[0]);
    for (int i = threadIdx.x; i < words; i += blockDim.x)
      dst[i] = i < kCommWords ? comm[i] : works[i - kCommWords];
  } else if (V == kUniform) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const uint64_t* comm = reinterpret_cast<const uint64_t*>(&args.comm);
    const uint64_t* works = reinterpret_cast<const uint64_t*>(&args.works[0]);
    for (int p = warp; p * 16 < words; p += nwarps) {
      uint64_t mine = 0;
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        const int i = p * 16 + k;
        if (i < words) {
          const uint64_t v = i < kCommWords ? comm[i] : works[i - kCommWords];
          if (lane == k) mine = v;
        }
      }
      if (lane < 16 && p * 16 + lane < words) dst[p * 16 + lane] = mine;
    }
  } else if (V == kSpread) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const uint64_t* comm = reinterpret_cast<const uint64_t*>(&args.comm);
    const uint64_t* works = reinterpret_cast<const uint64_t*>(&args.works[0]);
    for (int i = warp + lane * nwarps; i < words; i += blockDim.x)
      dst[i] = i < kCommWords ? comm[i] : works[i - kCommWords];
  } else if (V == kGlobal) {
    const uint64_t* comm = reinterpret_cast<const uint64_t*>(&gargs->comm);
    const uint64_t* works = reinterpret_cast<const uint64_t*>(&gargs->works[0]);
    for (int i = threadIdx.x; i < words; i += blockDim.x)
      dst[i] = i < kCommWords ? comm[i] : works[i - kCommWords];
  } else if (V == kCtrl) {
    if (threadIdx.x < 2) {
      volatile unsigned long long* c = ctrl + 64 * threadIdx.x;
      const unsigned long long x = c[0], y = c[1], z = c[8];
      sctrl[3 * threadIdx.x] = x;
      sctrl[3 * threadIdx.x + 1] = y;
      sctrl[3 * threadIdx.x + 2] = z;
    }
  } else if (V == kDiv64) {
    if (threadIdx.x == 0) {
      const uint64_t total = args.works[0].s.count * 4, nch = args.works[0].s.nchannels + 1;
      sctrl[0] = (total / nch + 15 + (total % nch ? 1 : 0)) & ~uint64_t(15);
    }
  } else if (V == kDiv32) {
    if (threadIdx.x == 0) {
      const uint32_t total = args.works[0].s.count * 4, nch = args.works[0].s.nchannels + 1;
      sctrl[0] = (total / nch + 15 + (total % nch ? 1 : 0)) & ~uint32_t(15);
    }
  }
  __syncthreads();
  const unsigned long long c1 = clock64(), g1 = gtimer();
  if (threadIdx.x == 0) {
    // Consume what was copied so no variant is optimised away.
    if (a.works[0].s.count == 0x7fffffff && a.comm.rank == 12345 && sctrl[0] == 1) acc[3] = 1;
    atomicAdd(acc, c1 - c0);
    atomicAdd(acc + 1, g1 - g0);
    atomicAdd(acc + 2, 1ull);
  }
  if (V == kCtrl && threadIdx.x < 2) ctrl[64 * threadIdx.x] = c1;  // the next launch reads it
}

template <int V>
void run(int threads, cudaStream_t s, const Args& args, const Args* gargs, unsigned long long* ctrl,
         unsigned long long* acc) {
  const int kEager = 2000, kGraphKernels = 20, kReplays = 100;
  unsigned long long h[3];
  for (int graph = 0; graph < 2; ++graph) {
    for (int k = 0; k < 50; ++k) startKernel<V><<<1, threads, 0, s>>>(args, gargs, ctrl, acc);
    CK(cudaStreamSynchronize(s));
    CK(cudaMemset(acc, 0, 4 * sizeof(unsigned long long)));
    float ms = 0;
    int kernels = 0;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    if (!graph) {
      CK(cudaEventRecord(a, s));
      for (int k = 0; k < kEager; ++k) startKernel<V><<<1, threads, 0, s>>>(args, gargs, ctrl, acc);
      CK(cudaEventRecord(b, s));
      kernels = kEager;
    } else {
      cudaGraph_t g;
      cudaGraphExec_t ge;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int k = 0; k < kGraphKernels; ++k) startKernel<V><<<1, threads, 0, s>>>(args, gargs, ctrl, acc);
      CK(cudaStreamEndCapture(s, &g));
      CK(cudaGraphInstantiate(&ge, g, 0));
      CK(cudaGraphLaunch(ge, s));
      CK(cudaStreamSynchronize(s));
      CK(cudaMemset(acc, 0, 4 * sizeof(unsigned long long)));
      CK(cudaEventRecord(a, s));
      for (int k = 0; k < kReplays; ++k) CK(cudaGraphLaunch(ge, s));
      CK(cudaEventRecord(b, s));
      kernels = kGraphKernels * kReplays;
      CK(cudaStreamSynchronize(s));
      CK(cudaGraphExecDestroy(ge));
      CK(cudaGraphDestroy(g));
    }
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    CK(cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost));
    std::printf("%-10s %3d threads  %-5s  in block %7.1f ns %7.0f cycles   per kernel %6.2f us\n", kNames[V],
                threads, graph ? "graph" : "eager", double(h[1]) / h[2], double(h[0]) / h[2], ms * 1e3 / kernels);
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
  }
}

// Straight-line code of N instructions (unrolled: N * 16 bytes of code) against the same
// N instructions in a loop of 8: what fetching a block's code costs when the SM has not run
// it lately.
template <int N, bool Unrolled>
__global__ void __launch_bounds__(512, 1) codeKernel(unsigned long long* acc, uint32_t seed) {
  const unsigned long long c0 = clock64(), g0 = gtimer();
  uint32_t x = seed + threadIdx.x;
  if (Unrolled) {
#pragma unroll
    for (int k = 0; k < N; ++k) asm volatile("add.u32 %0, %0, %1;" : "+r"(x) : "r"(seed + k * 77u));
  } else {
#pragma unroll 1
    for (int k = 0; k < N / 8; ++k) {
#pragma unroll
      for (int j = 0; j < 8; ++j) asm volatile("add.u32 %0, %0, %1;" : "+r"(x) : "r"(seed + j * 77u));
    }
  }
  __syncthreads();
  const unsigned long long c1 = clock64(), g1 = gtimer();
  if (threadIdx.x == 0) {
    if (x == 0x12345) acc[3] = x;
    atomicAdd(acc, c1 - c0);
    atomicAdd(acc + 1, g1 - g0);
    atomicAdd(acc + 2, 1ull);
  }
}

template <int N, bool Unrolled>
void runCode(cudaStream_t s, unsigned long long* acc) {
  unsigned long long h[3];
  for (int k = 0; k < 50; ++k) codeKernel<N, Unrolled><<<1, 512, 0, s>>>(acc, k);
  CK(cudaStreamSynchronize(s));
  CK(cudaMemset(acc, 0, 4 * sizeof(unsigned long long)));
  for (int k = 0; k < 2000; ++k) codeKernel<N, Unrolled><<<1, 512, 0, s>>>(acc, k);
  CK(cudaStreamSynchronize(s));
  CK(cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("code %5d instructions %-8s  in block %7.1f ns %7.0f cycles\n", N, Unrolled ? "unrolled" : "loop",
              double(h[1]) / h[2], double(h[0]) / h[2]);
}

// Code the SM has not run lately against the same code run again: N independent adds
// (unrolled, N * 16 bytes of code, about one instruction a cycle), twice in one launch.
template <int N>
__global__ void __launch_bounds__(512, 1) icacheKernel(unsigned long long* acc, uint32_t seed) {
  uint32_t x[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) x[j] = seed + j + threadIdx.x;
  for (int rep = 0; rep < 2; ++rep) {
    __syncthreads();
    const unsigned long long c0 = clock64();
#pragma unroll
    for (int k = 0; k < N; ++k) asm volatile("add.u32 %0, %0, %1;" : "+r"(x[k & 7]) : "r"(seed + k * 77u));
    __syncthreads();
    const unsigned long long c1 = clock64();
    if (threadIdx.x == 0) atomicAdd(acc + rep, c1 - c0);
  }
  uint32_t y = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) y += x[j];
  if (y == 0x12345) acc[3] = y;
  if (threadIdx.x == 0) atomicAdd(acc + 2, 1ull);
}

template <int N>
void runIcache(cudaStream_t s, unsigned long long* acc, int threads) {
  unsigned long long h[3];
  CK(cudaMemset(acc, 0, 4 * sizeof(unsigned long long)));
  for (int k = 0; k < 500; ++k) icacheKernel<N><<<1, threads, 0, s>>>(acc, k);
  CK(cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("icache %5d instructions (%3d KiB) %3d threads: first pass %7.0f cycles, second %7.0f\n", N, N * 16 / 1024,
              threads, double(h[0]) / h[2], double(h[1]) / h[2]);
}

// What a dependent read of %globaltimer costs (MCCL_PROFILE's marks): 16 reads, each
// used before the next.
__global__ void timerKernel(unsigned long long* acc) {
  unsigned long long x = 0;
  const unsigned long long c0 = clock64();
#pragma unroll
  for (int k = 0; k < 16; ++k) x += gtimer() & 1;
  const unsigned long long c1 = clock64();
  if (threadIdx.x == 0) {
    if (x == 12345) acc[3] = x;
    atomicAdd(acc, c1 - c0);
    atomicAdd(acc + 2, 16ull);
  }
}

template <int... V>
void runAll(std::integer_sequence<int, V...>, int threads, cudaStream_t s, const Args& args, const Args* gargs,
            unsigned long long* ctrl, unsigned long long* acc) {
  (run<V>(threads, s, args, gargs, ctrl, acc), ...);
}

int main() {
  Args args{};
  args.nworks = 1;
  args.nqueues = 1;
  args.works[0].s.count = 2;
  args.works[0].s.nchannels = 1;
  Args* gargs;
  unsigned long long *ctrl, *acc;
  CK(cudaMalloc(&gargs, sizeof(Args)));
  CK(cudaMemcpy(gargs, &args, sizeof(Args), cudaMemcpyHostToDevice));
  CK(cudaMalloc(&ctrl, 128 * sizeof(unsigned long long)));
  CK(cudaMemset(ctrl, 0, 128 * sizeof(unsigned long long)));
  CK(cudaMalloc(&acc, 4 * sizeof(unsigned long long)));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::printf("TinyArgs %zu B, one work: %zu words copied\n", sizeof(Args), (sizeof(DevComm) + sizeof(DevWork)) / 8);
  for (int threads : {64, 512})
    for (int rep = 0; rep < 2; ++rep)
      runAll(std::make_integer_sequence<int, kVariants>{}, threads, s, args, gargs, ctrl, acc);
  {
    unsigned long long h[3];
    CK(cudaMemset(acc, 0, 4 * sizeof(unsigned long long)));
    for (int k = 0; k < 200; ++k) timerKernel<<<1, 32, 0, s>>>(acc);
    CK(cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost));
    std::printf("globaltimer read, dependent: %.0f cycles\n", double(h[0]) / h[2]);
  }
  for (int threads : {32, 512}) {
    runIcache<256>(s, acc, threads);
    runIcache<1024>(s, acc, threads);
    runIcache<4096>(s, acc, threads);
  }
  runCode<256, true>(s, acc);
  runCode<256, false>(s, acc);
  runCode<1024, true>(s, acc);
  runCode<1024, false>(s, acc);
  runCode<4096, true>(s, acc);
  runCode<4096, false>(s, acc);
  return 0;
}
