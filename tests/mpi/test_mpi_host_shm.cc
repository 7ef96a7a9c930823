// Host communicators whose ranks share one node run small collectives one-shot in a
// shared-memory segment (MCCL_HOST_SHM_MAX_BYTES, host_engine/shm_coll.*): results against
// the independent reference for every collective, datatype and operator, in and out of
// place, at the edges of the cell's lines, the packed cell and the slot; sequences long enough to reuse
// every cell and slot many times; groups mixing it with the engine; the same bits as the
// engine; and a silent peer still ending in ncclRemoteError. Small Send/Recv likewise: every
// pattern and datatype at the edges of a cell, more messages to one peer than its ring
// holds, sizes that differ between the ends, a sender that leaves before its receiver came,
// groups of every size to 4 KiB back to back, a group whose peer never comes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "coll_check.h"
#include "core/comm.h"
#include "core/types.h"
#include "host_paths.h"
#include "core/knobs.h"
#include "host_engine/host_datapath.h"
#include "host_engine/shm_coll.h"
#include "mccl_mpi.h"
#include "mpi_util.h"
#include "test_util.h"

using namespace mccl_test;

namespace {

constexpr size_t kMax = 20480;  // MCCL_HOST_SHM_MAX_BYTES of the communicators below: slots in 8 pieces
constexpr size_t kLines = 168;   // data bytes that travel in the cell's lines with the sequence numbers
constexpr size_t kPacked = 512;  // data bytes that travel contiguous in the packed cell
constexpr size_t kP2pInCell = 480;  // the largest Send/Recv inside a cell of the pair's ring

ncclComm_t worldComm(size_t maxBytes) { return hostWorldComm(maxBytes, 0); }  // MPI route off

size_t typeSize(ncclDataType_t t) { return mccl::datatypeSize(t); }

// Whether one rank writes a block for every rank into the segment for c.
bool blockPerRank(CollKind k) {
  return k == CollKind::ReduceScatter || k == CollKind::AlltoAll || k == CollKind::Scatter;
}

// Bytes one rank writes into the segment for c.
size_t writtenBytes(const CollCase& c, int n) {
  size_t b = c.count * typeSize(c.type);
  return blockPerRank(c.kind) ? b * static_cast<size_t>(n) : b;
}

// Operations c runs: none for an AlltoAll in place on one rank (nothing moves).
uint64_t opsOf(const CollCase& c, int n) { return c.kind == CollKind::AlltoAll && c.inPlace && n == 1 ? 0 : 1; }

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

// The path in /dev/shm of comm's shared-memory segment (its name: host_engine/shm_coll.cc),
// known before comm is destroyed. Checked by name, not by counting mccl's segments: other
// tests that ctest runs beside this one make and remove segments of their own.
std::string segmentPath(ncclComm_t comm) {
  char path[64];
  std::snprintf(path, sizeof path, "/dev/shm/mccl-shm-%016llx",
                static_cast<unsigned long long>(comm->topo.shmToken()));
  return path;
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// AlltoAll, Gather and Scatter run whole in the segment (one operation each: a rank writes
// its blocks once, every reader takes its own).
const CollKind kKinds[] = {CollKind::AllReduce, CollKind::Broadcast,     CollKind::Reduce,
                           CollKind::AllGather, CollKind::ReduceScatter, CollKind::AlltoAll,
                           CollKind::Gather,    CollKind::Scatter};
constexpr int kNumKinds = sizeof(kKinds) / sizeof(kKinds[0]);

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
          EXPECT_EQ(runCounted(comm, c, &errs), onOneNode(opsOf(c, n))) << c.describe();
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
        const size_t es = typeSize(t), per = blockPerRank(k) ? static_cast<size_t>(n) : 1;
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
          EXPECT_EQ(onShm, onOneNode(writtenBytes(c, n) <= kMax || n == 1 ? opsOf(c, n) : 0u)) << c.describe();
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
  uint64_t onShm = 0, ops = 0;
  for (int i = 0; i < 300 && errs.empty(); ++i) {
    CollCase c;
    c.kind = kKinds[(i * 7) % kNumKinds];
    c.type = i % 3 == 0 ? ncclInt32 : ncclFloat32;
    c.op = i % 4 == 0 ? ncclMin : ncclSum;
    const size_t per = blockPerRank(c.kind) ? static_cast<size_t>(n) : 1;
    c.count = i % 5 == 0   ? (520 + 677 * static_cast<size_t>(i % 30)) / 4 / per  // slot, 1-8 pieces
              : i % 5 == 3 ? (172 + 11 * static_cast<size_t>(i % 30)) / 4 / per  // packed cell (mostly)
                           : 1 + static_cast<size_t>(i % 11);                     // lines
    if (c.count == 0) c.count = 1;
    c.root = i % n;
    c.inPlace = i % 6 == 1;
    c.seed = 1000 + static_cast<uint64_t>(i);
    onShm += runCounted(comm, c, &errs);
    ops += opsOf(c, n);
  }
  EXPECT_TRUE(errs.empty()) << errs;
  EXPECT_EQ(onShm, onOneNode(ops));
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(HostShm, GroupMixesSharedMemoryAndEngine) {
  const int n = worldSize(), r = worldRank();
  ncclComm_t comm = worldComm(kMax);
  std::vector<CollCase> cases(10);
  cases[0].count = 3;                                            // shared memory (cell)
  cases[1].count = kMax / 4 + 1;                                 // engine: one element over
  cases[2].kind = CollKind::AllGather, cases[2].count = 200, cases[2].inPlace = true;  // slot
  cases[3].type = ncclBfloat16, cases[3].count = 3, cases[3].op = ncclAvg;             // cell
  cases[4].kind = CollKind::ReduceScatter, cases[4].count = 2, cases[4].inPlace = true, cases[4].op = ncclMin;
  cases[5].kind = CollKind::Broadcast, cases[5].count = 100, cases[5].root = n - 1;   // cell
  cases[6].kind = CollKind::AlltoAll, cases[6].count = 5;                                // whole, cell
  cases[7].kind = CollKind::Gather, cases[7].count = 300, cases[7].root = n / 2, cases[7].inPlace = true;  // slot
  cases[8].kind = CollKind::Scatter, cases[8].count = kMax / 4 + 1;  // engine: its Sends and Recvs
  cases[9].kind = CollKind::AlltoAll, cases[9].type = ncclInt8, cases[9].count = 37, cases[9].inPlace = true;
  for (size_t i = 0; i < cases.size(); ++i) cases[i].seed = 100 + i;
  std::vector<std::unique_ptr<PreparedCase>> prepared;
  for (const CollCase& c : cases) prepared.emplace_back(new PreparedCase(comm, r, n, c));
  uint64_t before = mccl::hostShmCollCount();
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (auto& p : prepared) EXPECT_EQ(p->launch(), ncclSuccess);
  ncclResult_t res = ncclGroupEnd();
  // Every case but the two over the threshold (which on one rank are local copies too); an
  // AlltoAll in place on one rank runs nothing.
  EXPECT_EQ(mccl::hostShmCollCount() - before, onOneNode(n == 1 ? 9u : 8u));
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

// Send/Recv of up to MCCL_HOST_SHM_MAX_BYTES between two ranks of the node (or a rank and
// itself) go through the pair's ring of cells, above 480 B through the sender's message
// slots in pieces; larger ones through the engine. Every pattern, every datatype, at the
// edges: the header's cache line (32 B of data), the cell, a slot in one and in several
// pieces, the threshold, one element more.
TEST(HostShm, SendRecvEveryPatternTypeAndEdge) {
  const int n = worldSize(), r = worldRank();
  ncclComm_t comm = worldComm(kMax);
  std::string errs;
  uint64_t seed = 300;
  for (const char* pattern : {"ring", "pairs", "pairs-split", "neighbor", "alltoall", "scatter", "gather"})
    for (ncclDataType_t t : kAllTypes) {
      const size_t es = typeSize(t);
      for (size_t count : {size_t{1}, 32 / es, 32 / es + 1, kP2pInCell / es, kP2pInCell / es + 1, kMax / es / 3 + 1,
                           kMax / es, kMax / es + 1}) {
        const int root = static_cast<int>(seed % static_cast<uint64_t>(n));
        const uint64_t before = mccl::hostShmP2pCount(), copiesBefore = mccl::hostSelfCopyCount();
        std::string e = runP2pPattern(comm, r, n, pattern, count, t, root, ++seed);
        if (!e.empty()) errs += e + " (" + std::to_string(count) + " x " + std::to_string(es) + " B)\n";
        // A rank's Send to itself and its Recv from itself (an AlltoAll's own block, a
        // Scatter's or Gather's root's) are one copy, wherever the rest goes.
        const std::string pat = pattern;
        const uint64_t toItself = pat == "alltoall" || ((pat == "scatter" || pat == "gather") && r == root) ? 1
                                  : n == 1 && pat == "ring"                                                ? 1
                                  : n == 1 && pat == "neighbor"                                            ? 2
                                                                                                           : 0;
        // This rank's other Sends and Recvs, when they fit a cell (a one-rank communicator
        // has no rings).
        uint64_t want = 0;
        if (count * es <= kMax && oneNode() && n > 1) {
          const uint64_t nr = static_cast<uint64_t>(n);
          if (pat == "ring") want = 2;
          else if (pat == "pairs" || pat == "pairs-split") want = (r ^ 1) < n ? 2 : 0;
          else if (pat == "neighbor") want = 4;
          else if (pat == "alltoall") want = 2 * nr - 2;
          else want = r == root ? nr - 1 : 1;  // scatter, gather
        }
        EXPECT_EQ(mccl::hostShmP2pCount() - before, want) << pattern << " " << count << " x " << es << " B";
        EXPECT_EQ(mccl::hostSelfCopyCount() - copiesBefore, toItself)
            << pattern << " " << count << " x " << es << " B";
      }
    }
  EXPECT_TRUE(errs.empty()) << errs;
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

// More messages to one peer in one group than its ring has cells (16 at 2-16 ranks) and
// its sender has slots, in cells, in slots and on the engine interleaved, then a long run
// of lone calls that reuses every cell and slot many times: each message arrives whole and
// in its own order.
TEST(HostShm, SendRecvManyMessagesToOnePeer) {
  const int n = worldSize(), r = worldRank();
  if (n < 2) GTEST_SKIP() << "needs two ranks";
  ncclComm_t comm = worldComm(kMax);
  const int to = (r + 1) % n, from = (r + n - 1) % n;
  constexpr int kMsgs = 40;
  // ints: 4..480 B in a cell, 800 B and 8,000 B in a slot (1 and 3 pieces), 24,000 B on the engine
  auto len = [](int i) {
    return static_cast<size_t>(i % 3 == 0 ? 200 : i % 11 == 5 ? 2000 : i % 13 == 7 ? 6000 : 1 + (i * 13) % 120);
  };
  auto val = [](int sender, int i, size_t k) { return static_cast<int32_t>(sender * 100000 + i * 1000 + static_cast<int>(k)); };
  std::vector<std::vector<int32_t>> out(kMsgs), in(kMsgs);
  for (int i = 0; i < kMsgs; ++i) {
    out[i].resize(len(i));
    for (size_t k = 0; k < out[i].size(); ++k) out[i][k] = val(r, i, k);
    in[i].assign(len(i), -1);
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int i = 0; i < kMsgs; ++i) {
    EXPECT_EQ(ncclRecv(in[i].data(), in[i].size(), ncclInt32, from, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclSend(out[i].data(), out[i].size(), ncclInt32, to, comm, nullptr), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm);
  int bad = 0;
  for (int i = 0; i < kMsgs; ++i)
    for (size_t k = 0; k < in[i].size(); ++k)
      if (in[i][k] != val(from, i, k) && ++bad < 5) ADD_FAILURE() << "group message " << i << " element " << k;
  // Lone calls: rank r sends to r + 1 and receives from r - 1, the order of the two calls
  // alternating so that both ends block in each direction (a ring of lone calls needs one
  // rank to receive first: rank 0 does).
  for (int i = 0; i < 300 && bad == 0; ++i) {
    std::vector<int32_t> o(len(i)), got(len(i), -1);
    for (size_t k = 0; k < o.size(); ++k) o[k] = val(r, i, k);
    auto send = [&] { return ncclSend(o.data(), o.size(), ncclInt32, to, comm, nullptr); };
    auto recv = [&] { return ncclRecv(got.data(), got.size(), ncclInt32, from, comm, nullptr); };
    if (r == 0) {
      ASSERT_EQ(recv(), ncclSuccess);
      ASSERT_EQ(send(), ncclSuccess);
    } else {
      ASSERT_EQ(send(), ncclSuccess);
      ASSERT_EQ(recv(), ncclSuccess);
    }
    for (size_t k = 0; k < got.size(); ++k)
      if (got[k] != val(from, i, k) && ++bad < 5) ADD_FAILURE() << "lone message " << i << " element " << k;
  }
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

// More slot-sized messages in flight than the sender has message slots (16): 20 to every
// rank in one group (to itself too: those pair with its Recvs as copies and take no slot).
// A slot is reused only once its last message was read.
TEST(HostShm, SendRecvMoreMessagesThanSlots) {
  const int n = worldSize(), r = worldRank();
  ncclComm_t comm = worldComm(kMax);
  constexpr int kPer = 20;
  constexpr size_t kInts = 300;  // 1,200 B: a slot, one piece
  auto val = [](int from, int to, int i, size_t k) {
    return static_cast<int32_t>(from * 1000000 + to * 10000 + i * 100 + static_cast<int>(k % 100));
  };
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(n * kPer)), in(static_cast<size_t>(n * kPer));
  for (int q = 0; q < n; ++q)
    for (int i = 0; i < kPer; ++i) {
      auto& o = out[static_cast<size_t>(q * kPer + i)];
      o.resize(kInts);
      for (size_t k = 0; k < kInts; ++k) o[k] = val(r, q, i, k);
      in[static_cast<size_t>(q * kPer + i)].assign(kInts, -1);
    }
  const uint64_t before = mccl::hostShmP2pCount(), copiesBefore = mccl::hostSelfCopyCount();
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int i = 0; i < kPer; ++i)
    for (int q = 0; q < n; ++q) {
      const size_t at = static_cast<size_t>(q * kPer + i);
      EXPECT_EQ(ncclSend(out[at].data(), kInts, ncclInt32, q, comm, nullptr), ncclSuccess);
      EXPECT_EQ(ncclRecv(in[at].data(), kInts, ncclInt32, q, comm, nullptr), ncclSuccess);
    }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm);
  EXPECT_EQ(mccl::hostShmP2pCount() - before, onOneNode(2u * static_cast<uint64_t>((n - 1) * kPer)));
  EXPECT_EQ(mccl::hostSelfCopyCount() - copiesBefore, static_cast<uint64_t>(kPer));
  int bad = 0;
  for (int q = 0; q < n; ++q)
    for (int i = 0; i < kPer; ++i)
      for (size_t k = 0; k < kInts; ++k)
        if (in[static_cast<size_t>(q * kPer + i)][k] != val(q, r, i, k) && ++bad <= 5)
          ADD_FAILURE() << "message " << i << " from rank " << q << " element " << k;
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

// Both ends in shared memory but of different sizes: the receiver says so
// (ncclInvalidUsage naming both sizes), as the engine does.
TEST(HostShm, SendRecvSizesThatDifferAreAnError) {
  const int n = worldSize(), r = worldRank();
  if (n < 2 || !oneNode()) GTEST_SKIP() << "needs two ranks on one node";
  ncclComm_t comm = worldComm(kMax);
  double buf[4] = {1, 2, 3, 4};
  if (r == 0) EXPECT_EQ(ncclSend(buf, 1, ncclFloat64, 1, comm, nullptr), ncclSuccess);
  if (r == 1) {
    EXPECT_EQ(ncclRecv(buf, 2, ncclFloat64, 0, comm, nullptr), ncclInvalidUsage);
    const std::string e = ncclGetLastError(comm);
    EXPECT_NE(e.find("sent 8 bytes where rank 1 expected 16"), std::string::npos) << e;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

namespace {
// The rest of SenderLeavesBeforeItsReceiverArrives on ranks 1 .. n-1.
void sendOnAlongTheChain(ncclComm_t comm, int r, int n, uint64_t before) {
  int32_t v = 1000 + r, got = -1;
  if (r == 1) {
    EXPECT_EQ(ncclRecv(&got, 1, ncclInt32, 0, comm, nullptr), ncclSuccess);
    EXPECT_EQ(got, 1000);
  }
  // Ranks 1 .. n-1 in a chain: rank k receives from k - 1 (not from rank 0) and sends on.
  if (r >= 2) {
    EXPECT_EQ(ncclRecv(&got, 1, ncclInt32, r - 1, comm, nullptr), ncclSuccess);
    EXPECT_EQ(got, 1000 + r - 1);
  }
  if (r + 1 < n) EXPECT_EQ(ncclSend(&v, 1, ncclInt32, r + 1, comm, nullptr), ncclSuccess);
  EXPECT_EQ(mccl::hostShmP2pCount() - before, static_cast<uint64_t>(1 + (r + 1 < n ? 1 : 0)));
}
}  // namespace

// Rank 0 sends to rank 1 and destroys its communicator before rank 1 has touched the
// segment (a Send is eager: its message waits in the cell); rank 1 then receives, and ranks
// 1.. go on exchanging messages on the same communicator, each attaching later still. The
// name must survive rank 0's leaving (the last one there, but a message waits for a rank
// that has not come), and be gone once everyone has left.
TEST(HostShm, SenderLeavesBeforeItsReceiverArrives) {
  const int n = worldSize(), r = worldRank();
  if (n < 2 || !oneNode()) GTEST_SKIP() << "needs two ranks on one node";
  MPI_Barrier(MPI_COMM_WORLD);
  ncclComm_t comm = worldComm(kMax);
  const std::string segment = segmentPath(comm);
  int32_t v = 1000;
  const uint64_t before = mccl::hostShmP2pCount();
  if (r == 0) {
    EXPECT_EQ(ncclSend(&v, 1, ncclInt32, 1, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
    EXPECT_EQ(mccl::hostShmP2pCount() - before, 1u);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0 is gone before anyone else starts
  if (r != 0) {
    usleep(20000);
    sendOnAlongTheChain(comm, r, n, before);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(exists(segment)) << segment;
}

// Ranks 0 and 1 exchange a message, the others never touch the segment; when all have
// left, the name is gone (the last one there removed it: nothing waits in it).
TEST(HostShm, SegmentNameGoneWhenOnlySomeRanksCame) {
  const int n = worldSize(), r = worldRank();
  if (n < 2 || !oneNode()) GTEST_SKIP() << "needs two ranks on one node";
  MPI_Barrier(MPI_COMM_WORLD);
  ncclComm_t comm = worldComm(kMax);
  const std::string segment = segmentPath(comm);
  int32_t v = r, got = -1;
  if (r < 2) {
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclSend(&v, 1, ncclInt32, 1 - r, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclRecv(&got, 1, ncclInt32, 1 - r, comm, nullptr), ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    EXPECT_EQ(got, 1 - r);
  }
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(exists(segment)) << segment;
}

// Groups of Sends and Recvs only (a halo exchange, a ring shift) run from the group's own
// list (ShmColls::runP2pGroup). Back to back, one group per size from 0 to 4 KiB (0 goes
// to the engine, 1-480 B in a cell, above in a slot), each rank sending to r + d and
// receiving from r - d with d changing every group (itself too, every seventh: a copy),
// the two calls in either order, at unaligned addresses, in types of 1, 2 and 8 bytes;
// every fifth group a second pair of messages of another size to other peers. Every byte
// is checked against a value computed from (sender, receiver, group, byte) alone.
TEST(HostShm, SendRecvGroupsOfEverySizeBackToBack) {
  const int n = worldSize(), r = worldRank();
  ncclComm_t comm = worldComm(kMax);
  constexpr size_t kTop = 4096;
  auto val = [](int from, int to, size_t group, size_t k) {
    uint64_t x = (static_cast<uint64_t>(from) << 48) ^ (static_cast<uint64_t>(to) << 32) ^ (group << 13) ^ k;
    x *= 0x9E3779B97F4A7C15ull;
    return static_cast<char>(x >> 56);
  };
  auto typeFor = [](size_t bytes) {
    return bytes % 8 == 0 ? ncclInt64 : bytes % 2 == 0 ? ncclFloat16 : ncclUint8;
  };
  std::vector<char> out(2 * (kTop + 16)), in(2 * (kTop + 16));
  uint64_t shmWant = 0;
  const uint64_t before = mccl::hostShmP2pCount();
  int bad = 0;
  for (size_t g = 0; g <= kTop && bad == 0; ++g) {
    // Two messages at most: sizes, offsets (unaligned) and peers of each.
    const int msgs = g % 5 == 4 ? 2 : 1;
    size_t bytes[2] = {g, (g * 7 + 3) % (kTop + 1)};
    const size_t at[2] = {g % 7, kTop + 16 + g % 5};
    int d[2] = {g % 7 == 6 ? 0 : 1 + static_cast<int>(g % static_cast<size_t>(n > 1 ? n - 1 : 1)), 1};
    if (n == 1) d[0] = d[1] = 0;
    for (int m = 0; m < msgs; ++m) {
      const int to = (r + d[m]) % n;
      for (size_t k = 0; k < bytes[m]; ++k) out[at[m] + k] = val(r, to, g * 2 + m, k);
      std::memset(&in[at[m]], 0x5a, bytes[m]);
    }
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int m = 0; m < msgs; ++m) {
      const ncclDataType_t t = typeFor(bytes[m]);
      const size_t count = bytes[m] / typeSize(t);
      const int to = (r + d[m]) % n, from = (r - d[m] + n) % n;
      auto send = [&] { return ncclSend(&out[at[m]], count, t, to, comm, nullptr); };
      auto recv = [&] { return ncclRecv(&in[at[m]], count, t, from, comm, nullptr); };
      if (g % 2 == 0) {
        EXPECT_EQ(send(), ncclSuccess);
        EXPECT_EQ(recv(), ncclSuccess);
      } else {
        EXPECT_EQ(recv(), ncclSuccess);
        EXPECT_EQ(send(), ncclSuccess);
      }
      if (bytes[m] > 0 && d[m] != 0 && oneNode()) shmWant += 2;
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << "group " << g << ": " << ncclGetLastError(comm);
    for (int m = 0; m < msgs; ++m) {
      const int from = (r - d[m] + n) % n;
      for (size_t k = 0; k < bytes[m]; ++k)
        if (in[at[m] + k] != val(from, r, g * 2 + m, k) && ++bad <= 5)
          ADD_FAILURE() << "group " << g << " message " << m << " (" << bytes[m] << " B from rank " << from
                        << "): byte " << k;
    }
  }
  EXPECT_EQ(mccl::hostShmP2pCount() - before, shmWant);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

// A group's Send and Recv whose peer never comes: the Send is written (eager), the Recv
// comes back with ncclRemoteError (MCCL_TIMEOUT) naming it, and abort returns.
TEST(HostShm, SendRecvGroupSilentPeerIsARemoteError) {
  const int n = worldSize(), r = worldRank();
  if (n < 2 || !oneNode()) GTEST_SKIP() << "needs two ranks on one node";
  ncclComm_t comm = worldComm(kMax);
  setenv("MCCL_TIMEOUT", "1", 1);
  mccl::knobsReload();
  if (r == 0) {
    int32_t mine = 7, got = 0;
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclSend(&mine, 1, ncclInt32, 1, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclRecv(&got, 1, ncclInt32, 1, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclGroupEnd(), ncclRemoteError);
    const std::string e = ncclGetLastError(comm);
    EXPECT_NE(e.find("Recv of 1 x ncclInt32 from rank 1 (its message 1) in shared memory"), std::string::npos)
        << e;
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(ncclCommGetAsyncError(comm, &async), ncclSuccess);
    EXPECT_EQ(async, ncclRemoteError);
    // The failed group left nothing queued: the next call is refused for the failure, not
    // for a stale group.
    EXPECT_EQ(ncclSend(&mine, 1, ncclInt32, 1, comm, nullptr), ncclRemoteError);
  }
  unsetenv("MCCL_TIMEOUT");
  mccl::knobsReload();
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
  MPI_Barrier(MPI_COMM_WORLD);
}

// A Recv whose sender never sends comes back with ncclRemoteError (MCCL_TIMEOUT), naming
// the message and the shared memory.
TEST(HostShm, SendRecvSilentPeerIsARemoteError) {
  const int n = worldSize(), r = worldRank();
  if (n < 2 || !oneNode()) GTEST_SKIP() << "needs two ranks on one node";
  ncclComm_t comm = worldComm(kMax);
  setenv("MCCL_TIMEOUT", "1", 1);
  mccl::knobsReload();
  if (r == 0) {
    int32_t got = 0;
    EXPECT_EQ(ncclRecv(&got, 1, ncclInt32, 1, comm, nullptr), ncclRemoteError);
    const std::string e = ncclGetLastError(comm);
    EXPECT_NE(e.find("Recv of 1 x ncclInt32 from rank 1 (its message 1) in shared memory"), std::string::npos)
        << e;
  }
  unsetenv("MCCL_TIMEOUT");
  mccl::knobsReload();
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
  MPI_Barrier(MPI_COMM_WORLD);
}

// Slots written with streaming stores (MCCL_HOST_SHM_STREAM=1, from 520 B, so every slot
// of these communicators): every collective, in place or not, sizes that end off a 16- and
// 64-byte line, and every Send/Recv pattern through message slots, against the reference;
// then under auto, where a rank switches between the two ways as its timed copies say.
TEST(HostShm, StreamingStoresIntoSlotsKeepEveryResult) {
  const int n = worldSize(), r = worldRank();
  for (const char* mode : {"1", "auto"}) {
    setenv("MCCL_HOST_SHM_STREAM", mode, 1);
    setenv("MCCL_HOST_SHM_STREAM_BYTES", "520", 1);
    ncclComm_t comm = worldComm(kMax);
    unsetenv("MCCL_HOST_SHM_STREAM");
    unsetenv("MCCL_HOST_SHM_STREAM_BYTES");
    mccl::knobsReload();
    std::string errs;
    uint64_t seed = 7000, onShm = 0, ops = 0;
    for (int round = 0; round < (std::string(mode) == "auto" ? 20 : 1); ++round)
      for (CollKind k : kKinds)
        for (ncclDataType_t t : {ncclFloat32, ncclInt8, ncclFloat64, ncclFloat16})
          for (bool inPlace : {false, true}) {
            const size_t es = typeSize(t), per = blockPerRank(k) ? static_cast<size_t>(n) : 1;
            for (size_t bytes : {size_t{520}, size_t{1000}, size_t{4097}, size_t{8200}, kMax - 8}) {
              CollCase c;
              c.kind = k;
              c.type = t;
              c.op = t == ncclInt8 ? ncclMax : ncclSum;
              c.count = bytes / es / per > 0 ? bytes / es / per : 1;
              c.root = static_cast<int>(seed % static_cast<uint64_t>(n));
              c.inPlace = inPlace;
              c.seed = ++seed;
              onShm += runCounted(comm, c, &errs);
              ops += opsOf(c, n);
            }
          }
    EXPECT_EQ(onShm, onOneNode(ops)) << mode;
    for (const char* pattern : {"ring", "pairs", "alltoall", "scatter", "gather"})
      for (size_t bytes : {size_t{520}, size_t{2049}, size_t{8191}, kMax - 1}) {
        std::string e = runP2pPattern(comm, r, n, pattern, bytes, ncclInt8, static_cast<int>(seed % n), ++seed);
        if (!e.empty()) errs += e + " (" + pattern + ", " + std::to_string(bytes) + " B, " + mode + ")\n";
      }
    EXPECT_TRUE(errs.empty()) << mode << ": " << errs;
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  }
}
