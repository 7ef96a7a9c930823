// Microbenchmark: a small AllReduce then a wait for it, call after call, as libmccl_mpi's
// MPI_Allreduce on device buffers does (launch on a blocking stream, return when done), with
// every rank a thread of this process (ranks may share one GPU: MCCL_SHARED_GPU is set), by
// how the thread learns the kernel is done:
//   stream   mcclStreamSynchronize's wait (cudaStreamQuery)
//   word     the kernel raises a word in host memory (core/completion.h), the thread spins
//   sync     cudaStreamSynchronize
// Each row: the slower rank's mean over the calls, median of 5 trials; each trial's last
// result is taken by a copy on a stream that waits for nothing else and checked against the
// sum of the ranks' inputs, computed here.
//
//   micro_word_wait [ranks 2] [calls 2000] [floats 2,256,16384]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "../bench_util.h"
#include "../tests/common/thread_barrier.h"
#include "bootstrap_mpi/mpi_map.h"
#include "core/completion.h"
#include "nccl.h"

namespace {

double nowUs() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 2000;
  std::vector<int> counts = {2, 256, 16384};
  if (argc > 3) {
    counts.clear();
    for (std::string s = argv[3]; !s.empty();) {
      const size_t c = s.find(',');
      counts.push_back(std::atoi(s.substr(0, c).c_str()));
      s = c == std::string::npos ? "" : s.substr(c + 1);
    }
  }
  setenv("MCCL_SHARED_GPU", "1", 1);
  int ngpu = 0;
  CHECK(cudaGetDeviceCount(&ngpu) == cudaSuccess && ngpu > 0, "no GPU");
  std::vector<int> devs(n);
  for (int r = 0; r < n; ++r) devs[r] = r % ngpu;
  std::vector<ncclComm_t> comms(n);
  CHECK(ncclCommInitAll(comms.data(), n, devs.data()) == ncclSuccess, "ncclCommInitAll: %s", ncclGetLastError(nullptr));
  const int most = *std::max_element(counts.begin(), counts.end());
  struct Rank {
    cudaStream_t s, side;
    float *d, *seen;
  };
  std::vector<Rank> rk(n);
  for (int r = 0; r < n; ++r) {
    cudaSetDevice(devs[r]);
    CHECK(cudaStreamCreateWithFlags(&rk[r].s, cudaStreamDefault) == cudaSuccess, "stream");  // as the preload's
    CHECK(cudaStreamCreateWithFlags(&rk[r].side, cudaStreamNonBlocking) == cudaSuccess, "stream");
    CHECK(cudaMalloc(&rk[r].d, sizeof(float) * most) == cudaSuccess, "cudaMalloc");
    CHECK(cudaMalloc(&rk[r].seen, sizeof(float) * most) == cudaSuccess, "cudaMalloc");
  }
  std::printf("# micro_word_wait: %d ranks on %d GPU(s), AllReduce (float sum, in place) then a wait, %d calls; "
              "us per call, slower rank, median of 5\n",
              n, ngpu, calls);
  std::printf("%-8s %8s %8s %8s %8s  %s\n", "wait", "bytes", "median", "min", "max", "check");
  mccl_test::ThreadBarrier bar(n);
  const char* names[] = {"stream", "word", "sync"};
  for (int count : counts) {
    for (int v = 0; v < 3; ++v) {
      std::vector<double> us(static_cast<size_t>(5) * n);
      std::vector<int> ok(n, 1);
      std::vector<std::thread> th;
      for (int r = 0; r < n; ++r) {
        th.emplace_back([&, r] {
          cudaSetDevice(devs[r]);
          Rank& k = rk[r];
          auto one = [&] {
            if (v == 1) {
              mccl::CompletionWord cw;
              {
                mccl::CompletionScope armed(&cw);
                CHECK(ncclAllReduce(k.d, k.d, count, ncclFloat, ncclSum, comms[r], k.s) == ncclSuccess, "allreduce");
              }
              CHECK(mccl::waitStream(k.s, MPI_COMM_NULL, &cw) == ncclSuccess, "wait");
            } else {
              CHECK(ncclAllReduce(k.d, k.d, count, ncclFloat, ncclSum, comms[r], k.s) == ncclSuccess, "allreduce");
              if (v == 0) CHECK(mccl::waitStream(k.s, MPI_COMM_NULL, nullptr) == ncclSuccess, "wait");
              else CHECK(cudaStreamSynchronize(k.s) == cudaSuccess, "sync");
            }
          };
          std::vector<float> h(count), got(count);
          for (int t = 0; t < 5; ++t) {
            // Values that stay exact: a call multiplies by n; the last call checked alone.
            for (int i = 0; i < count; ++i) h[i] = static_cast<float>(r + 1 + i % 7);
            cudaMemcpy(k.d, h.data(), sizeof(float) * count, cudaMemcpyHostToDevice);
            bar.wait();
            one();
            cudaMemcpyAsync(k.seen, k.d, sizeof(float) * count, cudaMemcpyDeviceToDevice, k.side);
            cudaStreamSynchronize(k.side);
            cudaMemcpy(got.data(), k.seen, sizeof(float) * count, cudaMemcpyDeviceToHost);
            for (int i = 0; i < count; ++i) {
              double want = 0;
              for (int q = 0; q < n; ++q) want += q + 1 + i % 7;
              if (static_cast<double>(got[i]) != want) ok[r] = 0;
            }
            for (int i = 0; i < count; ++i) h[i] = 0;  // timed calls: zeros stay zeros
            cudaMemcpy(k.d, h.data(), sizeof(float) * count, cudaMemcpyHostToDevice);
            bar.wait();
            const double t0 = nowUs();
            for (int c = 0; c < calls; ++c) one();
            us[static_cast<size_t>(t) * n + r] = (nowUs() - t0) / calls;
            bar.wait();
          }
        });
      }
      for (std::thread& t : th) t.join();
      std::vector<double> worst(5);
      for (int t = 0; t < 5; ++t) worst[t] = *std::max_element(us.begin() + t * n, us.begin() + (t + 1) * n);
      std::sort(worst.begin(), worst.end());
      const bool good = std::all_of(ok.begin(), ok.end(), [](int x) { return x != 0; });
      std::printf("%-8s %8zu %8.2f %8.2f %8.2f  %s\n", names[v], sizeof(float) * count, worst[2], worst[0], worst[4],
                  good ? "ok" : "WRONG");
      std::fflush(stdout);
    }
  }
  for (int r = 0; r < n; ++r) ncclCommDestroy(comms[r]);
  return 0;
}
