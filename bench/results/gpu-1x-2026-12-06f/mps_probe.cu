// Can two processes sharing one GPU run kernels at the same time, as on two GPUs? Under
// MPS (nvidia-cuda-mps-control -d) they should; without it they take the GPU in turns.
// Two processes (role 0 and 1) exchange CUDA IPC handles of a flag page through files in
// DIR, then one block each plays ping-pong on the flags (the writer stores into the
// peer's page, the reader spins on its own), and the host times a kernel round trip to a
// host-mapped word (launch, then spin) as libmccl_mpi's small calls wait.
// Build: nvcc -O2 -arch=sm_90 -o mps_probe mps_probe.cu -lcuda
// Run:   mps_probe ROLE DIR & mps_probe 1-ROLE DIR
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::printf("role %d: %s: %s\n", role, #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)

__device__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// rounds of: role 0 writes i to the peer, waits for i back; role 1 waits for i, writes it
// back. Returns the ns of all rounds in *ns, or ~0 when a wait passed 2 s.
__global__ void pingpong(volatile unsigned* mine, volatile unsigned* peer, int role, int rounds,
                         unsigned base, unsigned long long* ns) {
  const unsigned long long t0 = now();
  for (int i = 1; i <= rounds; ++i) {
    const unsigned v = base + i;
    if (role == 0) *peer = v;
    const unsigned long long w = now();
    while (*mine != v)
      if (now() - w > 2000000000ull) { *ns = ~0ull; return; }
    if (role == 1) *peer = v;
  }
  *ns = now() - t0;
}

// Raises the host's word to the next count (kept in device memory, so a graph of this
// kernel replays unchanged).
__global__ void raise(volatile unsigned* word, unsigned* count) { *word = ++*count; }

int main(int argc, char** argv) {
  int role = argc > 1 ? std::atoi(argv[1]) : 0;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  CK(cudaSetDevice(0));
  unsigned* page = nullptr;
  CK(cudaMalloc(&page, 4096));
  CK(cudaMemset(page, 0, 4096));
  cudaIpcMemHandle_t h;
  CK(cudaIpcGetMemHandle(&h, page));
  const std::string mine = dir + "/h" + std::to_string(role), theirs = dir + "/h" + std::to_string(1 - role);
  FILE* f = std::fopen((mine + ".tmp").c_str(), "wb");
  std::fwrite(&h, sizeof h, 1, f);
  std::fclose(f);
  std::rename((mine + ".tmp").c_str(), mine.c_str());
  cudaIpcMemHandle_t ph;
  for (int i = 0;; ++i) {
    f = std::fopen(theirs.c_str(), "rb");
    if (f && std::fread(&ph, sizeof ph, 1, f) == 1) break;
    if (f) std::fclose(f);
    if (i > 3000) { std::printf("role %d: no peer handle\n", role); return 1; }
    usleep(10000);
  }
  std::fclose(f);
  unsigned* peer = nullptr;
  CK(cudaIpcOpenMemHandle(reinterpret_cast<void**>(&peer), ph, cudaIpcMemLazyEnablePeerAccess));
  unsigned long long* ns = nullptr;
  CK(cudaMallocManaged(&ns, sizeof *ns));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned base = 0;
  for (int rounds : {10, 1000, 10000}) {
    *ns = 0;
    pingpong<<<1, 1, 0, s>>>(page, peer, role, rounds, base, ns);
    CK(cudaStreamSynchronize(s));
    base += rounds;
    if (*ns == ~0ull) std::printf("role %d: ping-pong %d rounds: a wait passed 2 s (no concurrency)\n", role, rounds);
    else std::printf("role %d: ping-pong %d rounds: %.3f us a round trip\n", role, rounds, *ns / 1e3 / rounds);
  }
  // A kernel round trip to a host-mapped word, as libmccl_mpi's small calls wait: launched
  // as a kernel, and as a one-kernel CUDA graph; the host's time inside the launch call too.
  unsigned* hw = nullptr;
  CK(cudaHostAlloc(&hw, 64, cudaHostAllocMapped | cudaHostAllocPortable));
  unsigned* dw = nullptr;
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dw), hw, 0));
  unsigned* count = nullptr;
  CK(cudaMalloc(&count, 4));
  CK(cudaMemset(count, 0, 4));
  *hw = 0;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  raise<<<1, 32, 0, s>>>(dw, count);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphUpload(ge, s));
  CK(cudaStreamSynchronize(s));
  unsigned seq = 0;
  for (int round = 0; round < 2; ++round)
    for (int graph = 0; graph < 2; ++graph) {
      std::vector<double> t, l;
      for (int i = 0; i < 3000; ++i) {
        ++seq;
        const auto a = std::chrono::steady_clock::now();
        if (graph) cudaGraphLaunch(ge, s);
        else raise<<<1, 32, 0, s>>>(dw, count);
        const auto b = std::chrono::steady_clock::now();
        while (*static_cast<volatile unsigned*>(hw) != seq) {}
        const auto c = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::micro>(c - a).count());
        l.push_back(std::chrono::duration<double, std::micro>(b - a).count());
      }
      CK(cudaStreamSynchronize(s));
      std::sort(t.begin(), t.end());
      std::sort(l.begin(), l.end());
      std::printf("role %d: %s + host word: median %.2f us (p10 %.2f, p90 %.2f), in the launch call %.2f\n", role,
                  graph ? "graph launch" : "kernel launch", t[t.size() / 2], t[t.size() / 10], t[t.size() * 9 / 10],
                  l[l.size() / 2]);
    }
  CK(cudaIpcCloseMemHandle(peer));
  return 0;
}
