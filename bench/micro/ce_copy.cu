// Microbenchmark: what the copy engines give a rank's copy within its own GPU (an AlltoAll's
// own block, a Gather's or Scatter's root) against the SMs, and whether such a copy runs
// while a kernel of the same context spins on another stream.
//   1. A copy of B bytes within one GPU by cudaMemcpyAsync (a copy engine) and by a copy
//      kernel of 1..32 blocks of 512 threads (16-byte accesses), GB/s of data copied.
//   2. The same copy engine copy on a non-blocking stream while a one-block kernel spins on
//      another non-blocking stream of the same context until the host releases it: "ran"
//      if the copy finished within 200 ms with the kernel still spinning (CUDA's implicit
//      synchronization of a copy between two addresses of one device would hold it back),
//      and whether a kernel issued after that copy on another stream runs then too (with a
//      kernel issued before the copy as the control).
// Prints one line per measurement; needs one GPU.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace {

__global__ void copyKernel(const uint4* __restrict src, uint4* __restrict dst, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride * 8) {
    uint4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u)
      if (i + u * stride < n) v[u] = __ldcg(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < 8; ++u)
      if (i + u * stride < n) dst[i + u * stride] = v[u];
  }
}

__global__ void markKernel(int* flag) { *flag = 1; }

// Spins until *release (host-mapped memory) is set.
__global__ void spinKernel(volatile int* release) {
  while (*release == 0) {
  }
}

#define CHECK(x)                                                             \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                   \
      return 1;                                                              \
    }                                                                        \
  } while (0)

}  // namespace

int main() {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    std::printf("needs a GPU\n");
    return 0;
  }
  const size_t maxBytes = size_t{1} << 30;
  uint8_t *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, maxBytes));
  CHECK(cudaMalloc(&b, maxBytes));
  CHECK(cudaMemset(a, 1, maxBytes));
  cudaStream_t s, t;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  auto timed = [&](auto&& issue, int reps) {
    issue();  // warm-up
    cudaEventRecord(e0, s);
    for (int r = 0; r < reps; ++r) issue();
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    return ms * 1e3 / reps;  // us a copy
  };
  for (size_t bytes = size_t{1} << 20; bytes <= maxBytes; bytes *= 4) {
    const int reps = bytes >= (size_t{256} << 20) ? 5 : 20;
    const double ce = timed([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s); }, reps);
    std::printf("local copy %8zu KiB  copy engine %9.1f us %7.1f GB/s", bytes >> 10, ce, bytes / (ce * 1e3));
    for (int blocks : {1, 4, 8, 16, 32}) {
      const double k = timed([&] { copyKernel<<<blocks, 512, 0, s>>>(reinterpret_cast<const uint4*>(a),
                                                                     reinterpret_cast<uint4*>(b), bytes / 16); },
                             reps);
      std::printf("  %2d blocks %7.1f GB/s", blocks, bytes / (k * 1e3));
    }
    std::printf("\n");
  }
  CHECK(cudaGetLastError());
  int* release = nullptr;
  CHECK(cudaHostAlloc(&release, sizeof(int), cudaHostAllocMapped));
  *release = 0;
  int* dRelease = nullptr;
  CHECK(cudaHostGetDevicePointer(&dRelease, release, 0));
  int* mark = nullptr;
  CHECK(cudaMalloc(&mark, sizeof(int)));
  // Whether the work on stream x finishes within 200 ms.
  auto finishes = [](cudaStream_t x) {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(200))
      if (cudaStreamQuery(x) == cudaSuccess) return true;
    return false;
  };
  // Both kernels loaded before the spinning one starts: a kernel's first launch loads its
  // module (CUDA's lazy loading), which waits for the kernels running in the context.
  markKernel<<<1, 1, 0, s>>>(mark);
  *release = 1;
  spinKernel<<<1, 32, 0, s>>>(dRelease);
  CHECK(cudaStreamSynchronize(s));
  *release = 0;
  spinKernel<<<1, 32, 0, s>>>(dRelease);
  CHECK(cudaGetLastError());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // The control: a kernel on another stream with no copy issued since the spinning one.
  cudaStream_t u, v;
  CHECK(cudaStreamCreateWithFlags(&u, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&v, cudaStreamNonBlocking));
  markKernel<<<1, 1, 0, u>>>(mark);
  const bool before = finishes(u);
  CHECK(cudaMemcpyAsync(b, a, size_t{64} << 20, cudaMemcpyDeviceToDevice, t));
  const bool ran = finishes(t);
  markKernel<<<1, 1, 0, v>>>(mark);
  const bool after = finishes(v);
  const bool spinning = cudaStreamQuery(s) == cudaErrorNotReady;
  std::printf("beside a kernel spinning on another stream of the same context: a kernel on a third stream %s; "
              "then a copy engine copy of 64 MiB within the GPU %s; a kernel issued after that copy on a fourth "
              "stream %s (the spinning kernel %s)\n",
              before ? "ran" : "held back", ran ? "ran" : "held back", after ? "ran" : "held back",
              spinning ? "still spinning" : "done");
  *release = 1;
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaStreamSynchronize(t));
  return 0;
}
