// What a kernel's per-thread stack costs in device memory: the driver keeps local memory
// for the largest stack any launched kernel needs, for every thread slot of the GPU, for
// the life of the context. Launches kernels whose frames hold N bytes (N from the command
// line, one process per N so nothing carries over) and prints the device memory in use
// before and after, with the stack limit the runtime reports.
//   micro_stack_reserve 0 256 512 1024 2048 4096 8192
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

template <int N>
__global__ void frame(int* out, int k) {
  volatile int a[N / 4 > 0 ? N / 4 : 1];  // volatile: stays in local memory
  for (int i = 0; i < N / 4; ++i) a[i] = i * k;
  int s = 0;
  for (int i = 0; i < N / 4; i += 7) s += a[(i * k) % (N / 4 > 0 ? N / 4 : 1)];
  if (s == 123456789) *out = s;
}

static size_t used() {
  size_t f = 0, t = 0;
  cudaMemGetInfo(&f, &t);
  return t - f;
}

template <int N>
static int run() {
  int* out;
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("%s, %d SMs x %d threads: ", p.name, p.multiProcessorCount, p.maxThreadsPerMultiProcessor);
  cudaFree(nullptr);
  cudaMalloc(&out, 4);
  cudaDeviceSynchronize();
  const size_t before = used();
  size_t limit = 0;
  cudaDeviceGetLimit(&limit, cudaLimitStackSize);
  cudaFuncAttributes at;
  cudaFuncGetAttributes(&at, frame<N>);
  frame<N><<<1, 32>>>(out, 3);
  cudaError_t e = cudaDeviceSynchronize();
  const size_t after = used();
  std::printf("frame %5d B: kernel local %5zu B, stack limit %zu B, device memory %+8.1f MiB after one launch (%s)\n", N,
              at.localSizeBytes, limit, (static_cast<double>(after) - before) / 1048576.0, cudaGetErrorString(e));
  return 0;
}

int main(int argc, char** argv) {
  // No CUDA call in this process: each child starts its own context.
  for (int i = 1; i < argc; ++i) {
    const int n = std::atoi(argv[i]);
    pid_t pid = fork();
    if (pid == 0) {
      switch (n) {
        case 0: return run<0>();
        case 256: return run<256>();
        case 512: return run<512>();
        case 1024: return run<1024>();
        case 2048: return run<2048>();
        case 4096: return run<4096>();
        default: return run<8192>();
      }
    }
    int st = 0;
    waitpid(pid, &st, 0);
    std::fflush(stdout);
  }
  return 0;
}
