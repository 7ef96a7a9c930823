// MPI integration on host communicators: communicators cached on MPI communicators,
// MPI-typed collectives for every predefined datatype and operator against MPI's own
// results (MPI_IN_PLACE included), and the errors for what has no NCCL equivalent.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "mccl_mpi.h"
#include "mpi_util.h"
#include "test_util.h"

using namespace mccl_test;

namespace {
bool isLive(ncclComm_t c) {
  int n;
  return ncclCommCount(c, &n) == ncclSuccess;
}
}  // namespace

TEST(MpiCache, SameCommunicatorTwiceAndReleasedWithItsMpiComm) {
  ncclComm_t a = nullptr, b = nullptr;
  NCCL_OK(mcclMpiComm(MPI_COMM_WORLD, &a));
  NCCL_OK(mcclMpiComm(MPI_COMM_WORLD, &b));
  EXPECT_EQ(a, b);
  int n;
  NCCL_OK(ncclCommCount(a, &n));
  EXPECT_EQ(n, worldSize());

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  ncclComm_t d = nullptr;
  NCCL_OK(mcclMpiComm(dup, &d));
  EXPECT_NE(d, a);  // a duplicate gets its own
  EXPECT_TRUE(isLive(d));
  MPI_Comm_free(&dup);
  EXPECT_FALSE(isLive(d));  // destroyed by the attribute's delete callback
  EXPECT_TRUE(isLive(a));
}

TEST(MpiCache, SplitAndSharedNodeCommunicators) {
  int r = worldRank();
  MPI_Comm half, node;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node);
  ncclComm_t h, nd;
  NCCL_OK(mcclMpiComm(half, &h));
  NCCL_OK(mcclMpiComm(node, &nd));
  int hs, ns, mhs, mns;
  MPI_Comm_size(half, &mhs);
  MPI_Comm_size(node, &mns);
  NCCL_OK(ncclCommCount(h, &hs));
  NCCL_OK(ncclCommCount(nd, &ns));
  EXPECT_EQ(hs, mhs);
  EXPECT_EQ(ns, mns);
  std::vector<int> v(100, r), out(100, -1);
  NCCL_OK(mcclMpiAllreduce(v.data(), out.data(), v.size(), MPI_INT, MPI_MAX, node, nullptr));
  int want;
  MPI_Allreduce(&r, &want, 1, MPI_INT, MPI_MAX, node);
  EXPECT_EQ(out[99], want);
  MPI_Comm_free(&half);
  MPI_Comm_free(&node);
  EXPECT_FALSE(isLive(h));
  EXPECT_FALSE(isLive(nd));
}

