// Microbenchmark: MPI point-to-point ping-pong between ranks 0 and 1 (others wait), one
// way time per message as OSU's osu_latency reports it, on host or device buffers. Run
// with and without LD_PRELOAD=libmccl_mpi.so: on host buffers the difference is what the
// preload's look at each buffer costs; on device buffers (preload only, on an MPI that
// cannot take them) what its host copies cost. device0: rank 0's buffer on its GPU, rank 1's
// in host memory (one process's copies, with no other process on that GPU). copies: no
// MPI traffic; rank 0 times the copies the staging makes (cudaMemcpy each way between a
// device buffer and pageable or pinned host memory, the upload from pageable memory
// followed by the legacy stream's synchronisation as in mpi_stage.cc).
//
//   micro_mpi_pingpong host|device|device0|copies [max bytes 4194304] [iterations 2000]
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {
// The median of a trial's times.
double median5(const std::vector<double>& t) {
  std::vector<double> v = t;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Microseconds a copy of each kind, 8 bytes to maxBytes.
void copies(size_t maxBytes, int iters) {
  void *dev = nullptr, *pinned = nullptr;
  cudaSetDevice(0);
  if (cudaMalloc(&dev, maxBytes) != cudaSuccess || cudaMallocHost(&pinned, maxBytes) != cudaSuccess) {
    std::fprintf(stderr, "allocation failed\n");
    return;
  }
  std::vector<char> pageable(maxBytes, 1);
  std::printf("# cudaMemcpy between a device buffer and host memory, us a copy, median of 5 trials\n"
              "%10s %14s %14s %14s %14s\n", "bytes", "d2h pageable", "d2h pinned", "h2d pageable+sync", "h2d pinned");
  for (size_t bytes = 8; bytes <= maxBytes; bytes *= 8) {
    const int its = bytes >= (size_t{1} << 20) ? std::max(iters / 20, 20) : iters;
    double us[4];
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<double> trials;
      for (int t = 0; t < 5; ++t) {
        const double t0 = MPI_Wtime();
        for (int i = 0; i < its; ++i) {
          switch (kind) {
            case 0: cudaMemcpy(pageable.data(), dev, bytes, cudaMemcpyDeviceToHost); break;
            case 1: cudaMemcpy(pinned, dev, bytes, cudaMemcpyDeviceToHost); break;
            case 2:
              cudaMemcpy(dev, pageable.data(), bytes, cudaMemcpyHostToDevice);
              cudaStreamSynchronize(cudaStreamLegacy);
              break;
            default: cudaMemcpy(dev, pinned, bytes, cudaMemcpyHostToDevice); break;
          }
        }
        trials.push_back((MPI_Wtime() - t0) * 1e6 / its);
      }
      us[kind] = median5(trials);
    }
    std::printf("%10zu %14.2f %14.2f %14.2f %14.2f\n", bytes, us[0], us[1], us[2], us[3]);
  }
  cudaFree(dev);
  cudaFreeHost(pinned);
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const std::string mode = argc > 1 ? argv[1] : "host";
  const bool device = mode == "device" || (mode == "device0" && r == 0);
  const size_t maxBytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (size_t{4} << 20);
  const int iters = argc > 3 ? std::atoi(argv[3]) : 2000;
  if (mode == "copies") {
    if (r == 0) copies(maxBytes, iters);
    MPI_Finalize();
    return 0;
  }
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
                          mode.c_str(), n, "bytes", "us");
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
    if (r == 0) std::printf("%10zu %12.2f\n", bytes, median5(trials));
  }
  if (device) cudaFree(buf);
  else std::free(buf);
  MPI_Finalize();
  return 0;
}
