// Throwaway: where one small host Send/Recv group's time goes (rdtsc stamps). The library
// under test is a copy of the tree with instrument.py applied (it defines mcclProf[] and
// stamps into it); rank 0 prints, per group, the means of the lowest 95 % of each piece.
//   python3 instrument.py TREE && make -C TREE/build mccl
//   mpicxx -O2 -std=c++17 -I include stamps.cc -o stamps -L TREE/build/src -lmccl -ldl
//   mpirun --bind-to core -np 2 -x MCCL_DEVICE=host ./stamps 8 300000
#include <mpi.h>
#include <x86intrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "nccl.h"
#include "mccl_mpi.h"
#include <dlfcn.h>
static unsigned long long* mcclProf;
#include <algorithm>
// mean of the lowest 95 % (drops preemptions; the TSC ticks in steps of 26 cycles here)
static double med(std::vector<double> x) { std::sort(x.begin(), x.end()); size_t k = x.size() * 95 / 100; double s = 0; for (size_t i = 0; i < k; ++i) s += x[i]; return s / k; }
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  mcclProf = (unsigned long long*)dlsym(RTLD_DEFAULT, "mcclProf");
  if (!mcclProf) { printf("no mcclProf\n"); return 1; }
  ncclComm_t comm;
  mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr);
  size_t bytes = argc > 1 ? atoi(argv[1]) : 8;
  int iters = argc > 2 ? atoi(argv[2]) : 200000;
  std::vector<char> s(bytes + 64), r(bytes + 64);
  int peer = rank ^ 1;
  auto one = [&] {
    ncclGroupStart();
    ncclSend(s.data(), bytes, ncclChar, peer, comm, nullptr);
    ncclRecv(r.data(), bytes, ncclChar, peer, comm, nullptr);
    ncclGroupEnd();
  };
  for (int i = 0; i < 20000; ++i) one();
  // tsc rate
  auto c0 = std::chrono::steady_clock::now(); unsigned long long k0 = __rdtsc();
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<std::vector<double>> v(10);
  for (auto& x : v) { x.reserve(iters); x.assign(iters, 0.0); x.clear(); }
  unsigned long long prevEnd = 0, prevRecv = 0;
  for (int i = 0; i < iters; ++i) {
    unsigned long long t0 = __rdtsc();
    ncclGroupStart();
    unsigned long long t1 = __rdtsc();
    ncclSend(s.data(), bytes, ncclChar, peer, comm, nullptr);
    unsigned long long t2 = __rdtsc();
    ncclRecv(r.data(), bytes, ncclChar, peer, comm, nullptr);
    unsigned long long t3 = __rdtsc();
    ncclGroupEnd();
    unsigned long long t4 = __rdtsc();
    if (i > 0) {
      v[0].push_back(t0 - prevEnd); // bench loop
      v[1].push_back(t1 - t0); // group start
      v[2].push_back(t2 - t1); // ncclSend
      v[3].push_back(t3 - t2); // ncclRecv
      v[4].push_back(mcclProf[4] - t3); // groupEnd to runGroupAlone
      v[5].push_back(mcclProf[0] - mcclProf[4]); // runGroupAlone to shm runGroup
      v[6].push_back(mcclProf[1] - mcclProf[0]); // runGroup to send published
      v[7].push_back(mcclProf[2] - mcclProf[1]); // send published to recv seen (wait)
      v[8].push_back(t4 - mcclProf[2]); // recv seen to groupEnd return
      v[9].push_back(mcclProf[1] - prevRecv); // critical: prev recv seen -> this send published
    }
    prevEnd = t4; prevRecv = mcclProf[2];
  }
  auto c1 = std::chrono::steady_clock::now(); unsigned long long k1 = __rdtsc();
  double ghz = (k1 - k0) / std::chrono::duration<double, std::nano>(c1 - c0).count();
  double total = std::chrono::duration<double, std::micro>(c1 - c0).count() / iters;
  const char* names[] = {"bench loop", "ncclGroupStart", "ncclSend", "ncclRecv", "groupEnd->runGroupAlone",
                         "runGroupAlone->shm runGroup", "runGroup->send published", "wait for peer's msg",
                         "recv seen->groupEnd return", "CRIT prev recv seen->send published"};
  if (rank == 0) {
    printf("bytes %zu: %.3f us/iter, tsc %.2f GHz, empty polls/iter %.1f, groups >=16 empty polls %.3f, >=256 %.4f\n", bytes, total, ghz,
           (double)mcclProf[5] / (iters + 20000), (double)mcclProf[6] / (iters + 20000), (double)mcclProf[7] / (iters + 20000));
    for (int j = 0; j < 10; ++j) printf("  %-40s %7.1f cyc %6.3f us\n", names[j], med(v[j]), med(v[j]) / ghz / 1e3);
  }
  ncclCommDestroy(comm);
  MPI_Finalize();
}