namespace {
struct TypeCase {
  MPI_Datatype mpi;
  size_t size;
  bool isFloat;
  const char* name;
};
const TypeCase kTypes[] = {
    {MPI_SIGNED_CHAR, 1, false, "MPI_SIGNED_CHAR"}, {MPI_INT8_T, 1, false, "MPI_INT8_T"},
    {MPI_UNSIGNED_CHAR, 1, false, "MPI_UNSIGNED_CHAR"}, {MPI_UINT8_T, 1, false, "MPI_UINT8_T"},
    {MPI_INT, 4, false, "MPI_INT"}, {MPI_INT32_T, 4, false, "MPI_INT32_T"},
    {MPI_UNSIGNED, 4, false, "MPI_UNSIGNED"}, {MPI_UINT32_T, 4, false, "MPI_UINT32_T"},
    {MPI_LONG, sizeof(long), false, "MPI_LONG"}, {MPI_LONG_LONG, 8, false, "MPI_LONG_LONG"},
    {MPI_INT64_T, 8, false, "MPI_INT64_T"}, {MPI_UNSIGNED_LONG, sizeof(long), false, "MPI_UNSIGNED_LONG"},
    {MPI_UNSIGNED_LONG_LONG, 8, false, "MPI_UNSIGNED_LONG_LONG"}, {MPI_UINT64_T, 8, false, "MPI_UINT64_T"},
    {MPI_FLOAT, 4, true, "MPI_FLOAT"}, {MPI_DOUBLE, 8, true, "MPI_DOUBLE"},
    // Fortran's (gfortran's default sizes, checked in the test).
    {MPI_INTEGER, 4, false, "MPI_INTEGER"}, {MPI_INTEGER1, 1, false, "MPI_INTEGER1"},
    {MPI_INTEGER8, 8, false, "MPI_INTEGER8"}, {MPI_REAL, 4, true, "MPI_REAL"},
    {MPI_DOUBLE_PRECISION, 8, true, "MPI_DOUBLE_PRECISION"}, {MPI_REAL8, 8, true, "MPI_REAL8"},
};

// Small values whose sums, products, max and min are exact in every type.
void fill(const TypeCase& t, void* buf, size_t count, int rank, MPI_Op op) {
  for (size_t i = 0; i < count; ++i) {
    long v = op == MPI_PROD ? (static_cast<long>((i + rank) % 3 == 0) + 1) : static_cast<long>((i * 7 + rank * 3) % 11);
    char* p = static_cast<char*>(buf) + i * t.size;
    if (t.isFloat && t.size == 4) { float f = static_cast<float>(v); std::memcpy(p, &f, 4); }
    else if (t.isFloat) { double d = static_cast<double>(v); std::memcpy(p, &d, 8); }
    else std::memcpy(p, &v, t.size);  // little-endian: low bytes
  }
}
}  // namespace

