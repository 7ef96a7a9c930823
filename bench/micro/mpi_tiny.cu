// Microbenchmark: ways to complete an 8-byte MPI_Allreduce on device buffers, each timed
// alone, one process per GPU (issue 12's goal: <= 10 us through libmccl_mpi). What the
// preload can do with a tiny device buffer, and the pieces each way is made of:
//   kernel        mcclMpiAllreduce on a blocking stream + mcclStreamSynchronize (the
//                 preload's path today: a kernel, then a wait that keeps MPI progressing)
//   kernel_spin   the same kernel, waited for by spinning on cudaStreamQuery alone
//   route         what libmccl_mpi's MPI_Allreduce runs (mcclMpiRouteAllreduce: the checks,
//                 the launch, the wait on the kernel's completion word where it raises one)
//   staged        cudaMemcpyAsync D2H to pinned memory, cudaStreamSynchronize, MPI_Allreduce
//                 on the host, cudaMemcpyAsync H2D, cudaStreamSynchronize
//   staged_spin   the same, each copy waited for by spinning on cudaStreamQuery
//   staged_sync   the same with cudaMemcpy (synchronous) to and from pinned memory
//   mapped        one kernel that copies the buffer to mapped host memory and waits there
//                 for the host's result (MPI_Allreduce between the two), then writes it back
//   pieces: d2h, h2d (one copy + wait), mpi (MPI_Allreduce of 8 host bytes), empty (an empty
//   kernel + wait), attr (cudaPointerGetAttributes on the device buffer)
//   the floor of a kernel round trip, by how the host learns the kernel is done:
//     empty         cudaStreamSynchronize          empty_q    spinning on cudaStreamQuery
//     empty_nb      the same on a non-blocking stream
//     flag          the kernel's last store raises a word in mapped host memory, the host
//                   spins on it (the stream is never asked)
//     flag_nb       the same on a non-blocking stream
//     flag_launch   (flag's calls) the host's time inside cudaLaunchKernel alone
//     wv            an empty kernel, then cuStreamWriteValue32 of the host's word (the
//                   stream's front end writes it when the kernel is done), spun on
//     query         one cudaStreamQuery of an idle stream
// Each row: the slower rank's mean over 2000 calls, median of 5 trials; every variant's
// result is checked against the sum of the ranks' inputs.
// Usage: micro_mpi_tiny [ITERS [VARIANT,VARIANT...]] (all variants when none are named; naming
// some keeps a run under MCCL_PROFILE to the launches of those alone).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mccl_mpi.h"
#include "mpi_preload/mpi_route.h"  // libmccl's, for the shim

#define CK(x)                                                                                \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
    }                                                                                        \
  } while (0)

__global__ void emptyKernel() {}

// The flag variants: the kernel's last act raises the host's word.
__global__ void flagKernel(volatile unsigned* done, unsigned seq) {
  if (threadIdx.x != 0) return;
  __threadfence_system();
  *done = seq;
}

// The mapped variant: the block copies the buffer to host memory, raises the host's flag,
// waits for the host to post the result, and writes it back.
__global__ void mappedKernel(float* d, volatile float* h, volatile unsigned* toHost, volatile unsigned* toDev,
                             unsigned seq, int n) {
  if (threadIdx.x != 0) return;
  for (int i = 0; i < n; ++i) h[i] = d[i];
  __threadfence_system();
  *toHost = seq;
  while (*toDev != seq) {
  }
  for (int i = 0; i < n; ++i) d[i] = h[n + i];
}

