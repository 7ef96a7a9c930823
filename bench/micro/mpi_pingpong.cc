// Microbenchmark: MPI point-to-point ping-pong between ranks 0 and 1 (others wait), one
// way time per message as OSU's osu_latency reports it, on host or device buffers. Run
// with and without LD_PRELOAD=libmccl_mpi.so: on host buffers the difference is what the
// preload's look at each buffer costs; on device buffers (preload only, on an MPI that
// cannot take them) what its host copies cost.
//
//   micro_mpi_pingpong host|device [max bytes 4194304] [iterations 2000]
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const bool device = argc > 1 && std::string(argv[1]) == "device";
  const size_t maxBytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (size_t{4} << 20);
  const int iters = argc > 3 ? std::atoi(argv[3]) : 2000;
  void* buf = nullptr;
  if (device) {
    int g = 0;
    cudaGetDeviceCount(&g);
    cudaSetDevice(g > 0 ? r % g : 0);
    if (cudaMalloc(&buf, maxBytes) != cudaSuccess) {
      std::fprintf(stderr, "cudaMalloc failed\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    cudaMemset(buf, r, maxBytes);
    cudaDeviceSynchronize();
  } else {
    buf = std::malloc(maxBytes);
    std::memset(buf, r, maxBytes);
  }
  if (r == 0) std::printf("# %s buffers, %d ranks, one-way latency (us), median of 5 trials\n%10s %12s\n",
                          device ? "device" : "host", n, "bytes", "us");
  for (size_t bytes = 8; bytes <= maxBytes; bytes *= 8) {
    const int count = static_cast<int>(bytes);
    const int its = bytes >= (size_t{1} << 20) ? std::max(iters / 20, 20) : iters;
    std::vector<double> trials;
    for (int t = 0; t < 5; ++t) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < its && r < 2; ++i) {
        if (r == 0) {
          MPI_Send(buf, count, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
          MPI_Recv(buf, count, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, count, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, count, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
      }
      trials.push_back((MPI_Wtime() - t0) * 1e6 / (2.0 * its));
    }
    std::sort(trials.begin(), trials.end());
    if (r == 0) std::printf("%10zu %12.2f\n", bytes, trials[2]);
  }
  if (device) cudaFree(buf);
  else std::free(buf);
  MPI_Finalize();
  return 0;
}