TEST(MpiTyped, EveryDatatypeAndOperatorAgainstMpi) {
  int r = worldRank(), n = worldSize();
  for (const TypeCase& t : kTypes) {
    int size = 0;
    MPI_Type_size(t.mpi, &size);
    ASSERT_EQ(static_cast<size_t>(size), t.size) << t.name;
  }
  const size_t count = 1003;
  std::string errs;
  for (const TypeCase& t : kTypes) {
    for (MPI_Op op : {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN}) {
      for (bool inPlace : {false, true}) {
        std::vector<char> in(count * t.size), ours(count * t.size, 0x5a), theirs(count * t.size, 0x5a);
        fill(t, in.data(), count, r, op);
        if (inPlace) {
          ours = in;
          NCCL_OK(mcclMpiAllreduce(MPI_IN_PLACE, ours.data(), count, t.mpi, op, MPI_COMM_WORLD, nullptr));
        } else {
          NCCL_OK(mcclMpiAllreduce(in.data(), ours.data(), count, t.mpi, op, MPI_COMM_WORLD, nullptr));
        }
        MPI_Allreduce(in.data(), theirs.data(), static_cast<int>(count), t.mpi, op, MPI_COMM_WORLD);
        if (ours != theirs) errs += std::string("Allreduce ") + t.name + (inPlace ? " in place\n" : "\n");
      }
    }
    // Bcast, Reduce, Allgather, Reduce_scatter_block, Alltoall with MPI_SUM.
    std::vector<char> in(count * n * t.size), ours, theirs;
    fill(t, in.data(), count * n, r, MPI_SUM);
    ours = in;
    theirs = in;
    NCCL_OK(mcclMpiBcast(ours.data(), count, t.mpi, n - 1, MPI_COMM_WORLD, nullptr));
    MPI_Bcast(theirs.data(), static_cast<int>(count), t.mpi, n - 1, MPI_COMM_WORLD);
    if (ours != theirs) errs += std::string("Bcast ") + t.name + "\n";

    ours.assign(count * t.size, 0);
    theirs.assign(count * t.size, 0);
    NCCL_OK(mcclMpiReduce(in.data(), ours.data(), count, t.mpi, MPI_SUM, 0, MPI_COMM_WORLD, nullptr));
    MPI_Reduce(in.data(), theirs.data(), static_cast<int>(count), t.mpi, MPI_SUM, 0, MPI_COMM_WORLD);
    if (r == 0 && ours != theirs) errs += std::string("Reduce ") + t.name + "\n";
    // Reduce in place at the root.
    if (r == 0) ours.assign(in.begin(), in.begin() + static_cast<long>(count * t.size));
    NCCL_OK(mcclMpiReduce(r == 0 ? MPI_IN_PLACE : in.data(), ours.data(), count, t.mpi, MPI_SUM, 0, MPI_COMM_WORLD, nullptr));
    if (r == 0 && ours != theirs) errs += std::string("Reduce in place ") + t.name + "\n";

    ours.assign(count * n * t.size, 0);
    theirs.assign(count * n * t.size, 0);
    NCCL_OK(mcclMpiAllgather(in.data(), ours.data(), count, t.mpi, MPI_COMM_WORLD, nullptr));
    MPI_Allgather(in.data(), static_cast<int>(count), t.mpi, theirs.data(), static_cast<int>(count), t.mpi, MPI_COMM_WORLD);
    if (ours != theirs) errs += std::string("Allgather ") + t.name + "\n";
    std::memcpy(ours.data() + r * count * t.size, in.data(), count * t.size);  // in place form
    NCCL_OK(mcclMpiAllgather(MPI_IN_PLACE, ours.data(), count, t.mpi, MPI_COMM_WORLD, nullptr));
    if (ours != theirs) errs += std::string("Allgather in place ") + t.name + "\n";

    ours.assign(count * t.size, 0);
    theirs.assign(count * t.size, 0);
    NCCL_OK(mcclMpiReduceScatterBlock(in.data(), ours.data(), count, t.mpi, MPI_SUM, MPI_COMM_WORLD, nullptr));
    MPI_Reduce_scatter_block(in.data(), theirs.data(), static_cast<int>(count), t.mpi, MPI_SUM, MPI_COMM_WORLD);
    if (ours != theirs) errs += std::string("Reduce_scatter_block ") + t.name + "\n";
    std::vector<char> inplace = in;
    NCCL_OK(mcclMpiReduceScatterBlock(MPI_IN_PLACE, inplace.data(), count, t.mpi, MPI_SUM, MPI_COMM_WORLD, nullptr));
    if (std::memcmp(inplace.data(), theirs.data(), count * t.size) != 0)
      errs += std::string("Reduce_scatter_block in place ") + t.name + "\n";

    ours.assign(count * n * t.size, 0);
    theirs.assign(count * n * t.size, 0);
    NCCL_OK(mcclMpiAlltoall(in.data(), ours.data(), count, t.mpi, MPI_COMM_WORLD, nullptr));
    MPI_Alltoall(in.data(), static_cast<int>(count), t.mpi, theirs.data(), static_cast<int>(count), t.mpi, MPI_COMM_WORLD);
    if (ours != theirs) errs += std::string("Alltoall ") + t.name + "\n";
    inplace = in;
    NCCL_OK(mcclMpiAlltoall(MPI_IN_PLACE, inplace.data(), count, t.mpi, MPI_COMM_WORLD, nullptr));
    if (inplace != theirs) errs += std::string("Alltoall in place ") + t.name + "\n";
  }
  EXPECT_TRUE(errs.empty()) << errs;
}

