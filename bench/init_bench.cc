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
//   mpirun -np 8 --oversubscribe mccl-init-bench [reps (5)]
// MCCL_PROFILE_INIT=1 adds one line per rank and call with its phases (stderr).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "mccl.h"
#include "mccl_mpi.h"
#include "nccl.h"

namespace {

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
  int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  if (reps < 1) reps = 1;
  const char* names[] = {"dup", "fromMpi", "uniqueId", "split", "first", "second", "destroy3"};
  constexpr int kCols = 7;
  std::vector<std::vector<double>> t(kCols);
  for (int rep = 0; rep < reps; ++rep) {
    MPI_Comm dup;
    t[0].push_back(slowest([&] { MPI_Comm_dup(MPI_COMM_WORLD, &dup); }));
    MPI_Comm_free(&dup);
    ncclComm_t a = nullptr, b = nullptr, c = nullptr;
    t[1].push_back(slowest([&] { CHECK_NCCL(mcclCommInitFromMpi(&a, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr)); }));
    ncclUniqueId id;
    if (rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    t[2].push_back(slowest([&] { CHECK_NCCL(ncclCommInitRank(&b, size, id, rank)); }));
    t[3].push_back(slowest([&] { CHECK_NCCL(ncclCommSplit(a, 0, rank, &c, nullptr)); }));
    double x = rank, y = 0;
    t[4].push_back(slowest([&] { CHECK_NCCL(ncclAllReduce(&x, &y, 1, ncclDouble, ncclSum, a, nullptr)); }));
    t[5].push_back(slowest([&] { CHECK_NCCL(ncclAllReduce(&x, &y, 1, ncclDouble, ncclSum, a, nullptr)); }));
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
    std::printf("# mccl-init-bench np %d reps %d (ms, slowest rank; min / median / first rep)\n", size, reps);
    for (int k = 0; k < kCols; ++k) {
      std::vector<double> v = t[k];
      std::sort(v.begin(), v.end());
      std::printf("%-9s %9.3f %9.3f %9.3f\n", names[k], v.front(), v[v.size() / 2], t[k].front());
    }
  }
  MPI_Finalize();
  return 0;
}
