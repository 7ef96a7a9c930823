// Microbenchmark: what a kernel's parameter block costs a launch. mccl passes a launch's
// work by value (dev_work.h, KernelArgs), so the block's size is paid by every eager call
// and every graph replay. For parameter blocks of 16 B to 4 KiB, a kernel of one block of
// 512 threads that reads one word of its parameters:
//   host     CPU time of one cudaLaunchKernel (the caller's share of an eager call)
//   eager    time per kernel of 2,000 back-to-back launches on one stream (events)
//   graph    time per kernel of a CUDA graph of 20 such kernels, replayed 100 times
// Then, for 512 B of parameters (mccl's tiny launch), the host time of other ways to launch
// the same kernel, 2,000 back to back:
//   runtime + event   cudaLaunchKernel and a cudaEventRecord after it (mccl's eager launch)
//   driver            cuLaunchKernel on the CUfunction of cudaGetFuncBySymbol (one context's)
//   driver, CUkernel  cuLaunchKernel on the context-less kernel of cudaGetKernel (mccl's)
//   driver + event    cuLaunchKernel and cuEventRecord
// Medians of 5 runs. Last, each driver handle launched on a stream of a second context on
// the same device (as when one process drives several GPUs): the CUkernel runs there, the
// CUfunction of the first context is refused (CUDA_ERROR_INVALID_HANDLE).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

template <int Bytes>
struct Params {
  unsigned long long w[Bytes / 8];
};

template <int Bytes>
__global__ void __launch_bounds__(512, 1) paramKernel(const __grid_constant__ Params<Bytes> p, unsigned long long* out) {
  if (threadIdx.x == 0 && p.w[Bytes / 8 - 1] == 12345) *out = p.w[0];
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <int Bytes>
void measure(cudaStream_t s, unsigned long long* out) {
  Params<Bytes> p{};
  const int kEager = 2000, kGraphKernels = 20, kReplays = 100;
  std::vector<double> host, eager, graph;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int k = 0; k < 20; ++k) paramKernel<Bytes><<<1, 512, 0, s>>>(p, out);
  CK(cudaStreamSynchronize(s));
  for (int run = 0; run < 5; ++run) {
    CK(cudaEventRecord(a, s));
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < kEager; ++k) paramKernel<Bytes><<<1, 512, 0, s>>>(p, out);
    auto t1 = std::chrono::steady_clock::now();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kEager);
    eager.push_back(ms * 1e3 / kEager);
  }
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int k = 0; k < kGraphKernels; ++k) paramKernel<Bytes><<<1, 512, 0, s>>>(p, out);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  for (int run = 0; run < 5; ++run) {
    CK(cudaEventRecord(a, s));
    for (int k = 0; k < kReplays; ++k) CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    graph.push_back(ms * 1e3 / (kReplays * kGraphKernels));
  }
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::printf("params %5d B   host %5.2f us   eager %5.2f us   graph %5.2f us\n", Bytes, median(host), median(eager),
              median(graph));
}

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);
using EventRecordFn = CUresult (*)(CUevent, CUstream);

void measureWays(cudaStream_t s, unsigned long long* out) {
  constexpr int kBytes = 512;
  Params<kBytes> p{};
  void* launchPtr = nullptr;
  void* recordPtr = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &launchPtr, 12000, cudaEnableDefault, &q));
  CK(cudaGetDriverEntryPointByVersion("cuEventRecord", &recordPtr, 12000, cudaEnableDefault, &q));
  auto launch = reinterpret_cast<LaunchFn>(launchPtr);
  auto record = reinterpret_cast<EventRecordFn>(recordPtr);
  cudaFunction_t f;
  CK(cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(paramKernel<kBytes>)));
  cudaKernel_t k;
  CK(cudaGetKernel(&k, reinterpret_cast<const void*>(paramKernel<kBytes>)));
  cudaEvent_t e;
  CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  void* args[] = {&p, &out};
  const int kEager = 2000;
  auto time = [&](const char* what, auto body) {
    std::vector<double> host;
    for (int k = 0; k < 20; ++k) body();
    CK(cudaStreamSynchronize(s));
    for (int run = 0; run < 5; ++run) {
      auto t0 = std::chrono::steady_clock::now();
      for (int k = 0; k < kEager; ++k) body();
      auto t1 = std::chrono::steady_clock::now();
      CK(cudaStreamSynchronize(s));
      host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kEager);
    }
    std::printf("params %5d B   %-18s host %5.2f us\n", kBytes, what, median(host));
  };
  time("runtime", [&] { paramKernel<kBytes><<<1, 512, 0, s>>>(p, out); });
  time("runtime + event", [&] {
    paramKernel<kBytes><<<1, 512, 0, s>>>(p, out);
    cudaEventRecord(e, s);
  });
  time("driver", [&] { launch(reinterpret_cast<CUfunction>(f), 1, 1, 1, 512, 1, 1, 0, s, args, nullptr); });
  time("driver + event", [&] {
    launch(reinterpret_cast<CUfunction>(f), 1, 1, 1, 512, 1, 1, 0, s, args, nullptr);
    record(reinterpret_cast<CUevent>(e), s);
  });
  time("driver, CUkernel", [&] { launch(reinterpret_cast<CUfunction>(k), 1, 1, 1, 512, 1, 1, 0, s, args, nullptr); });
  time("CUkernel + event", [&] {
    launch(reinterpret_cast<CUfunction>(k), 1, 1, 1, 512, 1, 1, 0, s, args, nullptr);
    record(reinterpret_cast<CUevent>(e), s);
  });
  CK(cudaEventDestroy(e));
}