// The v-forms, Gather, Scatter and Reduce_scatter against MPI's own, for every datatype:
// blocks of different sizes (one of them empty), displacements with gaps and out of rank
// order, every root, and the MPI_IN_PLACE forms.
TEST(MpiTyped, VFormsGatherScatterAgainstMpi) {
  const int r = worldRank(), n = worldSize();
  std::string errs;
  // Rank q's block to rank j: (q * 5 + j * 3) % 7 * 13 elements (0 where that is 0).
  auto blk = [](int q, int j) { return (q * 5 + j * 3) % 7 * 13; };
  for (const TypeCase& t : kTypes) {
    const size_t es = t.size;
    // Allgatherv: rank q contributes blk(q, 0) + 1 elements at a displacement counted from
    // the end, with a gap of 3 elements between blocks.
    std::vector<int> counts(n), displs(n);
    int extent = 0;
    for (int q = n - 1; q >= 0; --q) {
      counts[q] = blk(q, 0) + (q == 1 ? 0 : 1);  // rank 1 contributes nothing
      displs[q] = extent;
      extent += counts[q] + 3;
    }
    std::vector<char> mine(std::max(counts[r], 1) * es);
    fill(t, mine.data(), static_cast<size_t>(counts[r]), r + 1, MPI_SUM);
    std::vector<char> ours(extent * es, 0x33), theirs(extent * es, 0x33);
    NCCL_OK(mcclMpiAllgatherv(mine.data(), counts[r], ours.data(), counts.data(), displs.data(), t.mpi, MPI_COMM_WORLD,
                              nullptr));
    MPI_Allgatherv(mine.data(), counts[r], t.mpi, theirs.data(), counts.data(), displs.data(), t.mpi, MPI_COMM_WORLD);
    if (ours != theirs) errs += std::string("Allgatherv ") + t.name + "\n";
    std::vector<char> inplace(extent * es, 0x33);
    std::memcpy(inplace.data() + displs[r] * es, mine.data(), counts[r] * es);
    NCCL_OK(mcclMpiAllgatherv(MPI_IN_PLACE, 0, inplace.data(), counts.data(), displs.data(), t.mpi, MPI_COMM_WORLD,
                              nullptr));
    if (inplace != theirs) errs += std::string("Allgatherv in place ") + t.name + "\n";

    // Alltoallv: blk(r, j) elements to rank j, send blocks in reverse rank order.
    std::vector<int> sc(n), sd(n), rc(n), rd(n);
    int sx = 0, rx = 0;
    for (int j = n - 1; j >= 0; --j) {
      sc[j] = blk(r, j);
      sd[j] = sx;
      sx += sc[j] + 1;
    }
    for (int q = 0; q < n; ++q) {
      rc[q] = blk(q, r);
      rd[q] = rx;
      rx += rc[q] + 2;
    }
    std::vector<char> in(std::max(sx, 1) * es);
    fill(t, in.data(), static_cast<size_t>(sx), r, MPI_SUM);
    ours.assign(std::max(rx, 1) * es, 0x44);
    theirs = ours;
    NCCL_OK(mcclMpiAlltoallv(in.data(), sc.data(), sd.data(), ours.data(), rc.data(), rd.data(), t.mpi,
                             MPI_COMM_WORLD, nullptr));
    MPI_Alltoallv(in.data(), sc.data(), sd.data(), t.mpi, theirs.data(), rc.data(), rd.data(), t.mpi, MPI_COMM_WORLD);
    if (ours != theirs) errs += std::string("Alltoallv ") + t.name + "\n";
    // In place: counts symmetric (rank q sends rank j as many as j sends q), recvbuf both.
    std::vector<int> ic(n), id(n);
    int ix = 0;
    for (int j = 0; j < n; ++j) {
      ic[j] = (r + j) % 4 * 11;
      id[j] = ix;
      ix += ic[j] + 1;
    }
    std::vector<char> ip(std::max(ix, 1) * es), ipWant;
    fill(t, ip.data(), static_cast<size_t>(ix), r, MPI_SUM);
    ipWant = ip;
    MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, t.mpi, ipWant.data(), ic.data(), id.data(), t.mpi, MPI_COMM_WORLD);
    NCCL_OK(mcclMpiAlltoallv(MPI_IN_PLACE, nullptr, nullptr, ip.data(), ic.data(), id.data(), t.mpi, MPI_COMM_WORLD,
                             nullptr));
    if (ip != ipWant) errs += std::string("Alltoallv in place ") + t.name + "\n";

    // Gather and Scatter from every root, 29 elements a rank, and in place at the root.
    const size_t count = 29;
    std::vector<char> blockIn(count * es), all(count * n * es);
    fill(t, blockIn.data(), count, r, MPI_SUM);
    fill(t, all.data(), count * n, r + 7, MPI_SUM);
    for (int root = 0; root < n; ++root) {
      std::vector<char> g1(count * n * es, 0x55), g2 = g1;
      NCCL_OK(mcclMpiGather(blockIn.data(), g1.data(), count, t.mpi, root, MPI_COMM_WORLD, nullptr));
      MPI_Gather(blockIn.data(), static_cast<int>(count), t.mpi, g2.data(), static_cast<int>(count), t.mpi, root,
                 MPI_COMM_WORLD);
      if (r == root && g1 != g2) errs += std::string("Gather ") + t.name + "\n";
      std::vector<char> g3(count * n * es, 0x55);
      if (r == root) std::memcpy(g3.data() + root * count * es, blockIn.data(), count * es);
      NCCL_OK(mcclMpiGather(r == root ? MPI_IN_PLACE : blockIn.data(), g3.data(), count, t.mpi, root, MPI_COMM_WORLD,
                            nullptr));
      if (r == root && g3 != g2) errs += std::string("Gather in place ") + t.name + "\n";

      std::vector<char> s1(count * es, 0x66), s2 = s1;
      NCCL_OK(mcclMpiScatter(all.data(), s1.data(), count, t.mpi, root, MPI_COMM_WORLD, nullptr));
      MPI_Scatter(all.data(), static_cast<int>(count), t.mpi, s2.data(), static_cast<int>(count), t.mpi, root,
                  MPI_COMM_WORLD);
      if (s1 != s2) errs += std::string("Scatter ") + t.name + "\n";
      std::vector<char> s3 = all;
      NCCL_OK(mcclMpiScatter(s3.data(), r == root ? MPI_IN_PLACE : s1.data(), count, t.mpi, root, MPI_COMM_WORLD,
                             nullptr));
      if (r == root ? s3 != all : s1 != s2) errs += std::string("Scatter in place ") + t.name + "\n";
    }

    // Reduce_scatter: blocks of 0, 17, 34, ... elements (uneven), and all of 23 (even).
    for (bool even : {false, true}) {
      std::vector<int> rcounts(n);
      int total = 0;
      for (int q = 0; q < n; ++q) total += rcounts[q] = even ? 23 : q * 17;
      if (t.mpi == MPI_BYTE) continue;
      std::vector<char> x(std::max(total, 1) * es);
      fill(t, x.data(), static_cast<size_t>(total), r, MPI_SUM);
      std::vector<char> o1(std::max(rcounts[r], 1) * es, 0x77), o2 = o1;
      NCCL_OK(mcclMpiReduceScatter(x.data(), o1.data(), rcounts.data(), t.mpi, MPI_SUM, MPI_COMM_WORLD, nullptr));
      MPI_Reduce_scatter(x.data(), o2.data(), rcounts.data(), t.mpi, MPI_SUM, MPI_COMM_WORLD);
      if (o1 != o2) errs += std::string("Reduce_scatter ") + (even ? "even " : "") + t.name + "\n";
      std::vector<char> xi = x;
      NCCL_OK(mcclMpiReduceScatter(MPI_IN_PLACE, xi.data(), rcounts.data(), t.mpi, MPI_SUM, MPI_COMM_WORLD, nullptr));
      if (std::memcmp(xi.data(), o2.data(), rcounts[r] * es) != 0)
        errs += std::string("Reduce_scatter in place ") + (even ? "even " : "") + t.name + "\n";
    }
  }
  EXPECT_TRUE(errs.empty()) << errs;
  // Bad arrays are refused with a sentence.
  std::vector<int> c(n, 1), d(n, 0), neg(n, 1);
  neg[n - 1] = -1;
  std::vector<int> buf(n + 1);
  EXPECT_EQ(mcclMpiAllgatherv(buf.data(), 1, buf.data(), nullptr, d.data(), MPI_INT, MPI_COMM_WORLD, nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "recvcounts is NULL")) << ncclGetLastError(nullptr);
  EXPECT_EQ(mcclMpiAlltoallv(buf.data(), c.data(), neg.data(), buf.data(), c.data(), d.data(), MPI_INT, MPI_COMM_WORLD,
                             nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "negative")) << ncclGetLastError(nullptr);
  EXPECT_EQ(mcclMpiAllgatherv(buf.data(), 2, buf.data(), c.data(), d.data(), MPI_INT, MPI_COMM_WORLD, nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "sendcount")) << ncclGetLastError(nullptr);
  EXPECT_EQ(mcclMpiGather(MPI_IN_PLACE, buf.data(), 1, MPI_INT, n == 1 ? 1 : (r + 1) % n, MPI_COMM_WORLD, nullptr),
            ncclInvalidArgument);
  EXPECT_EQ(mcclMpiReduceScatter(buf.data(), buf.data(), c.data(), MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD, nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "MPI_MAXLOC"));
}

