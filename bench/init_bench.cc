// mccl-init-bench: what it costs to get a communicator and to let it go, under mpirun.
// Each repetition times, until the slowest rank returns (ms):
//   dup        MPI_Comm_dup of MPI_COMM_WORLD (the yardstick)
//   fromMpi    mcclCommInitFromMpi(MPI_COMM_WORLD)
//   uniqueId   ncclCommInitRank with a unique id from rank 0 (broadcast outside the timing)
//   split      ncclCommSplit of the fromMpi communicator, one color (all ranks)
//   first      the first 8-byte AllReduce on the fromMpi communicator (its connections)
//   second     the second one
//   destroy3   ncclCommDestroy of the three communicators
// and prints, per column, the minimum and the median over the repetitions (the machine
// may be shared: the minimum is the figure to compare; ratios within one run), and the
// first repetition alone (cold: the first communicator of the process pays UCX's setup).
//
//   mpirun -np 8 --oversubscribe mccl-init-bench [reps (5)] [--gpu] [--id-first]
// --gpu: GPU communicators (the node-local rank's GPU), the AllReduces on device memory.
// --id-first: the unique-id communicator is made before the fromMpi one in each repetition.
// nccl-init-bench is the same source against NVIDIA's NCCL (GPU only, no fromMpi column),
// so the two libraries are timed by one harness.
// MCCL_PROFILE_INIT=1 adds one line per rank and call with its phases (stderr).
#include <mpi.h>
#ifdef MCCL_PERF_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nccl.h"
#ifndef MCCL_PERF_NCCL
#include "mccl.h"
#include "mccl_mpi.h"
#endif

namespace {

// nccl.h declares cudaStream_t with or without the CUDA headers.
using cudaStreamLike = cudaStream_t;

#define CHECK_NCCL(call)                                                                        \
  do {                                                                                          \
    ncclResult_t r_ = (call);                                                                   \
    if (r_ != ncclSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s (%s)\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_), \
                   ncclGetLastError(nullptr));                                                  \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                             \
    }                                                                                           \
  } while (0)

double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs f on every rank after a barrier; returns the slowest rank's time (on every rank).
template <typename F>
double slowest(F f) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = nowMs();
  f();
  double mine = nowMs() - t0, worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int reps = 5;
  bool gpu = false, idFirst = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--gpu") gpu = true;
    else if (std::string(argv[i]) == "--id-first") idFirst = true;  // the unique-id comm made first
    else reps = std::max(1, std::atoi(argv[i]));
  }
#ifdef MCCL_PERF_NCCL
  gpu = true;
  const char* lib = "nccl";
#else
  const char* lib = "mccl";
#endif
  double* dx = nullptr;  // GPU: x and y in device memory
  cudaStreamLike stream = nullptr;
  if (gpu) {
#ifdef MCCL_PERF_CUDA
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    int localRank = 0, ndev = 0;
    MPI_Comm_rank(local, &localRank);
    MPI_Comm_free(&local);
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
      std::fprintf(stderr, "--gpu: no GPU\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    cudaSetDevice(localRank % ndev);
    cudaMalloc(&dx, 2 * sizeof(double));
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
#else
    std::fprintf(stderr, "--gpu: built without CUDA\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  }
  const char* names[] = {"dup", "fromMpi", "uniqueId", "split", "first", "second", "destroy3"};
  constexpr int kCols = 7;
  std::vector<std::vector<double>> t(kCols);
  for (int rep = 0; rep < reps; ++rep) {
    MPI_Comm dup;
    t[0].push_back(slowest([&] { MPI_Comm_dup(MPI_COMM_WORLD, &dup); }));
    MPI_Comm_free(&dup);
    ncclComm_t a = nullptr, b = nullptr, c = nullptr;
    ncclUniqueId id;
    if (rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
#ifdef MCCL_PERF_NCCL
    // No communicator from an MPI_Comm in NCCL: a, the one split and used, from the id.
    t[1].push_back(0);
    t[2].push_back(slowest([&] { CHECK_NCCL(ncclCommInitRank(&a, size, id, rank)); }));
    if (rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    CHECK_NCCL(ncclCommInitRank(&b, size, id, rank));
#else
    // Made first in a round, a communicator pays for memory the previous round's destroy gave
    // back (a GPU's first allocations): --id-first swaps the two so both orders are measured.
    if (idFirst) t[2].push_back(slowest([&] { CHECK_NCCL(ncclCommInitRank(&b, size, id, rank)); }));
    t[1].push_back(slowest([&] {
      CHECK_NCCL(mcclCommInitFromMpi(&a, MPI_COMM_WORLD, gpu ? MCCL_DEVICE_AUTO : MCCL_DEVICE_HOST, nullptr));
    }));
    if (!idFirst) t[2].push_back(slowest([&] { CHECK_NCCL(ncclCommInitRank(&b, size, id, rank)); }));
#endif
    t[3].push_back(slowest([&] { CHECK_NCCL(ncclCommSplit(a, 0, rank, &c, nullptr)); }));
    double x = rank, y = 0;
    void* in = &x;
    void* out = &y;
#ifdef MCCL_PERF_CUDA
    if (gpu) {
      cudaMemcpy(dx, &x, sizeof x, cudaMemcpyHostToDevice);
      in = dx;
      out = dx + 1;
    }
#endif
    auto allReduce = [&] {
      CHECK_NCCL(ncclAllReduce(in, out, 1, ncclDouble, ncclSum, a, stream));
#ifdef MCCL_PERF_CUDA
      if (gpu) cudaStreamSynchronize(stream);
#endif
    };
    t[4].push_back(slowest(allReduce));
    t[5].push_back(slowest(allReduce));
#ifdef MCCL_PERF_CUDA
    if (gpu) cudaMemcpy(&y, out, sizeof y, cudaMemcpyDeviceToHost);
#endif
    if (y != static_cast<double>(size) * (size - 1) / 2) {
      std::fprintf(stderr, "rank %d: allreduce gave %g\n", rank, y);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    t[6].push_back(slowest([&] {
      CHECK_NCCL(ncclCommDestroy(c));
      CHECK_NCCL(ncclCommDestroy(b));
      CHECK_NCCL(ncclCommDestroy(a));
    }));
  }
  if (rank == 0) {
    std::printf("# %s-init-bench np %d reps %d, %s communicators%s (ms, slowest rank; min / median / first rep)\n",
                lib, size, reps, gpu ? "GPU" : "host", idFirst ? ", unique id first" : "");
    for (int k = 0; k < kCols; ++k) {
      std::vector<double> v = t[k];
      std::sort(v.begin(), v.end());
      std::printf("%-9s %9.3f %9.3f %9.3f\n", names[k], v.front(), v[v.size() / 2], t[k].front());
    }
  }
  MPI_Finalize();
  return 0;
}