// Launches paramKernel<512> through each handle on a stream of a context of its own.
void launchInOtherContext(unsigned long long* out) {
  using CtxCreateFn = CUresult (*)(CUcontext*, CUctxCreateParams*, unsigned, CUdevice);  // cuCtxCreate_v4
  using CtxFn = CUresult (*)(CUcontext);
  using CtxPopFn = CUresult (*)(CUcontext*);
  using StreamCreateFn = CUresult (*)(CUstream*, unsigned);
  using StreamSyncFn = CUresult (*)(CUstream);
  using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void**, void**);
  auto entry = [](const char* name, unsigned version = 12000) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &q));
    return fn;
  };
  auto ctxCreate = reinterpret_cast<CtxCreateFn>(entry("cuCtxCreate", 13000));
  auto ctxDestroy = reinterpret_cast<CtxFn>(entry("cuCtxDestroy"));
  auto ctxPop = reinterpret_cast<CtxPopFn>(entry("cuCtxPopCurrent"));
  auto streamCreate = reinterpret_cast<StreamCreateFn>(entry("cuStreamCreate"));
  auto streamSync = reinterpret_cast<StreamSyncFn>(entry("cuStreamSynchronize"));
  auto launch = reinterpret_cast<LaunchFn>(entry("cuLaunchKernel"));
  cudaFunction_t f;
  cudaKernel_t k;
  CK(cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(paramKernel<512>)));
  CK(cudaGetKernel(&k, reinterpret_cast<const void*>(paramKernel<512>)));
  CUcontext ctx = nullptr, popped = nullptr;
  CUstream s = nullptr;
  const CUresult rc = ctxCreate(&ctx, nullptr, 0, 0);
  const CUresult rsc = rc == CUDA_SUCCESS ? streamCreate(&s, CU_STREAM_NON_BLOCKING) : rc;
  if (rsc != CUDA_SUCCESS) {
    std::printf("second context: could not be made (cuCtxCreate %d, cuStreamCreate %d)\n", rc, rsc);
    return;
  }
  ctxPop(&popped);  // back to the runtime's context; the launches find ctx through s
  Params<512> p{};
  void* args[] = {&p, &out};
  const CUresult rk = launch(reinterpret_cast<CUfunction>(k), 1, 1, 1, 512, 1, 1, 0, s, args, nullptr);
  const CUresult rs = rk == CUDA_SUCCESS ? streamSync(s) : rk;
  const CUresult rf = launch(reinterpret_cast<CUfunction>(f), 1, 1, 1, 512, 1, 1, 0, s, args, nullptr);
  std::printf("second context: CUkernel launch %d, its run %d; first context's CUfunction launch %d (%s)\n", rk, rs,
              rf, rf == CUDA_ERROR_INVALID_HANDLE ? "invalid handle, as expected" : "unexpected");
  ctxDestroy(ctx);
}

int main() {
  cudaStream_t s;
  unsigned long long* out;
  CK(cudaSetDevice(0));
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaMalloc(&out, 8));
  measure<16>(s, out);
  measure<256>(s, out);
  measure<512>(s, out);
  measure<1024>(s, out);
  measure<2048>(s, out);
  measure<3072>(s, out);
  measure<4096>(s, out);
  measureWays(s, out);
  launchInOtherContext(out);
  return 0;
}