namespace {

void spin(cudaStream_t s) {
  cudaError_t e;
  while ((e = cudaStreamQuery(s)) == cudaErrorNotReady) {
  }
  CK(e);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    if (rank == 0) std::printf("no GPU: nothing to measure\n");
    MPI_Finalize();
    return 0;
  }
  CK(cudaSetDevice(rank % ndev));
  const int n = 2;  // 8 bytes of floats
  const int iters = argc > 1 ? std::atoi(argv[1]) : 2000;
  float* d = nullptr;
  float* h = nullptr;
  unsigned* flags = nullptr;
  CK(cudaMalloc(&d, 64));
  CK(cudaHostAlloc(&h, 64, cudaHostAllocMapped));
  CK(cudaHostAlloc(&flags, 256, cudaHostAllocMapped));  // words 0, 16, 32: a line apart
  std::memset(flags, 0, 256);
  float* hDev = nullptr;
  unsigned* fDev = nullptr;
  CK(cudaHostGetDevicePointer(&hDev, h, 0));
  CK(cudaHostGetDevicePointer(&fDev, flags, 0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamDefault));  // blocking, as the preload's
  cudaStream_t snb;
  CK(cudaStreamCreateWithFlags(&snb, cudaStreamNonBlocking));
  PFN_cuStreamWriteValue32_v11070 writeValue = nullptr;
  cudaDriverEntryPointQueryResult found;
  CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", reinterpret_cast<void**>(&writeValue), 12000,
                                      cudaEnableDefault, &found));
  double launchSeconds = 0;  // flag_launch: time inside the launches of flag's timed calls
  long launches = 0;
  ncclComm_t comm;
  if (mcclMpiComm(MPI_COMM_WORLD, &comm) != ncclSuccess) {
    std::fprintf(stderr, "mcclMpiComm: %s\n", ncclGetLastError(nullptr));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // As the shim tells it of an MPI that is not CUDA-aware: mccl keeps device buffers of every size.
  mcclMpiRouteSetMpiCudaAware(0);
  unsigned seq = 0;
  volatile unsigned* vf = flags;
  volatile float* vh = h;

  struct Variant {
    const char* name;
    bool checks;  // leaves the sum of the inputs in d
    std::function<void()> call;
  };
  std::vector<Variant> variants = {
      {"kernel", true,
       [&] {
         mcclMpiAllreduce(MPI_IN_PLACE, d, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, s);
         mcclStreamSynchronize(s, MPI_COMM_WORLD);
       }},
      {"kernel_spin", true,
       [&] {
         mcclMpiAllreduce(MPI_IN_PLACE, d, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, s);
         spin(s);
       }},
      {"route", true,
       [&] {
         int rc = 0;
         if (!mcclMpiRouteAllreduce(MPI_IN_PLACE, d, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, nullptr, &rc) ||
             rc != MPI_SUCCESS) {
           std::fprintf(stderr, "mcclMpiRouteAllreduce did not take the call (rc %d)\n", rc);
           MPI_Abort(MPI_COMM_WORLD, 1);
         }
       }},
      {"staged", true,
       [&] {
         CK(cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, s));
         CK(cudaStreamSynchronize(s));
         MPI_Allreduce(MPI_IN_PLACE, h, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
         CK(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s));
         CK(cudaStreamSynchronize(s));
       }},
      {"staged_spin", true,
       [&] {
         CK(cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, s));
         spin(s);
         MPI_Allreduce(MPI_IN_PLACE, h, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
         CK(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s));
         spin(s);
       }},
      {"staged_sync", true,
       [&] {
         CK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
         MPI_Allreduce(MPI_IN_PLACE, h, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
         CK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
       }},
      {"mapped", true,
       [&] {
         ++seq;
         mappedKernel<<<1, 32, 0, s>>>(d, hDev, fDev, fDev + 16, seq, n);
         while (vf[0] != seq) {
         }
         float v[2] = {vh[0], vh[1]};
         MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
         vh[2] = v[0];
         vh[3] = v[1];
         std::atomic_thread_fence(std::memory_order_seq_cst);
         vf[16] = seq;
         spin(s);
       }},
      {"d2h", false,
       [&] {
         CK(cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, s));
         CK(cudaStreamSynchronize(s));
       }},
      {"h2d", false,
       [&] {
         CK(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s));
         CK(cudaStreamSynchronize(s));
       }},
      {"mpi", false,
       [&] {
         float v[2] = {1, 2};
         MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
       }},
      {"empty", false,
       [&] {
         emptyKernel<<<1, 32, 0, s>>>();
         CK(cudaStreamSynchronize(s));
       }},
      {"empty_q", false,
       [&] {
         emptyKernel<<<1, 32, 0, s>>>();
         spin(s);
       }},
      {"empty_nb", false,
       [&] {
         emptyKernel<<<1, 32, 0, snb>>>();
         CK(cudaStreamSynchronize(snb));
       }},
      {"flag", false,
       [&] {
         ++seq;
         const double t0 = MPI_Wtime();
         flagKernel<<<1, 32, 0, s>>>(fDev + 32, seq);
         launchSeconds += MPI_Wtime() - t0;
         ++launches;
         while (vf[32] != seq) {
         }
       }},
      {"flag_nb", false,
       [&] {
         ++seq;
         flagKernel<<<1, 32, 0, snb>>>(fDev + 32, seq);
         while (vf[32] != seq) {
         }
       }},
      {"wv", false,
       [&] {
         ++seq;
         emptyKernel<<<1, 32, 0, s>>>();
         if (writeValue(s, reinterpret_cast<CUdeviceptr>(fDev + 48), seq, CU_STREAM_WRITE_VALUE_DEFAULT) !=
             CUDA_SUCCESS) {
           std::fprintf(stderr, "cuStreamWriteValue32 failed\n");
           MPI_Abort(MPI_COMM_WORLD, 1);
         }
         while (vf[48] != seq) {
         }
       }},
      {"query", false, [&] { CK(cudaStreamQuery(snb)); }},
      {"attr", false,
       [&] {
         cudaPointerAttributes a;
         CK(cudaPointerGetAttributes(&a, d));
       }},
  };
  if (rank == 0) std::printf("# 8-byte MPI_Allreduce on device buffers, %d ranks: us per call (slower rank)\n", size);
  if (rank == 0) std::printf("%-12s %8s %8s %8s  %s\n", "variant", "median", "min", "max", "check");
  const std::string only = argc > 2 ? "," + std::string(argv[2]) + "," : "";
  for (const Variant& v : variants) {
    if (!only.empty() && only.find("," + std::string(v.name) + ",") == std::string::npos) continue;
    std::vector<double> trials, launchTrials;
    bool ok = true;
    for (int t = 0; t < 5; ++t) {
      const float mine[2] = {static_cast<float>(rank + 1), 0.5f * static_cast<float>(rank)};
      CK(cudaMemcpy(d, mine, sizeof mine, cudaMemcpyHostToDevice));
      v.call();  // warm-up, and the one call checked
      if (v.checks) {
        float got[2];
        CK(cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost));
        double want0 = 0, want1 = 0;
        for (int r = 0; r < size; ++r) want0 += r + 1, want1 += 0.5 * r;
        ok = ok && got[0] == static_cast<float>(want0) && got[1] == static_cast<float>(want1);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      launchSeconds = 0;
      launches = 0;
      const double t0 = MPI_Wtime();
      for (int i = 0; i < iters; ++i) v.call();
      double us = (MPI_Wtime() - t0) * 1e6 / iters, worst = 0;
      MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      trials.push_back(worst);
      if (launches > 0) launchTrials.push_back(launchSeconds * 1e6 / static_cast<double>(launches));
    }
    CK(cudaDeviceSynchronize());  // the flag variants leave their kernels' ends unwaited
    int okAll = ok ? 1 : 0, okMin = 0;
    MPI_Allreduce(&okAll, &okMin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    std::sort(trials.begin(), trials.end());
    if (rank == 0)
      std::printf("%-12s %8.2f %8.2f %8.2f  %s\n", v.name, trials[2], trials.front(), trials.back(),
                  v.checks ? (okMin ? "ok" : "WRONG") : "-");
    if (!launchTrials.empty() && rank == 0) {  // this rank's own, not the slower rank's
      std::sort(launchTrials.begin(), launchTrials.end());
      std::printf("%-12s %8.2f %8.2f %8.2f  -\n", (std::string(v.name) + "_launch").c_str(),
                  launchTrials[launchTrials.size() / 2], launchTrials.front(), launchTrials.back());
    }
  }
  cudaStreamDestroy(s);
  cudaStreamDestroy(snb);
  cudaFree(d);
  cudaFreeHost(h);
  cudaFreeHost(flags);
  MPI_Finalize();
  return 0;
}
