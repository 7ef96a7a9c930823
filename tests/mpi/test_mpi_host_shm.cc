// Host communicators whose ranks share one node run small collectives one-shot in a
// shared-memory segment (MCCL_HOST_SHM_MAX_BYTES, host_engine/shm_coll.*): results against
// the independent reference for every collective, datatype and operator, in and out of
// place, at the edges of the cell's lines, the packed cell and the slot; sequences long enough to reuse
// every cell and slot many times; groups mixing it with the engine; the same bits as the
// engine; and a silent peer still ending in ncclRemoteError.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "coll_check.h"
#include "core/types.h"
#include "host_paths.h"
#include "core/knobs.h"
#include "host_engine/shm_coll.h"
#include "mccl_mpi.h"
#include "mpi_util.h"
#include "test_util.h"

using namespace mccl_test;

namespace {

constexpr size_t kMax = 20480;  // MCCL_HOST_SHM_MAX_BYTES of the communicators below: slots in 8 pieces
constexpr size_t kLines = 168;   // data bytes that travel in the cell's lines with the sequence numbers
constexpr size_t kPacked = 512;  // data bytes that travel contiguous in the packed cell

ncclComm_t worldComm(size_t maxBytes) { return hostWorldComm(maxBytes, 0); }  // MPI route off

size_t typeSize(ncclDataType_t t) { return mccl::datatypeSize(t); }

// Bytes one rank writes into the segment for c.
size_t writtenBytes(const CollCase& c, int n) {
  size_t b = c.count * typeSize(c.type);
  return c.kind == CollKind::ReduceScatter ? b * static_cast<size_t>(n) : b;
}

// Runs c and returns the number of operations it ran in shared memory.
uint64_t runCounted(ncclComm_t comm, const CollCase& c, std::string* errs) {
  return runCountedCase(comm, c, mccl::hostShmCollCount, errs);
}

// Whether the communicators below are on one node: under tests/mpi/fake_nodes.sh the ranks
// are spread over MCCL_RANKS_PER_NODE-sized fake nodes, and shared memory must stay unused.
bool oneNode() {
  if (std::getenv("MCCL_HOST_ID") == nullptr) return true;
  const char* per = std::getenv("MCCL_RANKS_PER_NODE");
  return worldSize() <= (per ? std::atoi(per) : 2);
}

// Operations expected in shared memory: `ops` on one node, none across nodes.
uint64_t onOneNode(uint64_t ops) { return oneNode() ? ops : 0; }

const CollKind kKinds[] = {CollKind::AllReduce, CollKind::Broadcast, CollKind::Reduce, CollKind::AllGather,
                           CollKind::ReduceScatter};

}  // namespace

