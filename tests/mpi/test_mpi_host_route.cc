// Host communicators made from an MPI_Comm hand small collectives to MPI's own
// (MCCL_HOST_MPI_MAX_BYTES, host_engine/mpi_coll.*): the route's results against the
// independent reference at the threshold's edges, which operations take it, groups that mix
// it with the engine, the same results as the engine, and a silent peer still ending in
// ncclRemoteError.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "coll_check.h"
#include "core/types.h"
#include "host_paths.h"
#include "core/knobs.h"
#include "host_engine/mpi_coll.h"
#include "mccl_mpi.h"
#include "mpi_util.h"
#include "test_util.h"

using namespace mccl_test;

namespace {

constexpr size_t kMax = 1024;  // MCCL_HOST_MPI_MAX_BYTES of the communicators below

ncclComm_t worldComm(size_t maxBytes) { return hostWorldComm(0, maxBytes); }  // shared memory off

size_t typeSize(ncclDataType_t t) { return mccl::datatypeSize(t); }

// Runs c and returns the number of operations it put on MPI.
uint64_t runCounted(ncclComm_t comm, const CollCase& c, std::string* errs) {
  return runCountedCase(comm, c, mccl::hostMpiCollCount, errs);
}

}  // namespace

TEST(HostMpiRoute, ThresholdEdgesAgainstReference) {
  const int n = worldSize();
  ncclComm_t comm = worldComm(kMax);
  std::string errs;
  // AlltoAll, Gather and Scatter whole, as bytes (MPI_Ialltoall, MPI_Igather, MPI_Iscatter).
  const CollKind kinds[] = {CollKind::AllReduce,     CollKind::Broadcast, CollKind::Reduce,
                            CollKind::AllGather,     CollKind::ReduceScatter, CollKind::AlltoAll,
                            CollKind::Gather,        CollKind::Scatter};
  for (CollKind k : kinds)
    for (ncclDataType_t t : {ncclFloat32, ncclInt8, ncclUint64, ncclBfloat16})
      for (bool inPlace : {false, true}) {
        const bool copies = k == CollKind::AlltoAll || k == CollKind::Gather || k == CollKind::Scatter;
        if (t == ncclBfloat16 && !copies) continue;  // MPI has no bfloat16 to reduce
        // The largest count on MPI (the larger buffer holds at most kMax bytes) and one more.
        bool blocks = k == CollKind::AllGather || k == CollKind::ReduceScatter || copies;
        size_t edge = kMax / typeSize(t) / (blocks ? n : 1);
        for (size_t count : {edge, edge + 1}) {
          CollCase c;
          c.kind = k;
          c.type = t;
          c.op = t == ncclInt8 ? ncclMax : ncclSum;
          c.count = count;
          c.root = n - 1;
          c.inPlace = inPlace;
          c.seed = 7 + count;
          uint64_t onMpi = runCounted(comm, c, &errs);
          // (an AlltoAll in place on one rank moves nothing)
          const bool none = k == CollKind::AlltoAll && inPlace && n == 1;
          EXPECT_EQ(onMpi, count == edge && !none ? 1u : 0u) << c.describe();
        }
      }
  // Every operator MPI has on every type MPI has; count 0 and the rest stay on the engine.
  for (ncclDataType_t t : kAllTypes)
    for (ncclRedOp_t op : kBuiltinOps)
      for (bool preMul : {false, true}) {
        CollCase c;
        c.type = t;
        c.op = op;
        c.preMulSum = preMul;
        c.count = 5;
        c.inPlace = op == ncclProd;
        bool mpiType = t != ncclFloat16 && t != ncclBfloat16 && t != ncclFloat8e4m3 && t != ncclFloat8e5m2;
        uint64_t onMpi = runCounted(comm, c, &errs);
        EXPECT_EQ(onMpi, mpiType && op != ncclAvg && !preMul ? 1u : 0u) << c.describe();
      }
  CollCase zero;
  zero.count = 0;
  EXPECT_EQ(runCounted(comm, zero, &errs), 0u);
  EXPECT_TRUE(errs.empty()) << errs;
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(HostMpiRoute, GroupMixesRouteAndEngine) {
  const int n = worldSize(), r = worldRank();
  ncclComm_t comm = worldComm(kMax);
  std::vector<CollCase> cases(9);
  cases[0].count = 3;                                    // MPI
  cases[1].count = kMax / 4 + 1;                         // engine: one element over
  cases[2].kind = CollKind::AllGather, cases[2].count = 2, cases[2].inPlace = true;  // MPI
  cases[3].type = ncclBfloat16, cases[3].count = 3;      // engine: MPI has no bfloat16
  cases[4].kind = CollKind::ReduceScatter, cases[4].count = 2, cases[4].inPlace = true, cases[4].op = ncclMin;  // MPI
  cases[5].kind = CollKind::AlltoAll, cases[5].type = ncclBfloat16, cases[5].count = 3, cases[5].inPlace = true;  // MPI
  cases[6].kind = CollKind::Gather, cases[6].count = 5, cases[6].root = n - 1, cases[6].inPlace = true;           // MPI
  cases[7].kind = CollKind::Scatter, cases[7].count = kMax / 4 / n + 1;  // engine: its Sends and Recvs
  cases[8].kind = CollKind::Scatter, cases[8].type = ncclInt8, cases[8].count = 7, cases[8].root = n / 2;  // MPI
  for (size_t i = 0; i < cases.size(); ++i) cases[i].seed = 100 + i;
  std::vector<std::unique_ptr<PreparedCase>> prepared;
  for (const CollCase& c : cases) prepared.emplace_back(new PreparedCase(comm, r, n, c));
  uint64_t before = mccl::hostMpiCollCount();
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (auto& p : prepared) EXPECT_EQ(p->launch(), ncclSuccess);
  ncclResult_t res = ncclGroupEnd();
  // (an AlltoAll in place on one rank moves nothing)
  EXPECT_EQ(mccl::hostMpiCollCount() - before, n == 1 ? 5u : 6u);
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(prepared[i]->check(res), "") << cases[i].describe();
  prepared.clear();
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(HostMpiRoute, SameResultsAsTheEngine) {
  // Exactly representable inputs (small integers, halves), so any order of the reduction
  // gives the same bits: the two paths must agree bit for bit.
  const int n = worldSize(), r = worldRank();
  ncclComm_t viaMpi = worldComm(kMax), viaEngine = worldComm(0);
  uint64_t before = mccl::hostMpiCollCount();
  int ran = 0;
  EXPECT_EQ(compareCommsBitwise(viaMpi, viaEngine, r, n,
                                {ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64, ncclFloat32, ncclFloat64},
                                &ran),
            "");
  // viaMpi ran every one on MPI, viaEngine none.
  EXPECT_EQ(mccl::hostMpiCollCount() - before, static_cast<uint64_t>(ran));
  EXPECT_EQ(ncclCommDestroy(viaMpi), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(viaEngine), ncclSuccess);
}

TEST(HostMpiRoute, SilentPeerIsARemoteError) {
  // Rank 0 enters a routed AllReduce that the others never call: it must come back with
  // ncclRemoteError (MCCL_TIMEOUT, or the watchdog when a peer's abort closes its
  // liveness connection), and abort must then return.
  const int n = worldSize(), r = worldRank();
  if (n < 2) GTEST_SKIP() << "needs two ranks";
  ncclComm_t comm = worldComm(kMax);
  setenv("MCCL_TIMEOUT", "1", 1);
  mccl::knobsReload();
  double x = 1, y = 0;
  uint64_t before = mccl::hostMpiCollCount();
  if (r == 0) {
    EXPECT_EQ(ncclAllReduce(&x, &y, 1, ncclFloat64, ncclSum, comm, nullptr), ncclRemoteError);
    EXPECT_EQ(mccl::hostMpiCollCount() - before, 1u);
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(ncclCommGetAsyncError(comm, &async), ncclSuccess);
    EXPECT_EQ(async, ncclRemoteError);
  }
  unsetenv("MCCL_TIMEOUT");
  mccl::knobsReload();
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0 has given up before anyone aborts
  EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
  MPI_Barrier(MPI_COMM_WORLD);
}
