// Soak: a long random sequence of operations (seeded, the same on every rank) over two
// communicators of the world (one made from MPI_COMM_WORLD, one from a unique id) and a
// split child, every result checked against a double-precision host reference. Memory
// must stay flat between the end of the warm-up (a tenth of the run, when every
// connection exists) and the end: the same number of memory mappings (no leaked segment,
// mapping or thread) and at most MCCL_SOAK_HEAP_KB (default 512) more heap in use. The
// resident size is reported but not limited: it also counts pages of the transports'
// shared-memory segments that are first touched late in the run. Under the ASan build,
// LSan checks for leaks at exit.
//
//   mpirun -np 4 mccl_soak [ops=10000] [seed=2026]
#include <malloc.h>
#include <mpi.h>

// Under AddressSanitizer the heap is ASan's (mallinfo2 sees none of it, and its allocator
// and quarantine map memory as the run goes): the flat-memory limits are checked in the
// plain build, and LSan checks leaks here.
#if defined(__SANITIZE_ADDRESS__)
#define MCCL_SOAK_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MCCL_SOAK_UNDER_ASAN 1
#endif
#endif
#ifndef MCCL_SOAK_UNDER_ASAN
#define MCCL_SOAK_UNDER_ASAN 0
#endif
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "coll_check.h"
#include "mccl.h"
#include "mccl_mpi.h"

using namespace mccl_test;

namespace {

size_t heapInUse() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

int mappings() {
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return 0;
  int n = 0;
  for (int ch; (ch = std::fgetc(f)) != EOF;) n += ch == '\n';
  std::fclose(f);
  return n;
}

double residentMiB() {
  malloc_trim(0);  // what the allocator keeps cached is not a leak
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

#define CHECK_NCCL(call)                                                                   \
  do {                                                                                     \
    ncclResult_t r_ = (call);                                                              \
    if (r_ != ncclSuccess) {                                                               \
      std::fprintf(stderr, "%s failed: %s (%s)\n", #call, ncclGetErrorString(r_),          \
                   ncclGetLastError(nullptr));                                             \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                        \
    }                                                                                      \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long ops = argc > 1 ? std::atol(argv[1]) : 10000;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::atol(argv[2])) : 2026u;
  const char* heapEnv = std::getenv("MCCL_SOAK_HEAP_KB");
  const double heapLimitKiB = heapEnv ? std::atof(heapEnv) : 512.0;

  // Communicator A rides on MPI; B comes from a unique id (TCP bootstrap); C is A split
  // into even and odd ranks.
  ncclComm_t a = nullptr, b = nullptr, c = nullptr;
  CHECK_NCCL(mcclCommInitFromMpi(&a, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr));
  ncclUniqueId id;
  if (rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  CHECK_NCCL(ncclCommInitRank(&b, size, id, rank));
  CHECK_NCCL(ncclCommSplit(a, rank % 2, rank, &c, nullptr));
  int cRank = 0, cSize = 1;
  ncclCommUserRank(c, &cRank);
  ncclCommCount(c, &cSize);

  std::mt19937_64 rng(seed);  // identical on every rank: all ranks issue the same sequence
  const char* patterns[] = {"ring", "alltoall", "neighbor", "scatter", "gather"};
  const long warmup = ops / 10;
  double rssAfterWarmup = 0;
  size_t heapAfterWarmup = 0;
  int mapsAfterWarmup = 0;
  long failures = 0;
  for (long i = 0; i < ops; ++i) {
    if (i == warmup) {
      rssAfterWarmup = residentMiB();
      heapAfterWarmup = heapInUse();
      mapsAfterWarmup = mappings();
      if (rank == 0 && std::getenv("MCCL_SOAK_SMAPS")) {
        std::string cmd = "cp /proc/" + std::to_string(getpid()) + "/smaps /tmp/soak_smaps_warm";
        if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "smaps copy failed\n");
      }
    }
    int which = static_cast<int>(rng() % 3);
    ncclComm_t comm = which == 0 ? a : which == 1 ? b : c;
    int r = which == 2 ? cRank : rank, n = which == 2 ? cSize : size;
    // Sizes from 0 to 64 Ki elements, most of them small.
    size_t count = static_cast<size_t>(rng() % 17 == 0 ? rng() % 65536 : rng() % 2048);
    std::string err, what;
    if (rng() % 8 == 0) {
      const char* pattern = patterns[rng() % 5];
      ncclDataType_t type = kAllTypes[rng() % 12];
      int root = static_cast<int>(rng() % static_cast<uint64_t>(n));
      what = std::string("p2p ") + pattern;
      err = runP2pPattern(comm, r, n, pattern, count, type, root, seed + static_cast<uint64_t>(i));
    } else {
      CollCase cc;
      cc.kind = static_cast<CollKind>(rng() % 5);
      cc.type = kAllTypes[rng() % 12];
      cc.op = kBuiltinOps[rng() % 5];
      cc.preMulSum = rng() % 10 == 0;
      cc.count = count;
      cc.root = static_cast<int>(rng() % static_cast<uint64_t>(n));
      cc.inPlace = rng() % 2 == 0;
      cc.seed = seed + static_cast<uint64_t>(i);
      what = cc.describe();
      err = runCollCase(comm, r, n, cc);
    }
    if (!err.empty()) {
      if (++failures <= 5) std::fprintf(stderr, "rank %d op %ld (%s): %s\n", rank, i, what.c_str(), err.c_str());
    }
    if (rank == 0 && (i + 1) % 2000 == 0)
      std::printf("soak: %ld ops, rss %.1f MiB, heap in use %.2f MiB\n", i + 1, residentMiB(),
                  static_cast<double>(mallinfo2().uordblks) / (1024.0 * 1024.0));
  }
  double rssEnd = residentMiB();
  size_t heapEnd = heapInUse();
  int mapsEnd = mappings();
  if (rank == 0 && std::getenv("MCCL_SOAK_SMAPS")) {
    std::string cmd = "cp /proc/" + std::to_string(getpid()) + "/smaps /tmp/soak_smaps_end";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "smaps copy failed\n");
  }
  CHECK_NCCL(ncclCommDestroy(c));
  CHECK_NCCL(ncclCommDestroy(b));
  CHECK_NCCL(ncclCommDestroy(a));

  long allFailures = 0;
  MPI_Allreduce(&failures, &allFailures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  double growth[3] = {rssEnd - rssAfterWarmup,
                      (static_cast<double>(heapEnd) - static_cast<double>(heapAfterWarmup)) / 1024.0,
                      static_cast<double>(mapsEnd - mapsAfterWarmup)};
  double worst[3];
  MPI_Allreduce(growth, worst, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const bool memoryChecked = !MCCL_SOAK_UNDER_ASAN;
  bool ok = allFailures == 0 && (!memoryChecked || (worst[1] <= heapLimitKiB && worst[2] <= 0));
  if (rank == 0 && !memoryChecked)
    std::printf("soak: ASan build: memory limits not checked here (checked in the plain build; LSan checks "
                "leaks at exit)\n");
  if (rank == 0)
    std::printf("soak: %ld ops on %d ranks (seed %u): %ld wrong results; after warm-up, worst rank: heap in use "
                "%+.1f KiB (limit %.0f), mappings %+.0f (limit 0), resident %+.2f MiB: %s\n",
                ops, size, seed, allFailures, worst[1], heapLimitKiB, worst[2], worst[0], ok ? "PASS" : "FAIL");
  MPI_Finalize();
  return ok ? 0 : 1;
}