TEST(HostShm, EveryCollectiveTypeAndOperatorAgainstReference) {
  const int n = worldSize();
  ncclComm_t comm = worldComm(kMax);
  std::string errs;
  uint64_t seed = 1;
  for (CollKind k : kKinds)
    for (ncclDataType_t t : kAllTypes)
      for (ncclRedOp_t op : kBuiltinOps) {
        bool reduces = k == CollKind::AllReduce || k == CollKind::Reduce || k == CollKind::ReduceScatter;
        if (!reduces && op != ncclSum) continue;
        for (bool preMul : {false, true}) {
          if (preMul && (!reduces || op != ncclSum)) continue;
          CollCase c;
          c.kind = k;
          c.type = t;
          c.op = op;
          c.preMulSum = preMul;
          c.scalarOnDevice = preMul && t == ncclFloat64;  // read when the operation runs
          c.count = 3 + (seed % 5);
          c.root = static_cast<int>(seed % static_cast<uint64_t>(n));
          c.inPlace = (seed & 1) != 0;
          c.seed = ++seed;
          EXPECT_EQ(runCounted(comm, c, &errs), onOneNode(1)) << c.describe();
        }
      }
  EXPECT_TRUE(errs.empty()) << errs;
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(HostShm, CellAndSlotEdgesInAndOutOfPlace) {
  const int n = worldSize();
  ncclComm_t comm = worldComm(kMax);
  std::string errs;
  for (CollKind k : kKinds)
    for (ncclDataType_t t : {ncclFloat32, ncclInt8, ncclFloat64, ncclBfloat16})
      for (bool inPlace : {false, true}) {
        const size_t es = typeSize(t), per = k == CollKind::ReduceScatter ? static_cast<size_t>(n) : 1;
        const size_t linesEdge = kLines / es / per, packedEdge = kPacked / es / per, slotEdge = kMax / es / per;
        for (size_t count :
             {size_t{1}, linesEdge, linesEdge + 1, packedEdge, packedEdge + 1, slotEdge / 3 + 1, slotEdge,
              slotEdge + 1}) {
          if (count == 0) continue;
          CollCase c;
          c.kind = k;
          c.type = t;
          c.op = t == ncclInt8 ? ncclMax : ncclSum;
          c.count = count;
          c.root = n - 1;
          c.inPlace = inPlace;
          c.seed = 11 + count;
          uint64_t onShm = runCounted(comm, c, &errs);
          EXPECT_EQ(onShm, onOneNode(writtenBytes(c, n) <= kMax || n == 1 ? 1u : 0u)) << c.describe();
        }
      }
  CollCase zero;
  zero.count = 0;
  EXPECT_EQ(runCounted(comm, zero, &errs), 0u);  // nothing to move: not even a sequence number
  EXPECT_TRUE(errs.empty()) << errs;
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(HostShm, LongSequenceReusesEveryCellAndSlot) {
  // 300 operations of changing kind, size (lines, packed cell and slot alternating
  // irregularly) and root:
  // a rank that overwrote a cell or slot before a slower reader finished would show here.
  const int n = worldSize();
  ncclComm_t comm = worldComm(kMax);
  std::string errs;
  uint64_t onShm = 0;
  for (int i = 0; i < 300 && errs.empty(); ++i) {
    CollCase c;
    c.kind = kKinds[(i * 7) % 5];
    c.type = i % 3 == 0 ? ncclInt32 : ncclFloat32;
    c.op = i % 4 == 0 ? ncclMin : ncclSum;
    const size_t per = c.kind == CollKind::ReduceScatter ? static_cast<size_t>(n) : 1;
    c.count = i % 5 == 0   ? (520 + 677 * static_cast<size_t>(i % 30)) / 4 / per  // slot, 1-8 pieces
              : i % 5 == 3 ? (172 + 11 * static_cast<size_t>(i % 30)) / 4 / per  // packed cell (mostly)
                           : 1 + static_cast<size_t>(i % 11);                     // lines
    if (c.count == 0) c.count = 1;
    c.root = i % n;
    c.inPlace = i % 6 == 1;
    c.seed = 1000 + static_cast<uint64_t>(i);
    onShm += runCounted(comm, c, &errs);
  }
  EXPECT_TRUE(errs.empty()) << errs;
  EXPECT_EQ(onShm, onOneNode(300));
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(HostShm, GroupMixesSharedMemoryAndEngine) {
  const int n = worldSize(), r = worldRank();
  ncclComm_t comm = worldComm(kMax);
  std::vector<CollCase> cases(6);
  cases[0].count = 3;                                            // shared memory (cell)
  cases[1].count = kMax / 4 + 1;                                 // engine: one element over
  cases[2].kind = CollKind::AllGather, cases[2].count = 200, cases[2].inPlace = true;  // slot
  cases[3].type = ncclBfloat16, cases[3].count = 3, cases[3].op = ncclAvg;             // cell
  cases[4].kind = CollKind::ReduceScatter, cases[4].count = 2, cases[4].inPlace = true, cases[4].op = ncclMin;
  cases[5].kind = CollKind::Broadcast, cases[5].count = 100, cases[5].root = n - 1;   // cell
  for (size_t i = 0; i < cases.size(); ++i) cases[i].seed = 100 + i;
  std::vector<std::unique_ptr<PreparedCase>> prepared;
  for (const CollCase& c : cases) prepared.emplace_back(new PreparedCase(comm, r, n, c));
  uint64_t before = mccl::hostShmCollCount();
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (auto& p : prepared) EXPECT_EQ(p->launch(), ncclSuccess);
  ncclResult_t res = ncclGroupEnd();
  EXPECT_EQ(mccl::hostShmCollCount() - before, onOneNode(n == 1 ? 6u : 5u));
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(prepared[i]->check(res), "") << cases[i].describe();
  prepared.clear();
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(HostShm, SameBitsAsTheEngine) {
  // Exactly representable inputs, so any order of the reduction gives the same bits: the
  // one-shot and the engine's ring or tree must agree bit for bit.
  const int n = worldSize(), r = worldRank();
  ncclComm_t viaShm = worldComm(kMax), viaEngine = worldComm(0);
  uint64_t before = mccl::hostShmCollCount();
  int ran = 0;
  EXPECT_EQ(compareCommsBitwise(viaShm, viaEngine, r, n,
                                {ncclInt8, ncclUint32, ncclInt64, ncclFloat16, ncclBfloat16, ncclFloat32, ncclFloat64},
                                &ran),
            "");
  // viaShm ran every one in shared memory, viaEngine none.
  EXPECT_EQ(mccl::hostShmCollCount() - before, onOneNode(static_cast<uint64_t>(ran)));
  EXPECT_EQ(ncclCommDestroy(viaShm), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(viaEngine), ncclSuccess);
}

TEST(HostShm, SilentPeerIsARemoteError) {
  // Rank 0 enters an AllReduce that the others never call: it must come back with
  // ncclRemoteError (MCCL_TIMEOUT), and abort must then return on every rank.
  const int n = worldSize(), r = worldRank();
  if (n < 2) GTEST_SKIP() << "needs two ranks";
  ncclComm_t comm = worldComm(kMax);
  double x = 1, y = 0;
  // One operation first, so every rank has attached the segment.
  ASSERT_EQ(ncclAllReduce(&x, &y, 1, ncclFloat64, ncclSum, comm, nullptr), ncclSuccess);
  EXPECT_EQ(y, static_cast<double>(n));
  setenv("MCCL_TIMEOUT", "1", 1);
  mccl::knobsReload();
  if (r == 0) {
    uint64_t before = mccl::hostShmCollCount();
    EXPECT_EQ(ncclAllReduce(&x, &y, 1, ncclFloat64, ncclSum, comm, nullptr), ncclRemoteError);
    EXPECT_EQ(mccl::hostShmCollCount() - before, onOneNode(1));
    if (oneNode())
      EXPECT_NE(std::string(ncclGetLastError(comm)).find("shared memory"), std::string::npos) << ncclGetLastError(comm);
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
