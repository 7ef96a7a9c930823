// GPU machine: libmccl_mpi linked before libmpi takes MPI collectives on device buffers to
// mccl (the counters prove it) with MPI's results (the v-forms, Gather and Scatter too); and mcclStreamSynchronize keeps MPI
// moving while a GPU collective waits for a rank that is blocked in MPI.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mccl_mpi.h"

namespace {
bool gpusForAll() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  int have = n > 0, all = 0;
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all) {
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    cudaSetDevice(r % n);
  }
  return all != 0;
}
}  // namespace

TEST(PreloadGpu, DeviceBuffersGoToMcclWithMpiResults) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  uint64_t m0, p0;
  mcclMpiPathCounters(&m0, &p0);
  const int count = 1 << 20;
  std::vector<float> h(count), want(count), got(count);
  for (int i = 0; i < count; ++i) h[i] = static_cast<float>(r + 1 + i % 5);
  float *d, *dout;
  cudaMalloc(&d, count * sizeof(float) * n);
  cudaMalloc(&dout, count * sizeof(float) * n);
  cudaMemcpy(d, h.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  MPI_Allreduce(d, dout, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);           // device: mccl
  MPI_Allreduce(h.data(), want.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);  // host: MPI
  cudaMemcpy(got.data(), dout, count * sizeof(float), cudaMemcpyDeviceToHost);
  EXPECT_EQ(got, want);
  MPI_Bcast(d, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
  MPI_Reduce(d, dout, count, MPI_FLOAT, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Allgather(d, count, MPI_FLOAT, dout, count, MPI_FLOAT, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(dout, d, count / n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Alltoall(dout, count, MPI_FLOAT, d, count, MPI_FLOAT, MPI_COMM_WORLD);
  cudaMemcpy(got.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost);
  EXPECT_EQ(got[0], 1.0f);  // alltoall of the allgather of rank 0's broadcast data
  // Small device buffers: this MPI is not CUDA-aware, so mccl keeps them too.
  MPI_Allreduce(MPI_IN_PLACE, d, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  uint64_t m1, p1;
  mcclMpiPathCounters(&m1, &p1);
  EXPECT_GE(m1 - m0, 7u);
  cudaFree(d);
  cudaFree(dout);
}

TEST(PreloadGpu, StreamSynchronizeDrivesMpiWhileAKernelWaits) {
  // Rank 0 has a large MPI_Isend to rank 1 in flight and waits for its GPU AllReduce with
  // mcclStreamSynchronize; rank 1 first receives (needing rank 0's MPI progress), then
  // joins the AllReduce. Without progress in the wait, both would stall.
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) GTEST_SKIP();
  ncclComm_t comm;
  ASSERT_EQ(mcclMpiComm(MPI_COMM_WORLD, &comm), ncclSuccess);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  float* d;
  cudaMalloc(&d, 1 << 20);
  cudaMemset(d, 0, 1 << 20);
  ASSERT_EQ(ncclAllReduce(d, d, 1 << 18, ncclFloat, ncclSum, comm, s), ncclSuccess);  // connect first
  ASSERT_EQ(mcclStreamSynchronize(s, MPI_COMM_WORLD), ncclSuccess);
  std::vector<char> big(32 << 20, static_cast<char>(r));
  if (r == 0) {
    MPI_Request req;
    MPI_Isend(big.data(), static_cast<int>(big.size()), MPI_CHAR, 1, 5, MPI_COMM_WORLD, &req);
    ASSERT_EQ(ncclAllReduce(d, d, 1 << 18, ncclFloat, ncclSum, comm, s), ncclSuccess);
    ASSERT_EQ(mcclStreamSynchronize(s, MPI_COMM_WORLD), ncclSuccess);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    if (r == 1) MPI_Recv(big.data(), static_cast<int>(big.size()), MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ASSERT_EQ(ncclAllReduce(d, d, 1 << 18, ncclFloat, ncclSum, comm, s), ncclSuccess);
    ASSERT_EQ(mcclStreamSynchronize(s, MPI_COMM_WORLD), ncclSuccess);
  }
  cudaFree(d);
  cudaStreamDestroy(s);
}

// Small collectives on device buffers return once their kernel raised a word in host memory
// (core/completion.h), without asking the stream: right after each call, a copy on a stream
// that waits for nothing else takes the result, and it must be this call's, for 200 calls of
// every collective the word serves (inputs change every call, so a call that returned early
// leaves the previous call's values), in place and out of place, at sizes from one element to
// the LL protocol's largest. The sums are exact in float (small integers), checked against
// values computed here in double.
TEST(PreloadGpu, SmallCallsReturnWithTheirOwnResults) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int kMax = 16 << 10;  // floats: 64 KiB a rank
  float *in, *out, *seen;
  ASSERT_EQ(cudaMalloc(&in, sizeof(float) * kMax * n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, sizeof(float) * kMax * n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&seen, sizeof(float) * kMax * n), cudaSuccess);
  cudaStream_t side;  // waits for no other stream (not even the legacy one)
  ASSERT_EQ(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), cudaSuccess);
  std::vector<float> h(static_cast<size_t>(kMax) * n), got(static_cast<size_t>(kMax) * n);
  auto value = [](int rank, int call, int i) { return static_cast<float>((rank + 1) * 3 + call % 97 + i % 13); };
  uint64_t w0, s0, c0, p0;
  mcclMpiWaitCounters(&w0, &s0);
  mcclMpiReplayCounters(&c0, &p0);
  int calls = 0, wrong = 0;
  const char* names[] = {"MPI_Allreduce", "MPI_Allreduce in place", "MPI_Bcast", "MPI_Reduce", "MPI_Allgather"};
  for (int count : {1, 2, 7, 1000, kMax}) {
    for (int kind = 0; kind < 5; ++kind) {
      for (int call = 0; call < 200; ++call) {
        const int root = call % n;
        for (int i = 0; i < count; ++i) h[i] = value(r, call, i);
        ASSERT_EQ(cudaMemcpy(kind == 1 ? out : in, h.data(), sizeof(float) * count, cudaMemcpyHostToDevice),
                  cudaSuccess);
        size_t outCount = static_cast<size_t>(count);
        const float* result = out;
        switch (kind) {
          case 0: MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
          case 1: MPI_Allreduce(MPI_IN_PLACE, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
          case 2: MPI_Bcast(in, count, MPI_FLOAT, root, MPI_COMM_WORLD); result = in; break;
          case 3: MPI_Reduce(in, out, count, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD); break;
          default:
            MPI_Allgather(in, count, MPI_FLOAT, out, count, MPI_FLOAT, MPI_COMM_WORLD);
            outCount *= static_cast<size_t>(n);
        }
        ASSERT_EQ(cudaMemcpyAsync(seen, result, sizeof(float) * outCount, cudaMemcpyDeviceToDevice, side),
                  cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(side), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(got.data(), seen, sizeof(float) * outCount, cudaMemcpyDeviceToHost), cudaSuccess);
        ++calls;
        if (kind == 3 && r != root) continue;  // a Reduce's result is the root's alone
        bool ok = true;
        for (size_t i = 0; i < outCount && ok; ++i) {
          const int at = static_cast<int>(i % static_cast<size_t>(count));
          double want = 0;
          if (kind <= 1 || kind == 3)
            for (int q = 0; q < n; ++q) want += value(q, call, at);
          else if (kind == 2)
            want = value(root, call, at);
          else
            want = value(static_cast<int>(i / static_cast<size_t>(count)), call, at);
          ok = static_cast<double>(got[i]) == want;
          if (!ok)
            ADD_FAILURE() << names[kind] << " of " << count << " floats, call " << call << ", element " << i
                          << ": " << got[i] << " where this call's result is " << want;
        }
        wrong += ok ? 0 : 1;
        if (wrong > 3) FAIL() << "stopped after 4 wrong calls";
      }
    }
  }
  uint64_t w1, s1;
  mcclMpiWaitCounters(&w1, &s1);
  // Every call reached mccl (below the threshold an MPI that is not CUDA-aware keeps nothing);
  // with two GPUs or more the small ones ran LL kernels that raise the word.
  EXPECT_EQ((w1 - w0) + (s1 - s0), static_cast<uint64_t>(calls));
  if (n > 1) EXPECT_GT(w1 - w0, static_cast<uint64_t>(calls) / 2) << "waits on the stream: " << s1 - s0;
  // The same call again (same buffers and arguments, inputs changed) replays its graph: but
  // the first sight of each, the calls above 64 KiB and, on more ranks than two, a root's
  // call made too seldom.
  uint64_t c1, p1;
  mcclMpiReplayCounters(&c1, &p1);
  const char* graphBytes = std::getenv("MCCL_MPI_GRAPH_BYTES");  // 65536 by default
  const long long graphMax = graphBytes ? std::atoll(graphBytes) : 65536;
  if (graphMax <= 0) EXPECT_EQ(p1 - p0, 0u);
  else if (graphMax >= 65536 && n > 1)
    EXPECT_GT(p1 - p0, static_cast<uint64_t>(calls) / 2) << "graphs captured: " << c1 - c0;
  cudaStreamDestroy(side);
  cudaFree(in);
  cudaFree(out);
  cudaFree(seen);
}

// Small blocking calls made again with the same arguments replay a CUDA graph of their kernel
// (MCCL_MPI_GRAPH_BYTES, 65536 by default; set to 0, none may replay). Rank 0 calls on the same
// buffers every time (captured at its second call, replayed after); every other rank on one of
// 40 places in turn, more than the 32 graphs a thread keeps, so each of its calls runs as
// launched: replays and launches of one collective pair across ranks. Every type and operator
// below, in place and out of place, inputs new each call and the result taken right after by a
// stream that waits for nothing else; then a communicator duplicated, used, freed and duplicated
// again (its graphs must go with it), against values computed here in double.
TEST(PreloadGpu, RepeatedSmallCallsReplayGraphsBesideLaunchedOnes) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const char* graphBytes = std::getenv("MCCL_MPI_GRAPH_BYTES");
  const bool graphs = graphBytes == nullptr || std::atoll(graphBytes) >= 64;
  constexpr int kPlaces = 40, kCount = 8;  // 8 elements: at most 64 bytes a call
  double* pool;  // kPlaces places of kCount doubles, in and out
  ASSERT_EQ(cudaMalloc(&pool, sizeof(double) * kCount * kPlaces * 2), cudaSuccess);
  double* seen;
  ASSERT_EQ(cudaMalloc(&seen, sizeof(double) * kCount), cudaSuccess);
  cudaStream_t side;
  ASSERT_EQ(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), cudaSuccess);
  // Small integers: every sum, product, minimum and maximum is exact in each type.
  auto value = [](int rank, int call, int i) { return static_cast<double>((rank * 5 + call * 3 + i) % 7 + 1); };
  struct Case {
    MPI_Datatype dt;
    size_t size;
    MPI_Op op;
  };
  const Case cases[] = {{MPI_DOUBLE, 8, MPI_SUM}, {MPI_FLOAT, 4, MPI_MAX}, {MPI_INT, 4, MPI_MIN},
                        {MPI_LONG_LONG, 8, MPI_PROD}, {MPI_UNSIGNED, 4, MPI_SUM}};
  auto put = [&](void* dst, const Case& c, int call) {
    std::vector<unsigned char> b(c.size * kCount);
    for (int i = 0; i < kCount; ++i) {
      const double v = value(r, call, i);
      if (c.dt == MPI_DOUBLE) reinterpret_cast<double*>(b.data())[i] = v;
      else if (c.dt == MPI_FLOAT) reinterpret_cast<float*>(b.data())[i] = static_cast<float>(v);
      else if (c.dt == MPI_INT) reinterpret_cast<int*>(b.data())[i] = static_cast<int>(v);
      else if (c.dt == MPI_LONG_LONG) reinterpret_cast<long long*>(b.data())[i] = static_cast<long long>(v);
      else reinterpret_cast<unsigned*>(b.data())[i] = static_cast<unsigned>(v);
    }
    ASSERT_EQ(cudaMemcpy(dst, b.data(), b.size(), cudaMemcpyHostToDevice), cudaSuccess);
  };
  auto check = [&](const void* result, const Case& c, int call, const char* what) {
    ASSERT_EQ(cudaMemcpyAsync(seen, result, c.size * kCount, cudaMemcpyDeviceToDevice, side), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(side), cudaSuccess);
    std::vector<unsigned char> b(c.size * kCount);
    ASSERT_EQ(cudaMemcpy(b.data(), seen, b.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < kCount; ++i) {
      double want = value(0, call, i);
      for (int q = 1; q < n; ++q) {
        const double x = value(q, call, i);
        want = c.op == MPI_SUM ? want + x : c.op == MPI_PROD ? want * x : c.op == MPI_MAX ? std::max(want, x)
                                                                                          : std::min(want, x);
      }
      double got;
      if (c.dt == MPI_DOUBLE) got = reinterpret_cast<double*>(b.data())[i];
      else if (c.dt == MPI_FLOAT) got = reinterpret_cast<float*>(b.data())[i];
      else if (c.dt == MPI_INT) got = reinterpret_cast<int*>(b.data())[i];
      else if (c.dt == MPI_LONG_LONG) got = static_cast<double>(reinterpret_cast<long long*>(b.data())[i]);
      else got = reinterpret_cast<unsigned*>(b.data())[i];
      ASSERT_EQ(got, want) << what << ", call " << call << ", element " << i;
    }
  };
  uint64_t c0, p0;
  mcclMpiReplayCounters(&c0, &p0);
  const int kCalls = 60;
  for (const Case& c : cases) {
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      for (int call = 0; call < kCalls; ++call) {
        const int place = r == 0 ? 0 : call % kPlaces;
        char* in = reinterpret_cast<char*>(pool) + c.size * kCount * place;
        char* out = in + c.size * kCount * kPlaces;
        put(inPlace ? out : in, c, call);
        ASSERT_EQ(MPI_Allreduce(inPlace ? MPI_IN_PLACE : in, out, kCount, c.dt, c.op, MPI_COMM_WORLD), MPI_SUCCESS);
        check(out, c, call, inPlace ? "MPI_Allreduce in place" : "MPI_Allreduce");
      }
    }
  }
  uint64_t c1, p1;
  mcclMpiReplayCounters(&c1, &p1);
  const uint64_t series = sizeof cases / sizeof cases[0] * 2;
  if (!graphs || n == 1) EXPECT_EQ(p1 - p0, 0u);
  else if (r == 0) EXPECT_EQ(p1 - p0, series * (kCalls - 1)) << "graphs captured: " << c1 - c0;
  else EXPECT_EQ(p1 - p0, 0u) << "every call of this rank is at a new place";
  // A communicator made, used, freed and made again: its graphs go with it.
  for (int round = 0; round < 2; ++round) {
    MPI_Comm dup;
    ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
    const Case& c = cases[0];
    for (int call = 0; call < 20; ++call) {
      put(pool, c, call + round * 100);
      ASSERT_EQ(MPI_Allreduce(MPI_IN_PLACE, pool, kCount, c.dt, c.op, dup), MPI_SUCCESS);
      check(pool, c, call + round * 100, "MPI_Allreduce on a duplicated communicator");
    }
    MPI_Comm_free(&dup);
  }
  cudaStreamDestroy(side);
  cudaFree(seen);
  cudaFree(pool);
}

// Gather, Scatter, Allgatherv, Alltoallv and Reduce_scatter on device buffers go to mccl and
// give what MPI gives on host copies of the same data: blocks of different sizes with gaps,
// every root, the in-place forms, and an Alltoallv where the last rank sends and receives
// nothing through NULL buffers (the ranks vote, so it follows the others to mccl).
TEST(PreloadGpu, VFormsGatherScatterOnDeviceBuffers) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const size_t kBig = 1 << 19;  // floats: 2 MiB, above MCCL_MPI_THRESHOLD
  auto value = [](int rank, size_t i) { return static_cast<float>((rank + 1) * 10 + static_cast<int>(i % 101)); };
  std::vector<float> h(kBig * (n + 1)), want, got;
  float *d, *dout;
  ASSERT_EQ(cudaMalloc(&d, sizeof(float) * kBig * (n + 1)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, sizeof(float) * kBig * (n + 1)), cudaSuccess);
  auto put = [&](float* dst, const std::vector<float>& src, size_t count) {
    ASSERT_EQ(cudaMemcpy(dst, src.data(), sizeof(float) * count, cudaMemcpyHostToDevice), cudaSuccess);
  };
  auto take = [&](const float* src, size_t count) {
    got.assign(count, 0);
    EXPECT_EQ(cudaMemcpy(got.data(), src, sizeof(float) * count, cudaMemcpyDeviceToHost), cudaSuccess);
  };
  uint64_t m0, p0;
  mcclMpiPathCounters(&m0, &p0);
  int routed = 0;
  for (size_t i = 0; i < h.size(); ++i) h[i] = value(r, i);

  // Gather and Scatter from every root, kBig / n floats a rank; in place at the root.
  const int c = static_cast<int>(kBig / n);
  for (int root = 0; root < n; ++root) {
    put(d, h, kBig);
    want.assign(static_cast<size_t>(c) * n, -1);
    MPI_Gather(h.data(), c, MPI_FLOAT, want.data(), c, MPI_FLOAT, root, MPI_COMM_WORLD);  // host: MPI
    MPI_Gather(d, c, MPI_FLOAT, dout, c, MPI_FLOAT, root, MPI_COMM_WORLD);
    take(dout, want.size());
    if (r == root) EXPECT_EQ(got, want) << "Gather to " << root;
    if (r == root) put(dout + static_cast<size_t>(root) * c, h, static_cast<size_t>(c));
    MPI_Gather(r == root ? MPI_IN_PLACE : d, c, MPI_FLOAT, dout, c, MPI_FLOAT, root, MPI_COMM_WORLD);
    take(dout, want.size());
    if (r == root) EXPECT_EQ(got, want) << "Gather in place to " << root;
    want.assign(static_cast<size_t>(c), -1);
    MPI_Scatter(h.data(), c, MPI_FLOAT, want.data(), c, MPI_FLOAT, root, MPI_COMM_WORLD);
    MPI_Scatter(d, c, MPI_FLOAT, dout, c, MPI_FLOAT, root, MPI_COMM_WORLD);
    take(dout, want.size());
    EXPECT_EQ(got, want) << "Scatter from " << root;
    MPI_Scatter(d, c, MPI_FLOAT, r == root ? MPI_IN_PLACE : dout, c, MPI_FLOAT, root, MPI_COMM_WORLD);
    take(r == root ? d + static_cast<size_t>(root) * c : dout, want.size());
    EXPECT_EQ(got, want) << "Scatter in place from " << root;
    routed += 4;
  }

  // Allgatherv: rank q gives (q + 1) * kBig / (2n) floats, blocks in reverse order, gaps of 5.
  std::vector<int> counts(n), displs(n);
  int extent = 0;
  for (int q = n - 1; q >= 0; --q) {
    counts[q] = static_cast<int>((q + 1) * kBig / (2 * n));
    displs[q] = extent;
    extent += counts[q] + 5;
  }
  want.assign(static_cast<size_t>(extent), -1);
  put(d, h, kBig);
  put(dout, want, want.size());
  MPI_Allgatherv(h.data(), counts[r], MPI_FLOAT, want.data(), counts.data(), displs.data(), MPI_FLOAT, MPI_COMM_WORLD);
  MPI_Allgatherv(d, counts[r], MPI_FLOAT, dout, counts.data(), displs.data(), MPI_FLOAT, MPI_COMM_WORLD);
  take(dout, want.size());
  EXPECT_EQ(got, want) << "Allgatherv";
  std::vector<float> fresh(static_cast<size_t>(extent), -1);
  std::copy(h.begin(), h.begin() + counts[r], fresh.begin() + displs[r]);
  put(dout, fresh, fresh.size());
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_FLOAT, dout, counts.data(), displs.data(), MPI_FLOAT, MPI_COMM_WORLD);
  take(dout, want.size());
  EXPECT_EQ(got, want) << "Allgatherv in place";
  routed += 2;

  // Alltoallv: (r + j + 1) * kBig / (4n) floats to rank j; the last rank (of 2 or more)
  // sends and receives nothing, with NULL buffers.
  const bool idle = n > 1 && r == n - 1;
  auto blk = [&](int q, int j) { return (n > 1 && (q == n - 1 || j == n - 1)) ? 0 : (q + j + 1) * static_cast<int>(kBig) / (4 * n); };
  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  int sx = 0, rx = 0;
  for (int j = 0; j < n; ++j) {
    sc[j] = blk(r, j);
    sd[j] = sx;
    sx += sc[j];
    rc[j] = blk(j, r);
    rd[j] = rx;
    rx += rc[j] + 3;
  }
  want.assign(static_cast<size_t>(std::max(rx, 1)), -1);
  put(dout, want, want.size());
  MPI_Alltoallv(h.data(), sc.data(), sd.data(), MPI_FLOAT, want.data(), rc.data(), rd.data(), MPI_FLOAT, MPI_COMM_WORLD);
  MPI_Alltoallv(idle ? nullptr : d, sc.data(), sd.data(), MPI_FLOAT, idle ? nullptr : dout, rc.data(), rd.data(),
                MPI_FLOAT, MPI_COMM_WORLD);
  take(dout, want.size());
  if (!idle) EXPECT_EQ(got, want) << "Alltoallv";
  // In place (sendcounts and sdispls NULL): rank q and rank j exchange (q + j) % 3 blocks.
  std::vector<int> ic(n), id(n);
  int ix = 0;
  for (int j = 0; j < n; ++j) {
    ic[j] = (r + j) % 3 * static_cast<int>(kBig) / (8 * n);
    id[j] = ix;
    ix += ic[j] + 1;
  }
  want.assign(h.begin(), h.begin() + std::max(ix, 1));
  put(dout, want, want.size());
  MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_FLOAT, want.data(), ic.data(), id.data(), MPI_FLOAT, MPI_COMM_WORLD);
  MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_FLOAT, dout, ic.data(), id.data(), MPI_FLOAT, MPI_COMM_WORLD);
  take(dout, want.size());
  EXPECT_EQ(got, want) << "Alltoallv in place";
  routed += 2;

  // Reduce_scatter: blocks of (q + 1) * kBig / (n (n + 1)) floats, from d and in place.
  std::vector<int> rcounts(n);
  int total = 0;
  for (int q = 0; q < n; ++q) total += rcounts[q] = static_cast<int>((q + 1) * 2 * kBig / (n * (n + 1)));
  want.assign(static_cast<size_t>(rcounts[r]), -1);
  put(d, h, static_cast<size_t>(total));
  MPI_Reduce_scatter(h.data(), want.data(), rcounts.data(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Reduce_scatter(d, dout, rcounts.data(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  take(dout, want.size());
  EXPECT_EQ(got, want) << "Reduce_scatter";
  MPI_Reduce_scatter(MPI_IN_PLACE, d, rcounts.data(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  take(d, want.size());
  EXPECT_EQ(got, want) << "Reduce_scatter in place";
  routed += 2;

  uint64_t m1, p1;
  mcclMpiPathCounters(&m1, &p1);
  EXPECT_EQ(m1 - m0, static_cast<uint64_t>(routed)) << "device-buffer calls that went to mccl";
  cudaFree(d);
  cudaFree(dout);
}

// A Fortran program's calls (Open MPI's Fortran bindings call PMPI_* directly, so only the
// preload's Fortran names can see them), here made as Fortran would make them, on device
// buffers: they go to mccl (the counters) with MPI's results, Fortran's MPI_IN_PLACE too.
extern "C" {
extern int mpi_fortran_in_place_;
void mpi_allreduce_(void*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void ompi_allreduce_f(void*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*);
void mpi_alltoallv_(void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, void*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
                    MPI_Fint*);
}

TEST(PreloadGpu, FortranCallsOnDeviceBuffersGoToMccl) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int kCount = 1 << 19;  // 2 MiB of REAL, 4 MiB of DOUBLE PRECISION
  MPI_Fint comm = MPI_Comm_c2f(MPI_COMM_WORLD), real = MPI_Type_c2f(MPI_REAL),
           dbl = MPI_Type_c2f(MPI_DOUBLE_PRECISION), sum = MPI_Op_c2f(MPI_SUM), ierr = -1, count = kCount;
  std::vector<double> h(kCount), want(kCount), got(kCount);
  for (int i = 0; i < kCount; ++i) h[i] = r + i % 9;
  double *d, *dout;
  ASSERT_EQ(cudaMalloc(&d, sizeof(double) * kCount), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, sizeof(double) * kCount), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d, h.data(), sizeof(double) * kCount, cudaMemcpyHostToDevice), cudaSuccess);
  uint64_t m0, p0;
  mcclMpiPathCounters(&m0, &p0);
  MPI_Allreduce(h.data(), want.data(), kCount, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  mpi_allreduce_(d, dout, &count, &dbl, &sum, &comm, &ierr);
  EXPECT_EQ(ierr, MPI_SUCCESS);
  ASSERT_EQ(cudaMemcpy(got.data(), dout, sizeof(double) * kCount, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, want) << "MPI_ALLREDUCE of DOUBLE PRECISION";
  ompi_allreduce_f(&mpi_fortran_in_place_, d, &count, &dbl, &sum, &comm, &ierr);  // `use mpi_f08`, in place
  ASSERT_EQ(cudaMemcpy(got.data(), d, sizeof(double) * kCount, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, want) << "MPI_ALLREDUCE in place";
  // Alltoallv of REAL: kCount / (2n) to each rank.
  std::vector<MPI_Fint> cnt(n, kCount / (2 * n)), dsp(n);
  for (int q = 0; q < n; ++q) dsp[q] = q * (kCount / (2 * n));
  std::vector<float> hs(kCount / 2), wantf(kCount / 2, -1), gotf(kCount / 2);
  for (int i = 0; i < kCount / 2; ++i) hs[i] = static_cast<float>(r * 1000 + i % 997);
  float* fs = reinterpret_cast<float*>(d);
  float* fr = reinterpret_cast<float*>(dout);
  ASSERT_EQ(cudaMemcpy(fs, hs.data(), sizeof(float) * hs.size(), cudaMemcpyHostToDevice), cudaSuccess);
  // What no block covers (kCount / 2 is not a multiple of n) stays -1 on both sides.
  ASSERT_EQ(cudaMemcpy(fr, wantf.data(), sizeof(float) * wantf.size(), cudaMemcpyHostToDevice), cudaSuccess);
  MPI_Alltoallv(hs.data(), cnt.data(), dsp.data(), MPI_FLOAT, wantf.data(), cnt.data(), dsp.data(), MPI_FLOAT,
                MPI_COMM_WORLD);
  mpi_alltoallv_(fs, cnt.data(), dsp.data(), &real, fr, cnt.data(), dsp.data(), &real, &comm, &ierr);
  ASSERT_EQ(cudaMemcpy(gotf.data(), fr, sizeof(float) * gotf.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(gotf, wantf) << "MPI_ALLTOALLV of REAL";
  uint64_t m1, p1;
  mcclMpiPathCounters(&m1, &p1);
  EXPECT_EQ(m1 - m0, 3u) << "Fortran calls on device buffers that went to mccl";
  cudaFree(d);
  cudaFree(dout);
}

// The nonblocking forms on device buffers go to mccl and hand back requests that MPI's own
// waits complete (generalized requests completed from MPI's progress engine): all eleven in
// flight at once on distinct buffers, then one MPI_Waitall, each result MPI's on host copies;
// two communicators started in opposite orders on even and odd ranks (one stream per
// communicator, so neither queues behind the other); a rank whose peer first needs its MPI
// progress for a large message; a request freed unwaited, then a blocking call that uses its
// result. Under MCCL_MPI_NONBLOCKING=0 on an MPI that cannot take device buffers (the GPU
// machine's), mccl runs each call to its end inside it: every request is complete when
// handed out, and the two parts that need calls in flight together are left out.
TEST(PreloadGpu, NonblockingCollectivesOnDeviceBuffers) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  const char* knob = std::getenv("MCCL_MPI_NONBLOCKING");
  const bool inCall = knob != nullptr && std::string(knob) == "0";
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int c = 1 << 18;  // floats a block: 1 MiB, at MCCL_MPI_THRESHOLD
  const size_t all = static_cast<size_t>(c) * n;
  auto value = [&](size_t i) { return static_cast<float>((r + 1) * 7 + static_cast<int>(i % 89)); };
  std::vector<float> h(all);
  for (size_t i = 0; i < all; ++i) h[i] = value(i);
  std::vector<int> counts(n), displs(n), rcounts(n);
  int extent = 0, total = 0;
  for (int q = 0; q < n; ++q) {
    counts[q] = c / 2 + q * 64;  // Allgatherv, Alltoallv: different blocks, gaps of 3
    displs[q] = extent;
    extent += counts[q] + 3;
    total += rcounts[q] = c / 4 + q * 32;  // Reduce_scatter
  }
  const int root = n - 1;
  struct Case {
    const char* name;
    size_t outCount;
    std::function<int(const float* in, float* out, MPI_Request* req)> start;  // req NULL: blocking
  };
  std::vector<Case> cases = {
      {"Iallreduce", all, [&](const float* in, float* out, MPI_Request* q) {
         return q ? MPI_Iallreduce(in, out, static_cast<int>(all), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, q)
                  : MPI_Allreduce(in, out, static_cast<int>(all), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
       }},
      {"Ireduce", all, [&](const float* in, float* out, MPI_Request* q) {
         return q ? MPI_Ireduce(in, out, static_cast<int>(all), MPI_FLOAT, MPI_MAX, root, MPI_COMM_WORLD, q)
                  : MPI_Reduce(in, out, static_cast<int>(all), MPI_FLOAT, MPI_MAX, root, MPI_COMM_WORLD);
       }},
      {"Ibcast", all, [&](const float*, float* out, MPI_Request* q) {  // out holds the input (set below)
         return q ? MPI_Ibcast(out, static_cast<int>(all), MPI_FLOAT, 0, MPI_COMM_WORLD, q)
                  : MPI_Bcast(out, static_cast<int>(all), MPI_FLOAT, 0, MPI_COMM_WORLD);
       }},
      {"Iallgather", all, [&](const float* in, float* out, MPI_Request* q) {
         return q ? MPI_Iallgather(in, c, MPI_FLOAT, out, c, MPI_FLOAT, MPI_COMM_WORLD, q)
                  : MPI_Allgather(in, c, MPI_FLOAT, out, c, MPI_FLOAT, MPI_COMM_WORLD);
       }},
      {"Ireduce_scatter_block", static_cast<size_t>(c), [&](const float* in, float* out, MPI_Request* q) {
         return q ? MPI_Ireduce_scatter_block(in, out, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, q)
                  : MPI_Reduce_scatter_block(in, out, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
       }},
      {"Ialltoall", all, [&](const float* in, float* out, MPI_Request* q) {
         return q ? MPI_Ialltoall(in, c, MPI_FLOAT, out, c, MPI_FLOAT, MPI_COMM_WORLD, q)
                  : MPI_Alltoall(in, c, MPI_FLOAT, out, c, MPI_FLOAT, MPI_COMM_WORLD);
       }},
      {"Igather", all, [&](const float* in, float* out, MPI_Request* q) {
         return q ? MPI_Igather(in, c, MPI_FLOAT, out, c, MPI_FLOAT, root, MPI_COMM_WORLD, q)
                  : MPI_Gather(in, c, MPI_FLOAT, out, c, MPI_FLOAT, root, MPI_COMM_WORLD);
       }},
      {"Iscatter", static_cast<size_t>(c), [&](const float* in, float* out, MPI_Request* q) {
         return q ? MPI_Iscatter(in, c, MPI_FLOAT, out, c, MPI_FLOAT, 0, MPI_COMM_WORLD, q)
                  : MPI_Scatter(in, c, MPI_FLOAT, out, c, MPI_FLOAT, 0, MPI_COMM_WORLD);
       }},
      {"Iallgatherv", static_cast<size_t>(extent), [&](const float* in, float* out, MPI_Request* q) {
         return q ? MPI_Iallgatherv(in, counts[r], MPI_FLOAT, out, counts.data(), displs.data(), MPI_FLOAT,
                                    MPI_COMM_WORLD, q)
                  : MPI_Allgatherv(in, counts[r], MPI_FLOAT, out, counts.data(), displs.data(), MPI_FLOAT,
                                   MPI_COMM_WORLD);
       }},
      {"Ireduce_scatter", static_cast<size_t>(rcounts[r]), [&](const float* in, float* out, MPI_Request* q) {
         return q ? MPI_Ireduce_scatter(in, out, rcounts.data(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, q)
                  : MPI_Reduce_scatter(in, out, rcounts.data(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
       }},
      {"Ialltoallv", static_cast<size_t>(extent), [&](const float* in, float* out, MPI_Request* q) {
         // Ranks q and j exchange counts[min(q, j)] / 2 floats: sent from j * (c / 2 + 64 n),
         // received at displs[j] (gaps between the blocks stay -1).
         std::vector<int> sc(n), sd(n), rc(n), rd(n);
         for (int j = 0; j < n; ++j) {
           sc[j] = counts[std::min(r, j)] / 2;
           sd[j] = j * (c / 2 + 64 * n);
           rc[j] = counts[std::min(r, j)] / 2;
           rd[j] = displs[j];
         }
         return q ? MPI_Ialltoallv(in, sc.data(), sd.data(), MPI_FLOAT, out, rc.data(), rd.data(), MPI_FLOAT,
                                   MPI_COMM_WORLD, q)
                  : MPI_Alltoallv(in, sc.data(), sd.data(), MPI_FLOAT, out, rc.data(), rd.data(), MPI_FLOAT,
                                  MPI_COMM_WORLD);
       }},
  };
  const size_t inCount = std::max(all, static_cast<size_t>(total) + static_cast<size_t>(n) * (c / 2 + 64 * n));
  h.resize(inCount);
  for (size_t i = 0; i < inCount; ++i) h[i] = value(i);
  const size_t k = cases.size();
  std::vector<float*> din(k), dout(k);
  std::vector<std::vector<float>> want(k);
  for (size_t i = 0; i < k; ++i) {
    ASSERT_EQ(cudaMalloc(&din[i], sizeof(float) * inCount), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dout[i], sizeof(float) * std::max(cases[i].outCount, all)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(din[i], h.data(), sizeof(float) * inCount, cudaMemcpyHostToDevice), cudaSuccess);
    // Every output starts as -1, or as the input for the Bcast; MPI's reference the same.
    want[i].assign(std::max(cases[i].outCount, all), -1.0f);
    if (std::string(cases[i].name) == "Ibcast") std::copy(h.begin(), h.begin() + all, want[i].begin());
    ASSERT_EQ(cudaMemcpy(dout[i], want[i].data(), sizeof(float) * want[i].size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cases[i].start(h.data(), want[i].data(), nullptr), MPI_SUCCESS) << cases[i].name;  // host: MPI
  }
  uint64_t m0, p0;
  mcclMpiPathCounters(&m0, &p0);
  std::vector<MPI_Request> reqs(k, MPI_REQUEST_NULL);
  for (size_t i = 0; i < k; ++i) ASSERT_EQ(cases[i].start(din[i], dout[i], &reqs[i]), MPI_SUCCESS) << cases[i].name;
  for (size_t i = 0; inCall && i < k; ++i) {
    int flag = 0;
    ASSERT_EQ(MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(flag, 1) << cases[i].name << ": not complete when handed out under MCCL_MPI_NONBLOCKING=0";
  }
  ASSERT_EQ(MPI_Waitall(static_cast<int>(k), reqs.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
  uint64_t m1, p1;
  mcclMpiPathCounters(&m1, &p1);
  EXPECT_EQ(m1 - m0, static_cast<uint64_t>(k)) << "nonblocking calls on device buffers that went to mccl";
  std::vector<float> got;
  for (size_t i = 0; i < k; ++i) {
    EXPECT_EQ(reqs[i], MPI_REQUEST_NULL);
    got.assign(want[i].size(), 0);
    ASSERT_EQ(cudaMemcpy(got.data(), dout[i], sizeof(float) * got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    const bool rootOnly = std::string(cases[i].name) == "Ireduce" || std::string(cases[i].name) == "Igather";
    if (!rootOnly || r == root) EXPECT_EQ(got, want[i]) << cases[i].name;
  }

  // Two communicators in opposite orders on even and odd ranks, waited for by MPI_Test. A
  // communicator's first call on device buffers makes its mccl communicator, collectively
  // (as a blocking call would), so each has one call first, in the same order everywhere.
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  ASSERT_EQ(MPI_Allreduce(din[0], dout[4], static_cast<int>(all), MPI_FLOAT, MPI_SUM, a), MPI_SUCCESS);
  ASSERT_EQ(MPI_Allreduce(din[0], dout[4], static_cast<int>(all), MPI_FLOAT, MPI_SUM, b), MPI_SUCCESS);
  if (inCall) std::printf("MCCL_MPI_NONBLOCKING=0: calls in flight together left out\n");
  MPI_Request two[2];
  MPI_Comm first = r % 2 ? b : a, second = r % 2 ? a : b;
  float* x = r % 2 ? dout[1] : dout[0];  // a's output on dout[0], b's on dout[1]
  float* y = r % 2 ? dout[0] : dout[1];
  for (int flag = 0, i = 0; !inCall && !flag; ++i) {
    if (i == 0) {
      ASSERT_EQ(MPI_Iallreduce(din[0], x, static_cast<int>(all), MPI_FLOAT, MPI_SUM, first, &two[0]), MPI_SUCCESS);
      ASSERT_EQ(MPI_Iallreduce(din[1], y, static_cast<int>(all), MPI_FLOAT, MPI_SUM, second, &two[1]), MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Testall(2, two, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    ASSERT_LT(i, 50000000) << "the two communicators' requests never completed";
  }
  for (int i = 0; !inCall && i < 2; ++i) {
    got.assign(all, 0);
    ASSERT_EQ(cudaMemcpy(got.data(), dout[i], sizeof(float) * all, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want[0].begin())) << "Iallreduce on communicator " << i;
  }

  // Rank 0 starts its Iallreduce, then sends rank 1 a large message that needs rank 0's MPI
  // progress; rank 1 receives it before it starts its own.
  if (n >= 2 && !inCall) {
    std::vector<char> big(32 << 20, static_cast<char>(r));
    MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (r == 1) MPI_Recv(big.data(), static_cast<int>(big.size()), MPI_CHAR, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ASSERT_EQ(MPI_Iallreduce(din[0], dout[2], static_cast<int>(all), MPI_FLOAT, MPI_SUM, a, &q[0]), MPI_SUCCESS);
    if (r == 0) MPI_Isend(big.data(), static_cast<int>(big.size()), MPI_CHAR, 1, 9, MPI_COMM_WORLD, &q[1]);
    ASSERT_EQ(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    if (r == 1) EXPECT_EQ(big[big.size() - 1], 0);
    got.assign(all, 0);
    ASSERT_EQ(cudaMemcpy(got.data(), dout[2], sizeof(float) * all, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want[0].begin())) << "Iallreduce beside a large message";
  }

  // Freed unwaited: a blocking call on the same communicator after it sees its result.
  MPI_Request f;
  ASSERT_EQ(MPI_Iallreduce(din[0], dout[3], static_cast<int>(all), MPI_FLOAT, MPI_SUM, a, &f), MPI_SUCCESS);
  ASSERT_EQ(MPI_Request_free(&f), MPI_SUCCESS);
  ASSERT_EQ(MPI_Allreduce(MPI_IN_PLACE, dout[3], static_cast<int>(all), MPI_FLOAT, MPI_MAX, a), MPI_SUCCESS);
  got.assign(all, 0);
  ASSERT_EQ(cudaMemcpy(got.data(), dout[3], sizeof(float) * all, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), want[0].begin())) << "a freed Iallreduce, then an Allreduce";

  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  // The next call finds the communicators changed and destroys the freed ones' streams.
  ASSERT_EQ(MPI_Iallreduce(din[0], dout[5], static_cast<int>(all), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &f),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&f, MPI_STATUS_IGNORE), MPI_SUCCESS);
  got.assign(all, 0);
  ASSERT_EQ(cudaMemcpy(got.data(), dout[5], sizeof(float) * all, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), want[0].begin())) << "an Iallreduce after two communicators freed";
  for (size_t i = 0; i < k; ++i) {
    cudaFree(din[i]);
    cudaFree(dout[i]);
  }
}

extern "C" void mcclMpiStageCounters(unsigned long long* staged, unsigned long long* live);

namespace {
// A call's buffers, as bytes: its input and its output (the output filled too, so that the
// parts MPI does not write, a derived datatype's gaps, are compared as well).
struct CallBytes {
  std::vector<char> in, out;
};
template <class T>
std::vector<char> bytesOf(const std::vector<T>& v) {
  std::vector<char> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// call(in, out) on device copies of b, then on host copies: "" when the outputs agree byte
// for byte (and both calls returned MPI_SUCCESS), else what differs.
std::string sameAsOnHost(const std::string& what, const CallBytes& b,
                         const std::function<int(const void*, void*)>& call) {
  std::vector<char> hin = b.in, hout = b.out, got(b.out.size());
  void *din = nullptr, *dout = nullptr;
  if (cudaMalloc(&din, std::max<size_t>(b.in.size(), 1)) != cudaSuccess ||
      cudaMalloc(&dout, std::max<size_t>(b.out.size(), 1)) != cudaSuccess)
    return what + ": cudaMalloc failed";
  cudaMemcpy(din, b.in.data(), b.in.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(dout, b.out.data(), b.out.size(), cudaMemcpyHostToDevice);
  const int rd = call(din, dout);
  const int rh = call(hin.data(), hout.data());
  cudaMemcpy(got.data(), dout, got.size(), cudaMemcpyDeviceToHost);
  cudaFree(din);
  cudaFree(dout);
  if (rd != MPI_SUCCESS || rh != MPI_SUCCESS)
    return what + ": rc " + std::to_string(rd) + " on device buffers, " + std::to_string(rh) + " on host buffers\n";
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != hout[i]) return what + ": the device output differs from MPI's at byte " + std::to_string(i) + "\n";
  return "";
}
}  // namespace

// Calls on device buffers that mccl has no kernel for (MPI_MAXLOC and MPI_MINLOC on pair
// types, logical and bitwise operators, derived datatypes with gaps, send and receive
// signatures that differ), in every collective the preload takes, blocking and
// nonblocking, in place and out: on an MPI without CUDA support they would crash inside
// it; the route hands it host copies of the device buffers and copies the results back
// (mpi_stage.h). Each result equals the same call's on host buffers, byte for byte, gaps
// included; none went to mccl.
TEST(PreloadGpu, CallsMcclCannotRunGoThroughHostCopies) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const MPI_Comm w = MPI_COMM_WORLD;
  uint64_t m0, p0;
  mcclMpiPathCounters(&m0, &p0);
  std::string errs;
  struct FloatInt {
    float v;
    int i;
  };
  const int count = 1001;
  std::vector<FloatInt> fi(count);
  std::vector<int> pairs(2 * count), ints(count * n), vec(300 * n + 7);
  std::vector<unsigned> bits(4097 * n);
  for (int i = 0; i < count; ++i) {
    fi[i] = {static_cast<float>((r * 7 + i * 3) % 11), r * 100000 + i};
    pairs[2 * i] = (r * 5 + i) % 13;
    pairs[2 * i + 1] = r * 100000 + i;
  }
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int>((i * 7 + static_cast<size_t>(r)) % 3);
  for (size_t i = 0; i < vec.size(); ++i) vec[i] = static_cast<int>(i) + 1000000 * (r + 1);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<unsigned>(i * 2654435761u) ^ (0x1111u * static_cast<unsigned>(r));
  const CallBytes fiB{bytesOf(fi), bytesOf(fi)}, pairB{bytesOf(pairs), bytesOf(pairs)};

  // Operators and pair types mccl does not take.
  errs += sameAsOnHost("Allreduce MAXLOC", fiB, [&](const void* in, void* out) {
    return MPI_Allreduce(in, out, count, MPI_FLOAT_INT, MPI_MAXLOC, w);
  });
  errs += sameAsOnHost("Allreduce MAXLOC in place", fiB, [&](const void*, void* out) {
    return MPI_Allreduce(MPI_IN_PLACE, out, count, MPI_FLOAT_INT, MPI_MAXLOC, w);
  });
  // A nonblocking one returns MPI's own request at once, kept with its host copies in the
  // staged requests' table until MPI_Wait copies the result back.
  unsigned long long liveDuring = 0;
  errs += sameAsOnHost("Iallreduce MINLOC", pairB, [&](const void* in, void* out) {
    MPI_Request q;
    const int rc = MPI_Iallreduce(in, out, count, MPI_2INT, MPI_MINLOC, w, &q);
    unsigned long long staged = 0, live = 0;
    mcclMpiStageCounters(&staged, &live);
    liveDuring = std::max(liveDuring, live);
    return rc == MPI_SUCCESS ? MPI_Wait(&q, MPI_STATUS_IGNORE) : rc;
  });
  EXPECT_EQ(liveDuring, 1u) << "the Iallreduce on device buffers was not a staged request";
  errs += sameAsOnHost("Allreduce BXOR", {bytesOf(bits), bytesOf(bits)}, [&](const void* in, void* out) {
    return MPI_Allreduce(in, out, 4097, MPI_UNSIGNED, MPI_BXOR, w);
  });
  errs += sameAsOnHost("Reduce LAND", {bytesOf(ints), bytesOf(ints)}, [&](const void* in, void* out) {
    return MPI_Reduce(in, out, count, MPI_INT, MPI_LAND, n - 1, w);
  });
  errs += sameAsOnHost("Reduce_scatter_block BOR in place", {bytesOf(ints), bytesOf(ints)},
                       [&](const void*, void* out) {
                         return MPI_Reduce_scatter_block(MPI_IN_PLACE, out, count, MPI_INT, MPI_BOR, w);
                       });
  std::vector<int> rcounts(n);
  for (int q = 0; q < n; ++q) rcounts[q] = q + 1;
  errs += sameAsOnHost("Ireduce_scatter BAND", {bytesOf(bits), bytesOf(bits)}, [&](const void* in, void* out) {
    MPI_Request q;
    const int rc = MPI_Ireduce_scatter(in, out, rcounts.data(), MPI_UNSIGNED, MPI_BAND, w, &q);
    return rc == MPI_SUCCESS ? MPI_Wait(&q, MPI_STATUS_IGNORE) : rc;
  });

  // Derived datatypes: a strided vector (gaps between its blocks) and a contiguous one.
  MPI_Datatype strided, triple;
  MPI_Type_vector(100, 2, 3, MPI_INT, &strided);  // 200 ints over 299
  MPI_Type_commit(&strided);
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  const CallBytes vecB{bytesOf(vec), bytesOf(vec)};
  errs += sameAsOnHost("Bcast strided", vecB, [&](const void*, void* out) {
    return MPI_Bcast(out, 1, strided, 1 % n, w);
  });
  errs += sameAsOnHost("Ibcast strided", vecB, [&](const void*, void* out) {
    MPI_Request q;
    const int rc = MPI_Ibcast(out, 1, strided, 0, w, &q);
    return rc == MPI_SUCCESS ? MPI_Wait(&q, MPI_STATUS_IGNORE) : rc;
  });
  errs += sameAsOnHost("Allgather triples", {bytesOf(ints), bytesOf(std::vector<int>(3 * 50 * n, -1))},
                       [&](const void* in, void* out) { return MPI_Allgather(in, 50, triple, out, 50, triple, w); });
  errs += sameAsOnHost("Allgather ints into triples", {bytesOf(ints), bytesOf(std::vector<int>(3 * 50 * n, -1))},
                       [&](const void* in, void* out) { return MPI_Allgather(in, 150, MPI_INT, out, 50, triple, w); });
  errs += sameAsOnHost("Alltoall triples", {bytesOf(ints), bytesOf(std::vector<int>(ints.size(), -1))},
                       [&](const void* in, void* out) {
                         return MPI_Alltoall(in, count / 3, triple, out, count / 3, triple, w);
                       });
  errs += sameAsOnHost("Gather pairs", {bytesOf(pairs), bytesOf(std::vector<int>(2 * 10 * n, -1))},
                       [&](const void* in, void* out) { return MPI_Gather(in, 10, MPI_2INT, out, 10, MPI_2INT, 0, w); });
  errs += sameAsOnHost("Scatter ints into pairs", {bytesOf(ints), bytesOf(std::vector<int>(20, -1))},
                       [&](const void* in, void* out) {
                         return MPI_Scatter(in, 20, MPI_INT, out, 10, MPI_2INT, n - 1, w);
                       });
  // v-forms with gaps between the blocks (displacements 5 pairs apart).
  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  for (int q = 0; q < n; ++q) {
    sc[q] = (r + q) % 3 + 1;
    rc[q] = (q + r) % 3 + 1;
    sd[q] = rd[q] = 5 * q;
  }
  errs += sameAsOnHost("Alltoallv pairs", {bytesOf(pairs), bytesOf(std::vector<int>(2 * 5 * n, -1))},
                       [&](const void* in, void* out) {
                         return MPI_Alltoallv(in, sc.data(), sd.data(), MPI_2INT, out, rc.data(), rd.data(), MPI_2INT,
                                              w);
                       });
  std::vector<int> gc(n, 2);
  for (int q = 0; q < n; ++q) gc[q] = q % 2 + 1;
  errs += sameAsOnHost("Iallgatherv pairs", {bytesOf(pairs), bytesOf(std::vector<int>(2 * 5 * n, -1))},
                       [&](const void* in, void* out) {
                         MPI_Request q;
                         const int c = MPI_Iallgatherv(in, r % 2 + 1, MPI_2INT, out, gc.data(), rd.data(), MPI_2INT,
                                                       w, &q);
                         return c == MPI_SUCCESS ? MPI_Wait(&q, MPI_STATUS_IGNORE) : c;
                       });
  MPI_Type_free(&strided);
  MPI_Type_free(&triple);
  EXPECT_TRUE(errs.empty()) << "rank " << r << ":\n" << errs;
  uint64_t m1, p1;
  mcclMpiPathCounters(&m1, &p1);
  EXPECT_EQ(m1, m0) << "a call mccl has no kernel for went to mccl";
  EXPECT_GE(p1 - p0, 2u * 16) << "the calls were not seen by the route";  // 16 cases, each twice
}

// Point-to-point calls on device buffers: the preload says MPI takes them
// (MPIX_Query_cuda_support 1), so on an MPI that cannot it hands MPI host copies
// (mpi_stage_p2p.cc). Every send and receive form, every call that completes requests,
// persistent, cancelled and freed requests; each device buffer read back and checked.
#include <dlfcn.h>

#include "p2p_stage_check.h"

extern "C" int MPIX_Query_cuda_support(void);  // the preload's (Open MPI's mpi-ext.h has it too)

namespace {
// What the MPI library itself says (the preload's own MPIX_Query_cuda_support says 1).
int mpiLibraryCudaAware() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&PMPI_Send), &info) == 0 || info.dli_fname == nullptr) return 0;
  void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) return 0;
  auto query = reinterpret_cast<int (*)()>(dlsym(lib, "MPIX_Query_cuda_support"));
  const int aware = query ? query() : 0;
  dlclose(lib);
  return aware;
}
}  // namespace

TEST(PreloadGpu, PointToPointOnDeviceBuffersThroughHostCopies) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  if (mpiLibraryCudaAware()) GTEST_SKIP() << "this MPI takes device buffers itself: nothing to stage";
  EXPECT_EQ(MPIX_Query_cuda_support(), 1);
  const p2pstage::Memory device{
      [](size_t bytes) {
        void* p = nullptr;
        return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
      },
      [](void* p) { cudaFree(p); },
      [](void* dst, const void* src, size_t bytes) { cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice); },
      [](void* dst, const void* src, size_t bytes) { cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost); }};
  p2pstage::checkPointToPoint(device);
  p2pstage::checkOtherCollectives(device);
  MPI_Barrier(MPI_COMM_WORLD);
}