TEST(MpiTyped, UnsupportedDatatypesAndOperatorsAreNamed) {
  std::vector<int> buf(16, 1), out(16);
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  EXPECT_EQ(mcclMpiAllreduce(buf.data(), out.data(), 8, pair, MPI_SUM, MPI_COMM_WORLD, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "derived datatype")) << ncclGetLastError(nullptr);
  MPI_Type_free(&pair);
  EXPECT_EQ(mcclMpiAllreduce(buf.data(), out.data(), 8, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD, nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "MPI_2INT")) << ncclGetLastError(nullptr);
  EXPECT_EQ(mcclMpiAllreduce(buf.data(), out.data(), 16, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD, nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "MPI_MAXLOC"));
  EXPECT_EQ(mcclMpiAllreduce(buf.data(), out.data(), 16, MPI_INT, MPI_BAND, MPI_COMM_WORLD, nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "MPI_BAND"));
  MPI_Op user;
  MPI_Op_create([](void*, void*, int*, MPI_Datatype*) {}, 1, &user);
  EXPECT_EQ(mcclMpiAllreduce(buf.data(), out.data(), 16, MPI_INT, user, MPI_COMM_WORLD, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "user-defined"));
  MPI_Op_free(&user);
  EXPECT_EQ(mcclMpiAllreduce(buf.data(), out.data(), 16, MPI_SHORT, MPI_SUM, MPI_COMM_WORLD, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "MPI_SHORT"));
  EXPECT_EQ(mcclMpiAllreduce(buf.data(), out.data(), 16, MPI_BYTE, MPI_SUM, MPI_COMM_WORLD, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "MPI_BYTE"));
  EXPECT_EQ(mcclMpiBcast(buf.data(), 16, MPI_LONG_DOUBLE, 0, MPI_COMM_WORLD, nullptr), ncclInvalidArgument);
  EXPECT_EQ(mcclMpiComm(MPI_COMM_NULL, nullptr), ncclInvalidArgument);
  ncclComm_t c;
  EXPECT_EQ(mcclMpiComm(MPI_COMM_NULL, &c), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "MPI_COMM_NULL"));
  EXPECT_EQ(buf[0], 1);
}

TEST(MpiTyped, StreamSynchronizeWithoutGpuReturnsAtOnce) {
  // Host-only machines: host communicators finish their operations before returning, so
  // there is no stream to wait for, with or without a communicator to progress.
  NCCL_OK(mcclStreamSynchronize(nullptr, MPI_COMM_WORLD));
  NCCL_OK(mcclStreamSynchronize(nullptr, MPI_COMM_NULL));
}
