// GPU communicators in one process (ncclCommInitAll over every visible GPU): every
// collective x type x op x in-place x size against the host reference, groups driven from
// one thread, point-to-point patterns, lone calls that reuse their plans, CUDA graph capture
// replayed 1,000 times, two communicators alternating on one stream across every
// protocol's sizes, ncclMemAlloc with registered buffers, NCCL_CHECK_POINTERS, and revoke
// and shrink with kernels waiting on an absent rank. Skipped where no GPU is usable.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cuda.h>
#include <nccl_device.h>

#include "core/knobs.h"
#include "core/types.h"
#include "ipc_transport/ipc.h"
#include "clique.h"
#include "gpu_util.h"
#include "scoped_env.h"
#include "mccl.h"
#include "test_util.h"

using namespace mccl_test;


TEST(GpuSingleProcess, EveryTypeOpAndForm) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  std::vector<CollCase> cases;
  uint64_t seed = 1;
  // (1 << 16) + 5: 64 KiB - 512 KiB by type, where the lean LL kernel moves one to four lines
  // a thread (llLeanLines).
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1023}, size_t{(1 << 16) + 5}, size_t{(1 << 20) + 3}})
    for (ncclDataType_t t : kAllTypes)
      for (bool inPlace : {false, true}) {
        bool big = count > 4096;
        for (ncclRedOp_t op : kBuiltinOps) {
          if (big && op != ncclSum && op != ncclAvg) continue;
          cases.push_back(CollCase{CollKind::AllReduce, t, op, false, false, count, 0, inPlace, seed++});
          cases.push_back(CollCase{CollKind::ReduceScatter, t, op, false, false, count / 2, 0, inPlace, seed++});
          cases.push_back(CollCase{CollKind::Reduce, t, op, false, false, count, cl.n - 1, inPlace, seed++});
        }
        cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, false, count, 0, inPlace, seed++});
        cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, true, count, 0, inPlace, seed++});
        for (int root = 0; root < cl.n; ++root)
          cases.push_back(CollCase{CollKind::Broadcast, t, ncclSum, false, false, count, root, inPlace, seed++});
        cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count / 2 + 1, 0, inPlace, seed++});
      }
  runCases(cl, cases);
}

TEST(GpuSingleProcess, LargeBuffers) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  const size_t big = 64u << 20;  // 64M elements
  std::vector<CollCase> cases = {
      {CollKind::AllReduce, ncclFloat32, ncclSum, false, false, big, 0, false, 3},
      {CollKind::AllReduce, ncclBfloat16, ncclSum, false, false, big, 0, true, 4},
      {CollKind::AllGather, ncclFloat32, ncclSum, false, false, big / 8, 0, false, 5},
      {CollKind::ReduceScatter, ncclFloat32, ncclMax, false, false, big / 8, 0, false, 6},
      {CollKind::Broadcast, ncclInt8, ncclSum, false, false, big, cl.n - 1, false, 7},
  };
  runCases(cl, cases);
}

TEST(GpuSingleProcess, PointToPointPatterns) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  std::vector<std::string> errs(static_cast<size_t>(cl.n));
  runThreads(cl.n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    GpuMemory mem(cl.dev(r));
    for (const char* p : {"ring", "neighbor", "alltoall", "scatter", "gather"})
      for (size_t count : {size_t{0}, size_t{1}, size_t{12345}, size_t{3} << 20})
        errs[r] += runP2pPattern(cl.comms[r], r, cl.n, p, count, ncclFloat32, 0, count + 7, &mem);
  });
  for (int r = 0; r < cl.n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
}

// MCCL_P2P_BLOCK_BOTH_WAYS (the default): a peer's Sends and Recvs on one channel share a
// block, each direction on half its threads (kQueueBothWays). The patterns at Simple sizes,
// with fixed ranges and with units (64 MiB), and the schedule dump says the blocks were
// shared.
TEST(GpuSingleProcess, PointToPointBothWaysInOneBlock) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"MCCL_P2P_BLOCK_BOTH_WAYS", "1"}, {"MCCL_DUMP_SCHEDULE", "1"}});
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "one rank";
  std::vector<std::string> errs(static_cast<size_t>(cl.n));
  testing::internal::CaptureStdout();
  runThreads(cl.n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    GpuMemory mem(cl.dev(r));
    for (const char* p : {"ring", "neighbor", "alltoall", "scatter", "gather"})
      for (size_t count : {size_t{12345}, (size_t{3} << 20) + 1, (size_t{16} << 20) + 5})
        errs[r] += runP2pPattern(cl.comms[r], r, cl.n, p, count, ncclFloat32, 0, count + 11, &mem);
  });
  const std::string dump = testing::internal::GetCapturedStdout();
  for (int r = 0; r < cl.n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
  EXPECT_NE(dump.find("of them a peer's both ways"), std::string::npos) << "no block served a peer both ways";
}

// Where every Recv of a joined block takes the user-buffer path (registered cudaMalloc'ed
// outputs: the peers write straight into them), its Recv half keeps
// MCCL_P2P_DIRECT_RECV_THREADS and the Send half the rest (DevQueue::sendWarps). Pairs at
// 12 MiB (fixed ranges) and 64 MiB (units), AlltoAll at 12 MiB; and "pairs-split", where
// the odd ranks send in a group of their own, so their Sends go through the FIFO and the
// even ranks' few Recv threads copy it out.
TEST(GpuSingleProcess, PointToPointRecvHalfThatOnlyWaits) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"MCCL_P2P_BLOCK_BOTH_WAYS", "1"}, {"MCCL_DUMP_SCHEDULE", "1"}});
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "one rank";
  std::vector<std::string> errs(static_cast<size_t>(cl.n));
  const size_t mid = (size_t{3} << 20) + 5, big = (size_t{16} << 20) + 3;  // floats
  const size_t region = std::max(2 * big, 2 * static_cast<size_t>(cl.n) * mid) * sizeof(float) + (size_t{1} << 20);
  ThreadBarrier meet(cl.n);
  testing::internal::CaptureStdout();
  runThreads(cl.n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    RegisteredRegion mem(cl.comms[r], cl.dev(r), region);
    errs[r] += mem.error;
    meet.wait();
    for (const char* p : {"pairs", "alltoall", "pairs-split"})
      for (size_t count : {mid, big})
        if (mem.error.empty() && (count == mid || std::string(p) != "alltoall"))
          errs[r] += runP2pPattern(cl.comms[r], r, cl.n, p, count, ncclFloat32, 0, count + 13, &mem);
    meet.wait();
  });
  const std::string dump = testing::internal::GetCapturedStdout();
  for (int r = 0; r < cl.n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
  const std::regex waits("both ways, ([1-9][0-9]*) with a Recv half that only waits");
  EXPECT_TRUE(std::regex_search(dump, waits)) << "no Recv half kept few threads";
}

// A rank's Sends to itself and Recvs from itself (their copies in the kernel, then on the copy
// engines: MCCL_SELF_COPY_ENGINE_BYTES). Paired in one group at Simple sizes, each
// Send's work copies straight into its Recv's buffer (GpuWork::pairSelf; the schedule dump
// says so): two pairs of odd sizes at unaligned addresses beside a ring exchange. A Send that
// one group leaves in the rank's FIFO to itself is what the next group's Recv takes, even
// when that group also sends to itself (no pairing while a Send is outstanding), and the
// group after takes that group's Send; then pairs again. (A Send to itself alone in a
// group, with no connection to itself made before, waits for its connection's other side
// and fails at MCCL_TIMEOUT: not a form this test uses.)
TEST(GpuSingleProcess, SelfSendRecvPairsAndBacklog) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  const int n = cl.n;
  const size_t big = (size_t{5} << 20) + 3, big2 = (size_t{3} << 20) + 16, ring = size_t{4} << 20;
  // The pairs' copies in the kernel's blocks, then on the copy engines beside it.
  for (const char* engines : {"0", "1048576"}) {
    SCOPED_TRACE(std::string("MCCL_SELF_COPY_ENGINE_BYTES=") + engines);
    std::vector<std::string> errs(static_cast<size_t>(n));
    std::string dump;
    {
      ScopedEnv env({{"MCCL_DUMP_SCHEDULE", "1"}, {"MCCL_SELF_COPY_ENGINE_BYTES", engines}});
      testing::internal::CaptureStdout();
      runThreads(n, [&](int r) {
        cudaSetDevice(cl.dev(r));
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        const size_t cap = big + 64;
        uint8_t *a, *b, *x, *y, *rin, *rout;
        for (uint8_t** p : {&a, &b, &x, &y, &rin, &rout}) cudaMalloc(p, cap);
        auto pattern = [](int rank, int tag, size_t i) { return static_cast<uint8_t>((rank * 131 + tag * 17 + i * 7 + i / 251) & 0xff); };
        auto fill = [&](uint8_t* d, size_t bytes, int tag) {
          std::vector<uint8_t> h(bytes);
          for (size_t i = 0; i < bytes; ++i) h[i] = pattern(r, tag, i);
          cudaMemcpyAsync(d, h.data(), bytes, cudaMemcpyHostToDevice, s);
          cudaStreamSynchronize(s);
        };
        auto check = [&](const uint8_t* d, size_t bytes, int from, int tag, const char* what) {
          std::vector<uint8_t> h(bytes);
          cudaMemcpyAsync(h.data(), d, bytes, cudaMemcpyDeviceToHost, s);
          cudaStreamSynchronize(s);
          for (size_t i = 0; i < bytes; ++i)
            if (h[i] != pattern(from, tag, i)) {
              errs[r] += std::string(what) + ": byte " + std::to_string(i) + " is " + std::to_string(h[i]) +
                         ", expected " + std::to_string(pattern(from, tag, i)) + "\n";
              return;
            }
        };
        auto ok = [&](ncclResult_t rc, const char* what) {
          if (rc != ncclSuccess) errs[r] += std::string(what) + ": " + ncclGetLastError(cl.comms[r]) + "\n";
          return rc == ncclSuccess;
        };
        ncclComm_t c = cl.comms[r];
        const int next = (r + 1) % n, prev = (r + n - 1) % n;
        // Group 1: two pairs (unaligned, odd; aligned) and the ring.
        fill(a + 1, big, 1);
        fill(b, big2, 2);
        fill(rin, ring, 3);
        cudaMemsetAsync(x, 0, cap, s);
        cudaMemsetAsync(y, 0, cap, s);
        ncclGroupStart();
        ncclSend(a + 1, big, ncclUint8, r, c, s);
        ncclSend(b, big2 / 4, ncclFloat32, r, c, s);
        if (n > 1) ncclSend(rin, ring, ncclInt8, next, c, s);
        ncclRecv(x + 3, big, ncclInt8, r, c, s);
        if (n > 1) ncclRecv(rout, ring, ncclUint8, prev, c, s);
        ncclRecv(y, big2 / 2, ncclFloat16, r, c, s);
        ok(ncclGroupEnd(), "group 1");
        cudaStreamSynchronize(s);
        check(x + 3, big, r, 1, "group 1, first pair");
        check(y, big2, r, 2, "group 1, second pair");
        if (n > 1) check(rout, ring, prev, 3, "group 1, ring");
        // Groups 2-4: two Sends and a Recv (the second Send stays in the FIFO), then a Send
        // and a Recv, then a Recv.
        fill(a, big, 4);
        fill(b, big, 5);
        fill(rin, big, 7);
        cudaMemsetAsync(x, 0, cap, s);
        cudaMemsetAsync(y, 0, cap, s);
        cudaMemsetAsync(rout, 0, cap, s);
        ncclGroupStart();
        ncclSend(a, big, ncclUint8, r, c, s);
        ncclRecv(x, big, ncclUint8, r, c, s);
        ncclSend(b, big, ncclUint8, r, c, s);
        ok(ncclGroupEnd(), "group 2");
        ncclGroupStart();
        ncclSend(rin, big, ncclUint8, r, c, s);
        ncclRecv(y, big, ncclUint8, r, c, s);
        ok(ncclGroupEnd(), "group 3");
        ok(ncclRecv(rout, big, ncclUint8, r, c, s), "group 4");
        cudaStreamSynchronize(s);
        check(x, big, r, 4, "group 2's Recv (its first Send)");
        check(y, big, r, 5, "group 3's Recv (group 2's second Send)");
        check(rout, big, r, 7, "group 4's Recv (group 3's Send)");
        // Group 5: paired again.
        fill(a, big2, 6);
        cudaMemsetAsync(x, 0, cap, s);
        ncclGroupStart();
        ncclRecv(x, big2, ncclUint8, r, c, s);
        ncclSend(a, big2, ncclUint8, r, c, s);
        ok(ncclGroupEnd(), "group 5");
        cudaStreamSynchronize(s);
        check(x, big2, r, 6, "group 5");
        if (cudaGetLastError() != cudaSuccess) errs[r] += "CUDA error\n";
        for (uint8_t* p : {a, b, x, y, rin, rout}) cudaFree(p);
        cudaStreamDestroy(s);
      });
      dump = testing::internal::GetCapturedStdout();
    }
    for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
    // Groups 1 and 5 paired (three pairs a rank), groups 2-4 not.
    size_t paired = 0;
    for (size_t at = dump.find("copied into its Recv's buffer"); at != std::string::npos;
         at = dump.find("copied into its Recv's buffer", at + 1))
      ++paired;
    EXPECT_EQ(paired, static_cast<size_t>(3 * n)) << dump.substr(0, 4000);
    size_t byEngines = 0;
    for (size_t at = dump.find("by the copy engines"); at != std::string::npos; at = dump.find("by the copy engines", at + 1))
      ++byEngines;
    EXPECT_EQ(byEngines, std::string(engines) == "0" ? size_t{0} : static_cast<size_t>(3 * n)) << dump.substr(0, 4000);
  }
}

// NCCL 2.28's AlltoAll, Gather, Scatter and mccl's AlltoAllv on device buffers, alone and
// in a group with older calls.
TEST(GpuSingleProcess, AlltoAllGatherScatterAlltoAllv) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  runCases(cl, alltoallFamilyCases(cl.n, (1 << 20) + 3));
  std::vector<std::string> errs(static_cast<size_t>(cl.n));
  runThreads(cl.n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    GpuMemory mem(cl.dev(r));
    errs[r] = runMixedGroup(cl.comms[r], r, cl.n, &mem);
  });
  for (int r = 0; r < cl.n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
}

// AlltoAll + Gather + Scatter + AlltoAllv captured in one graph and replayed: as planned
// (LL at these sizes), then on Simple with every rank's copies to itself on the copy
// engines (a side stream forked and joined inside the capture).
TEST(GpuSingleProcess, AlltoAllFamilyInGraphCapture) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  const int n = cl.n;
  for (int pass = 0; pass < 2; ++pass) {
    std::unique_ptr<ScopedEnv> env;
    if (pass == 1) env = std::make_unique<ScopedEnv>(std::initializer_list<std::pair<const char*, const char*>>{
                       {"NCCL_PROTO", "Simple"}, {"MCCL_SELF_COPY_ENGINE_BYTES", "1"}, {"MCCL_DUMP_SCHEDULE", "1"}});
    SCOPED_TRACE(pass == 0 ? "as planned" : "Simple, copies to itself on the copy engines");
    if (pass == 1) testing::internal::CaptureStdout();
    std::vector<std::string> errs(static_cast<size_t>(n));
    ThreadBarrier ready(n);
    runThreads(n, [&](int r) {
      cudaSetDevice(cl.dev(r));
      const size_t count = 4099;  // per peer
      const size_t total = count * n;
      int *in, *a2a, *gat, *sca, *a2av;
      cudaStream_t s;
      cudaMalloc(&in, total * sizeof(int));
      cudaMalloc(&a2a, total * sizeof(int));
      cudaMalloc(&gat, total * sizeof(int));
      cudaMalloc(&sca, count * sizeof(int));
      cudaMalloc(&a2av, total * sizeof(int));
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      std::vector<size_t> counts(n, count), displs(n);
      for (int q = 0; q < n; ++q) displs[q] = count * (n - 1 - q);  // reversed blocks on both sides
      std::vector<int> h(total);
      cudaGraph_t g;
      cudaGraphExec_t ge;
      cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      ncclResult_t rc[6];
      rc[0] = ncclGroupStart();
      rc[1] = ncclAlltoAll(in, a2a, count, ncclInt32, cl.comms[r], s);
      rc[2] = ncclGather(in, gat, count, ncclInt32, n - 1, cl.comms[r], s);
      rc[3] = ncclScatter(in, sca, count, ncclInt32, 0, cl.comms[r], s);
      rc[4] = mcclAlltoAllv(in, counts.data(), displs.data(), a2av, counts.data(), displs.data(), ncclInt32,
                            cl.comms[r], s);
      rc[5] = ncclGroupEnd();
      cudaError_t ce = cudaStreamEndCapture(s, &g);
      bool captured = ce == cudaSuccess;
      for (ncclResult_t x : rc) captured = captured && x == ncclSuccess;
      if (captured) captured = cudaGraphInstantiate(&ge, g, 0) == cudaSuccess;
      // Every rank's buffers and graph are made before any rank's first replay; a rank that
      // failed keeps meeting the others below, so none waits for it.
      if (!captured)
        errs[r] = std::string("capture failed: ") + ncclGetLastError(cl.comms[r]) + " / " + cudaGetErrorString(ce);
      ready.wait();
      // Element i of rank q's input at replay k: q * 1000000 + k * 100000 + i.
      auto value = [](int q, int k, size_t i) { return q * 1000000 + k * 100000 + static_cast<int>(i % 99991); };
      for (int k = 0; k < 5; ++k) {
        // Ranks sharing a GPU replay in step: a rank's next replay queued while a peer still
        // downloads this one's results can wait on it through a hardware queue both use.
        ready.wait();
        if (!errs[r].empty()) continue;
        for (size_t i = 0; i < total; ++i) h[i] = value(r, k, i);
        cudaMemcpyAsync(in, h.data(), total * sizeof(int), cudaMemcpyHostToDevice, s);
        cudaGraphLaunch(ge, s);
        auto expect = [&](const int* dev, size_t elems, const std::function<int(size_t)>& want, const char* what) {
          std::vector<int> got(elems);
          cudaMemcpyAsync(got.data(), dev, elems * sizeof(int), cudaMemcpyDeviceToHost, s);
          if (cudaStreamSynchronize(s) != cudaSuccess) {
            errs[r] = "replay failed";
            return;
          }
          for (size_t i = 0; i < elems && errs[r].empty(); ++i)
            if (got[i] != want(i))
              errs[r] = std::string(what) + " replay " + std::to_string(k) + " element " + std::to_string(i) + ": " +
                        std::to_string(got[i]) + " != " + std::to_string(want(i));
        };
        expect(a2a, total, [&](size_t i) { return value(static_cast<int>(i / count), k, r * count + i % count); }, "AlltoAll");
        if (r == n - 1) expect(gat, total, [&](size_t i) { return value(static_cast<int>(i / count), k, i % count); }, "Gather");
        expect(sca, count, [&](size_t i) { return value(0, k, r * count + i); }, "Scatter");
        expect(a2av, total, [&](size_t i) {
          int from = n - 1 - static_cast<int>(i / count);  // block of rank q at displs[q]
          return value(from, k, displs[r] + i % count);
        }, "AlltoAllv");
      }
      if (captured) cudaGraphExecDestroy(ge);
      if (ce == cudaSuccess) cudaGraphDestroy(g);
      for (int* p : {in, a2a, gat, sca, a2av}) cudaFree(p);
      cudaStreamDestroy(s);
    });
    for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
    if (pass == 1) {
      // Every rank's own block of the AlltoAll and the AlltoAllv, and the roots' of the
      // Gather and the Scatter, went to the copy engines.
      const std::string dump = testing::internal::GetCapturedStdout();
      size_t byEngines = 0;
      for (size_t at = dump.find("by the copy engines"); at != std::string::npos;
           at = dump.find("by the copy engines", at + 1))
        ++byEngines;
      if (n > 1) EXPECT_EQ(byEngines, static_cast<size_t>(2 * n + 2)) << dump.substr(0, 4000);
    }
  }
}

TEST(GpuSingleProcess, OneThreadGroupsAcrossDevicesAndAggregation) {
  // The guide's single-process example: one thread, every device, one group; then a group
  // aggregating a Broadcast and an AllReduce per device (nested groups). As in NCCL's
  // aggregation example the two have their own buffers: operations of one group are not
  // ordered against each other (a launch runs its works in order per channel only, and
  // two collectives split their data over the channels differently), so one must not read
  // what another of the same group writes.
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  const size_t count = 1 << 18;
  std::vector<float*> a(cl.n), b(cl.n), c(cl.n), d(cl.n);
  std::vector<cudaStream_t> s(cl.n);
  std::vector<float> host(count);
  for (int r = 0; r < cl.n; ++r) {
    CUDA_OK(cudaSetDevice(cl.dev(r)));
    CUDA_OK(cudaMalloc(&a[r], count * sizeof(float)));
    CUDA_OK(cudaMalloc(&b[r], count * sizeof(float)));
    CUDA_OK(cudaMalloc(&c[r], count * sizeof(float)));
    CUDA_OK(cudaMalloc(&d[r], count * sizeof(float)));
    CUDA_OK(cudaStreamCreate(&s[r]));
    for (size_t i = 0; i < count; ++i) host[i] = static_cast<float>(r + 1);
    CUDA_OK(cudaMemcpy(a[r], host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  }
  NCCL_OK(ncclGroupStart());
  for (int r = 0; r < cl.n; ++r)
    NCCL_OK(ncclAllReduce(a[r], b[r], count, ncclFloat, ncclSum, cl.comms[r], s[r]));
  NCCL_OK(ncclGroupEnd());
  NCCL_OK(ncclGroupStart());
  for (int layer = 0; layer < 2; ++layer) {
    NCCL_OK(ncclGroupStart());
    for (int r = 0; r < cl.n; ++r) {
      if (layer == 0) NCCL_OK(ncclBroadcast(a[r], c[r], count, ncclFloat, 0, cl.comms[r], s[r]));
      else NCCL_OK(ncclAllReduce(a[r], d[r], count, ncclFloat, ncclMax, cl.comms[r], s[r]));
    }
    NCCL_OK(ncclGroupEnd());
  }
  NCCL_OK(ncclGroupEnd());
  for (int r = 0; r < cl.n; ++r) {
    CUDA_OK(cudaSetDevice(cl.dev(r)));
    CUDA_OK(cudaStreamSynchronize(s[r]));
    CUDA_OK(cudaMemcpy(host.data(), b[r], count * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; i += 997) ASSERT_EQ(host[i], cl.n * (cl.n + 1) / 2.0f) << r;
    CUDA_OK(cudaMemcpy(host.data(), c[r], count * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; i += 997) ASSERT_EQ(host[i], 1.0f) << r;
    CUDA_OK(cudaMemcpy(host.data(), d[r], count * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; i += 997) ASSERT_EQ(host[i], static_cast<float>(cl.n)) << r;
    cudaFree(a[r]);
    cudaFree(b[r]);
    cudaFree(c[r]);
    cudaFree(d[r]);
    cudaStreamDestroy(s[r]);
  }
}

// Groups of two small LL works, which the lean LL kernel runs from its block index alone
// (LeanTwoArgs: block b runs work i on channel b - first[i]), driven from one thread: two
// collectives on channels they share (an 8-byte AllReduce and an AllGather of 24 KiB a rank,
// on different channel counts), a Send/Recv ring whose two works' blocks follow each other
// (each rank sends a different size), a collective with a Send (or a Recv) in either call
// order (the point-to-point blocks first, the collective's after them), and two Sends to
// one peer (blocks shared). Each group three times with new data (the plan cache; where
// ranks share a GPU, the third replays a graph of the launch), against host arithmetic.
TEST(GpuSingleProcess, LeanLlTwoWorkGroupsEveryLayout) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"NCCL_PROTO", "LL"}});
  Clique cl(8);
  const int n = cl.n;
  if (n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  const size_t most = 6000 * static_cast<size_t>(n) + 4096;
  struct Rank {
    float *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
    cudaStream_t s = nullptr;
  };
  std::vector<Rank> rk(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    CUDA_OK(cudaSetDevice(cl.dev(r)));
    for (float** p : {&rk[r].a, &rk[r].b, &rk[r].c, &rk[r].d}) CUDA_OK(cudaMalloc(p, most * sizeof(float)));
    CUDA_OK(cudaStreamCreateWithFlags(&rk[r].s, cudaStreamNonBlocking));
  }
  auto val = [](int round, int r, int buf, size_t i) { return static_cast<float>((round * 3 + r * 5 + buf * 7 + i % 13) % 29); };
  auto fill = [&](int r, float* p, size_t count, int round, int buf) {
    std::vector<float> h(count);
    for (size_t i = 0; i < count; ++i) h[i] = val(round, r, buf, i);
    CUDA_OK(cudaSetDevice(cl.dev(r)));
    CUDA_OK(uploadOn(rk[r].s, p, h.data(), count * sizeof(float)));
  };
  auto fetch = [&](int r, const float* p, size_t count) {
    std::vector<float> h(count);
    EXPECT_EQ(cudaSetDevice(cl.dev(r)), cudaSuccess);
    EXPECT_EQ(cudaMemcpyAsync(h.data(), p, count * sizeof(float), cudaMemcpyDeviceToHost, rk[r].s), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(rk[r].s), cudaSuccess);
    return h;
  };
  // Element i of what rank r holds against want(i); the first difference only.
  auto expect = [&](const char* what, int round, int r, const std::vector<float>& got, auto want) {
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want(i)) {
        ADD_FAILURE() << what << ", round " << round << ", rank " << r << ", element " << i << ": " << got[i]
                      << " != " << want(i);
        return;
      }
  };
  const size_t arCount = 2, agCount = 6000;
  auto sendCount = [](int r) { return size_t{3} + 2000 * static_cast<size_t>(r % 3); };
  for (int round = 0; round < 3; ++round) {
    // Two collectives.
    for (int r = 0; r < n; ++r) {
      fill(r, rk[r].a, arCount, round, 0);
      fill(r, rk[r].c, agCount, round, 1);
    }
    NCCL_OK(ncclGroupStart());
    for (int r = 0; r < n; ++r) {
      NCCL_OK(ncclAllReduce(rk[r].a, rk[r].b, arCount, ncclFloat, ncclSum, cl.comms[r], rk[r].s));
      NCCL_OK(ncclAllGather(rk[r].c, rk[r].d, agCount, ncclFloat, cl.comms[r], rk[r].s));
    }
    NCCL_OK(ncclGroupEnd());
    for (int r = 0; r < n; ++r) {
      expect("AllReduce beside an AllGather", round, r, fetch(r, rk[r].b, arCount), [&](size_t i) {
        float sum = 0;
        for (int q = 0; q < n; ++q) sum += val(round, q, 0, i);
        return sum;
      });
      expect("AllGather beside an AllReduce", round, r, fetch(r, rk[r].d, agCount * n),
             [&](size_t i) { return val(round, static_cast<int>(i / agCount), 1, i % agCount); });
    }
    // A Send/Recv ring, each rank's message a size of its own.
    for (int r = 0; r < n; ++r) fill(r, rk[r].a, sendCount(r), round, 2);
    NCCL_OK(ncclGroupStart());
    for (int r = 0; r < n; ++r) {
      const int next = (r + 1) % n, prev = (r + n - 1) % n;
      NCCL_OK(ncclSend(rk[r].a, sendCount(r), ncclFloat, next, cl.comms[r], rk[r].s));
      NCCL_OK(ncclRecv(rk[r].b, sendCount(prev), ncclFloat, prev, cl.comms[r], rk[r].s));
    }
    NCCL_OK(ncclGroupEnd());
    for (int r = 0; r < n; ++r) {
      const int prev = (r + n - 1) % n;
      expect("Send/Recv ring", round, r, fetch(r, rk[r].b, sendCount(prev)),
             [&](size_t i) { return val(round, prev, 2, i); });
    }
    // An AllReduce with a Send (even ranks, to the next) or a Recv (its odd partner), in
    // either order; then two Sends to one peer. A last even rank of an odd count has no partner.
    for (int order = 0; order < 3; ++order) {
      for (int r = 0; r < n; ++r) {
        fill(r, rk[r].a, arCount, round, 3 + order);
        fill(r, rk[r].c, 5000, round, 6 + order);
        fill(r, rk[r].d, 17, round, 9 + order);
      }
      NCCL_OK(ncclGroupStart());
      for (int r = 0; r < n; ++r) {
        const bool sender = r % 2 == 0;
        const int partner = sender ? r + 1 : r - 1;
        auto p2p = [&](float* sendBuf, float* recvBuf, size_t count) {
          if (partner >= n) return;
          if (sender) NCCL_OK(ncclSend(sendBuf, count, ncclFloat, partner, cl.comms[r], rk[r].s));
          else NCCL_OK(ncclRecv(recvBuf, count, ncclFloat, partner, cl.comms[r], rk[r].s));
        };
        if (order == 2) {
          p2p(rk[r].c, rk[r].b, 5000);
          p2p(rk[r].d, rk[r].b + 5000, 17);
          continue;
        }
        if (order == 1) p2p(rk[r].c, rk[r].b, 5000);
        NCCL_OK(ncclAllReduce(rk[r].a, rk[r].a, arCount, ncclFloat, ncclSum, cl.comms[r], rk[r].s));
        if (order == 0) p2p(rk[r].c, rk[r].b, 5000);
      }
      NCCL_OK(ncclGroupEnd());
      for (int r = 0; r < n; ++r) {
        if (order < 2)
          expect(order ? "AllReduce after a Send or Recv" : "AllReduce before a Send or Recv", round, r,
                 fetch(r, rk[r].a, arCount), [&](size_t i) {
                   float sum = 0;
                   for (int q = 0; q < n; ++q) sum += val(round, q, 3 + order, i);
                   return sum;
                 });
        if (r % 2 == 0) continue;
        expect("a Recv beside an AllReduce, or two", round, r, fetch(r, rk[r].b, order == 2 ? 5017 : 5000),
               [&](size_t i) { return i < 5000 ? val(round, r - 1, 6 + order, i) : val(round, r - 1, 9 + order, i - 5000); });
      }
    }
  }
  for (int r = 0; r < n; ++r) {
    CUDA_OK(cudaSetDevice(cl.dev(r)));
    CUDA_OK(cudaStreamSynchronize(rk[r].s));
    for (float* p : {rk[r].a, rk[r].b, rk[r].c, rk[r].d}) cudaFree(p);
    cudaStreamDestroy(rk[r].s);
  }
}

TEST(GpuSingleProcess, GraphCaptureReplayedThousandTimes) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  std::vector<std::string> errs(static_cast<size_t>(cl.n));
  ThreadBarrier ready(cl.n);
  runThreads(cl.n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    const size_t count = 300000;
    float *in, *out;
    cudaStream_t s;
    cudaMalloc(&in, count * sizeof(float));
    cudaMalloc(&out, count * sizeof(float));
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    std::vector<float> h(count);
    cudaGraph_t g;
    cudaGraphExec_t ge;
    // A group (AllReduce + AllGather of a slice) captured as one graph.
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    ncclResult_t rc1 = ncclGroupStart();
    ncclResult_t rc2 = ncclAllReduce(in, out, count, ncclFloat, ncclSum, cl.comms[r], s);
    ncclResult_t rc3 = ncclGroupEnd();
    cudaError_t ce = cudaStreamEndCapture(s, &g);
    const bool made = !(rc1 || rc2 || rc3 || ce != cudaSuccess) && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess;
    // Ranks sharing a GPU replay in step (ThreadBarrier); a rank that failed keeps meeting
    // the others, so none waits for it.
    if (!made) errs[r] = std::string("capture failed: ") + ncclGetLastError(cl.comms[r]) + " / " + cudaGetErrorString(ce);
    ready.wait();
    for (int rep = 0; rep < 1000; ++rep) {
      if (rep % 10 == 0) ready.wait();
      if (!errs[r].empty()) continue;
      if (rep % 10 == 0) {
        for (size_t i = 0; i < count; ++i) h[i] = static_cast<float>(rep + r + (i % 5));
        cudaMemcpyAsync(in, h.data(), count * sizeof(float), cudaMemcpyHostToDevice, s);
      }
      cudaGraphLaunch(ge, s);
      if (rep % 10 == 9) {
        cudaMemcpyAsync(h.data(), out, count * sizeof(float), cudaMemcpyDeviceToHost, s);
        if (cudaStreamSynchronize(s) != cudaSuccess) {
          errs[r] = "replay failed";
          continue;
        }
        int n = cl.n;
        for (size_t i = 0; i < count; i += 101) {
          float want = static_cast<float>(n * (rep - 9) + n * (n - 1) / 2 + n * static_cast<int>(i % 5));
          if (h[i] != want) {
            errs[r] = "replay " + std::to_string(rep) + " element " + std::to_string(i) + ": " +
                      std::to_string(h[i]) + " != " + std::to_string(want);
            break;
          }
        }
      }
    }
    if (made) cudaGraphExecDestroy(ge);
    if (ce == cudaSuccess) cudaGraphDestroy(g);
    cudaFree(in);
    cudaFree(out);
    cudaStreamDestroy(s);
  });
  for (int r = 0; r < cl.n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
}

// Collectives back to back on one stream, each reading what the one before wrote: the LL,
// LL128 and Simple kernels start behind the previous kernel (programmatic dependent launch,
// MCCL_PDL) and must wait for it before they read their input or a step counter. Rounds of
// an in-place PreMulSum AllReduce of uint8 (each rank's factor chosen so their sum F is odd:
// x -> F x mod 256 never settles at 0) and a Broadcast of the result from a rotating root,
// with no host step between them, at a size of each protocol on 2 ranks (1,000 B lean LL,
// 200 KB LL, 800 KB LL128, 3 MiB and 12 MiB Simple; launches of one protocol follow each
// other, and AllReduce's Broadcast's); checked
// against the same arithmetic on the host every few rounds, once with MCCL_PDL on (the
// default), once off, and for two ranks once with 2 (on one shared GPU the others launch
// without the overlap).
TEST(GpuSingleProcess, CollectivesChainedOnOneStreamReadEachOthersResults) {
  SKIP_WITHOUT_GPUS(1);
  struct Size {
    size_t count;
    int rounds, checkEvery;
  };
  const Size sizes[] = {{1000, 300, 50}, {200000, 60, 20}, {800000, 40, 20}, {3u << 20, 20, 10}, {12u << 20, 10, 5}};
  for (const char* pdl : {"1", "0", "2"}) {
    ScopedEnv env({{"MCCL_PDL", pdl}});
    Clique cl(8);
    // Two ranks' launches, one waiting behind each, fit on a GPU they share.
    if (pdl[0] == '2' && cl.n > 2) continue;
    const int n = cl.n;
    const uint8_t factor = static_cast<uint8_t>(n % 2 == 1 ? n : n + 1);  // sum of the ranks' scalars
    std::vector<std::string> errs(static_cast<size_t>(n));
    runThreads(n, [&](int r) {
      cudaSetDevice(cl.dev(r));
      const size_t most = sizes[4].count;
      uint8_t* a = nullptr;
      cudaStream_t s;
      if (cudaMalloc(&a, most) != cudaSuccess || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        errs[r] = "allocation failed";
        return;
      }
      uint8_t scalar = r == 0 ? static_cast<uint8_t>(factor - (n - 1)) : 1;
      ncclRedOp_t op;
      if (ncclRedOpCreatePreMulSum(&op, &scalar, ncclUint8, ncclScalarHostImmediate, cl.comms[r]) != ncclSuccess) {
        errs[r] = std::string("ncclRedOpCreatePreMulSum: ") + ncclGetLastError(cl.comms[r]);
        return;
      }
      std::vector<uint8_t> want(most), got(most);
      // A rank that finds a wrong result records it and goes on calling, so its peers never
      // wait for a call that does not come or read a buffer it has freed; only a failed call
      // or stream ends its rounds.
      bool broken = false;
      for (const Size& z : sizes) {
        const size_t count = z.count;
        if (broken) break;
        for (size_t i = 0; i < count; ++i) want[i] = static_cast<uint8_t>(2 * (i % 97) + 1);  // every rank the same
        if (uploadOn(s, a, want.data(), count) != cudaSuccess) {
          errs[r] = "upload failed";
          broken = true;
          break;
        }
        for (int round = 1; round <= z.rounds; ++round) {
          if (ncclAllReduce(a, a, count, ncclUint8, op, cl.comms[r], s) != ncclSuccess ||
              ncclBroadcast(a, a, count, ncclUint8, round % n, cl.comms[r], s) != ncclSuccess) {
            errs[r] += std::to_string(count) + " B round " + std::to_string(round) + ": " + ncclGetLastError(cl.comms[r]);
            broken = true;
            break;
          }
          for (size_t i = 0; i < count; ++i) want[i] = static_cast<uint8_t>(factor * want[i]);
          if (round % z.checkEvery != 0) continue;
          cudaMemcpyAsync(got.data(), a, count, cudaMemcpyDeviceToHost, s);
          if (cudaStreamSynchronize(s) != cudaSuccess) {
            errs[r] += "stream failed";
            broken = true;
            break;
          }
          for (size_t i = 0; i < count && errs[r].empty(); ++i)  // the first wrong element only
            if (got[i] != want[i])
              errs[r] = "MCCL_PDL=" + std::string(pdl) + ", " + std::to_string(count) + " B, round " +
                        std::to_string(round) + " element " + std::to_string(i) + ": " + std::to_string(got[i]) +
                        " != " + std::to_string(want[i]);
        }
      }
      cudaStreamSynchronize(s);
      ncclRedOpDestroy(op, cl.comms[r]);
      cudaFree(a);
      cudaStreamDestroy(s);
    });
    for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
  }
}

// `calls` uint8 AllReduces on one stream per rank, call k on cliques[k % size] with
// sizes[k % size] bytes; every call's input differs (a byte pattern of the call number), the
// output is cleared before it, and samples of every call's result (start, middle, end) are
// checked against the sum computed here. Returns each rank's first error.
namespace {
std::vector<std::string> allReduceRounds(const std::vector<Clique*>& cliques, const std::vector<size_t>& sizes,
                                         int calls) {
  const int n = cliques[0]->n, kSample = 64;
  std::vector<std::string> errs(static_cast<size_t>(n));
  runThreads(n, [&](int r) {
    cudaSetDevice(cliques[0]->dev(r));
    cudaStream_t s;
    uint8_t *x = nullptr, *y = nullptr, *samples = nullptr;
    const size_t most = *std::max_element(sizes.begin(), sizes.end());
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess || cudaMalloc(&x, most) != cudaSuccess ||
        cudaMalloc(&y, most) != cudaSuccess || cudaMallocHost(&samples, static_cast<size_t>(calls) * 3 * kSample) != cudaSuccess) {
      errs[r] = "allocation failed";
      return;
    }
    for (int k = 0; k < calls && errs[r].empty(); ++k) {
      const size_t bytes = sizes[static_cast<size_t>(k) % sizes.size()];
      ncclComm_t comm = cliques[static_cast<size_t>(k) % cliques.size()]->comms[r];
      cudaMemsetAsync(x, (k * 7 + r * 3 + 1) & 0xff, bytes, s);
      cudaMemsetAsync(y, 0, bytes, s);
      if (ncclAllReduce(x, y, bytes, ncclUint8, ncclSum, comm, s) != ncclSuccess) {
        errs[r] = "call " + std::to_string(k) + ": " + ncclGetLastError(comm);
        break;
      }
      const size_t take = std::min<size_t>(kSample, bytes);
      const size_t at[3] = {0, bytes / 2 - std::min(bytes / 2, take / 2), bytes - take};
      for (int j = 0; j < 3; ++j)
        cudaMemcpyAsync(samples + (static_cast<size_t>(k) * 3 + j) * kSample, y + at[j], take, cudaMemcpyDeviceToHost, s);
    }
    if (cudaStreamSynchronize(s) != cudaSuccess && errs[r].empty()) errs[r] = "stream failed";
    for (int k = 0; k < calls && errs[r].empty(); ++k) {
      const size_t bytes = sizes[static_cast<size_t>(k) % sizes.size()];
      unsigned want = 0;
      for (int q = 0; q < n; ++q) want += static_cast<unsigned>((k * 7 + q * 3 + 1) & 0xff);
      want &= 0xff;
      const size_t take = std::min<size_t>(kSample, bytes);
      for (int j = 0; j < 3; ++j)
        for (size_t e = 0; e < take; ++e) {
          const unsigned got = samples[(static_cast<size_t>(k) * 3 + j) * kSample + e];
          if (got != want) {
            errs[r] = "call " + std::to_string(k) + " (" + std::to_string(bytes) + " B, communicator " +
                      std::to_string(static_cast<size_t>(k) % cliques.size()) + "), sample " + std::to_string(j) +
                      " byte " + std::to_string(e) + ": " + std::to_string(got) + " != " + std::to_string(want);
            break;
          }
        }
    }
    cudaFreeHost(samples);
    cudaFree(x);
    cudaFree(y);
    cudaStreamDestroy(s);
  });
  return errs;
}
}  // namespace

// Two communicators over the same GPUs, calls alternating between them on one stream, sizes
// cycling through every protocol's range (LL, LL128, Simple), 300 calls: each connection's
// slots are reused many times over, and a line left from an earlier step or the other
// communicator must never be taken for new data.
TEST(GpuSingleProcess, TwoCommunicatorsOneStreamEveryProtocol) {
  SKIP_WITHOUT_GPUS(1);
  Clique a(8), b(8);
  std::vector<std::string> errs = allReduceRounds({&b, &a}, {8, 3000, 100000, 1500000, 12u << 20}, 300);
  for (int r = 0; r < a.n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
}

// The LL protocol's flags are the low 32 bits of a connection's step (ll_proto.cuh): after
// 2^32 steps (about 12 hours of back-to-back small calls on one connection) they wrap, and
// the flag of step 2^32 - 1 is 0, what a cleared line holds. Connections that start their
// counters 1,024 steps short of the wrap (ipcSetStepBaseForTests) cross it within the first
// 1,100 calls of 8 B (a step or more a call on channel 0's connections), then take every
// protocol's sizes past it: every result must stay right.
TEST(GpuSingleProcess, LlFlagsWrapPast2To32Steps) {
  SKIP_WITHOUT_GPUS(1);
  const uint64_t base = (uint64_t{1} << 32) - 1024, presetsBefore = mccl::ipcStepPresetsForTests();
  mccl::ipcSetStepBaseForTests(base);
  std::vector<std::string> errs;
  {
    Clique cl(8);
    if (cl.n < 2) {
      mccl::ipcSetStepBaseForTests(0);
      GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
    }
    errs = allReduceRounds({&cl}, {8}, 1100);
    if (std::all_of(errs.begin(), errs.end(), [](const std::string& e) { return e.empty(); }))
      errs = allReduceRounds({&cl}, {8, 3000, 100000, 1500000, 12u << 20, 40000}, 600);
  }
  mccl::ipcSetStepBaseForTests(0);
  // Every rank's connections started at the base (a send and a receive connection a peer at least).
  EXPECT_GE(mccl::ipcStepPresetsForTests() - presetsBefore, 2u);
  for (size_t r = 0; r < errs.size(); ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
}

// The lean LL kernel (a launch of one or two LL works of one step on each channel: a line
// a thread, or several) and the general kernels share connections, slots, flags and step
// counters: calls that take one or the other alternate, with odd counts (partial last
// lines), counts of several lines a thread (5000) and multi-step calls (20000 elements:
// more than a step per channel) between them; then again with the several-line form off
// (MCCL_LL_LEAN_LINES=1), so the counts it took go to the general kernel.
TEST(GpuSingleProcess, LeanAndGeneralLlKernelsAlternateOnOneCommunicator) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  alternateKernels(cl, {1, 3, 7, 100, 1023, 5000, 20000}, 175);
  ScopedEnv env({{"MCCL_LL_LEAN_LINES", "1"}});
  alternateKernels(cl, {1, 3, 7, 100, 1023, 5000, 20000}, 175);
}

// The lean LL kernel's several-line form (2 to 8 lines a thread of a channel's one step:
// 6, 15 and 32 KiB a channel on two channels) for every reducing collective, type and
// operator and for the copies, in place and not, roots 0 and 1, against the host
// reference. 1-, 2- and 8-byte reductions take four lines a thread at most (the general
// kernel above), copies and 4-byte reductions eight.
TEST(GpuSingleProcess, LeanLlSeveralLinesEveryTypeOpAndForm) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"NCCL_PROTO", "LL"}, {"NCCL_MAX_NCHANNELS", "2"}});
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  std::vector<CollCase> cases;
  uint64_t seed = 1;
  for (ncclDataType_t t : kAllTypes) {
    const size_t esize = mccl::datatypeSize(t);
    for (size_t bytes : {12289u, 30001u, 65528u}) {
      const size_t count = bytes / esize;
      for (bool inPlace : {false, true}) {
        const int root = static_cast<int>(seed % 2);
        for (CollKind k : {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::Reduce})
          for (ncclRedOp_t op : kBuiltinOps) cases.push_back(CollCase{k, t, op, false, false, count, root, inPlace, seed++});
        for (CollKind k : {CollKind::AllGather, CollKind::Broadcast})
          cases.push_back(CollCase{k, t, ncclSum, false, false, count, root, inPlace, seed++});
      }
    }
  }
  runCases(cl, cases);
}

// LL128 forced on four channels: the LL128 kernels (sums and data movement, several lines in
// flight per thread) and the generic kernel's LL128 (max) on one communicator. 120-byte
// lines that end mid-line and mid-word (odd counts of 1-byte elements), steps of one round
// and of several (20000 8-byte elements: 40 KiB a channel), and several 60 KiB steps a
// channel (100003: 200 KiB), so a connection's slots and credits wrap many times.
TEST(GpuSingleProcess, Ll128KernelsAndGenericAlternateOnOneCommunicator) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  setenv("NCCL_PROTO", "LL128", 1);  // read at each call's plan
  setenv("NCCL_MAX_NCHANNELS", "4", 1);
  mccl::knobsReload();
  alternateKernels(cl, {1, 13, 1023, 4001, 20000, 100003, 77}, 280);
  unsetenv("NCCL_PROTO");
  unsetenv("NCCL_MAX_NCHANNELS");
  mccl::knobsReload();
}

// The two-shot LL128 AllReduce (DevWork::twoShot: a ReduceScatter, then an AllGather of
// each rank's block, on more than two ranks; the last count % n elements one-shot after
// them): every type, operator and form against the host reference, at counts of one step a
// channel and of several (60 KiB steps, so the ReduceScatter's last step and the
// AllGather's first share a connection's slots and credits), counts the rank count divides
// and others, beside one-shot calls (MCCL_LL128_TWO_SHOT=0) on the same communicator.
TEST(GpuSingleProcess, Ll128TwoShotAllReduceEveryTypeOpAndForm) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"NCCL_PROTO", "LL128"}, {"NCCL_MAX_NCHANNELS", "4"}, {"MCCL_LL128_TWO_SHOT", "2"}});
  Clique cl(8);
  if (cl.n < 3) GTEST_SKIP() << "two-shot runs on three ranks or more";
  const size_t n = static_cast<size_t>(cl.n);
  std::vector<CollCase> cases;
  uint64_t seed = 1;
  for (size_t count : {n, 15 * n + 1, 1000 * n + n, 40000 * n, 40000 * n + n - 1, 1000 * n + 1})
    for (ncclDataType_t t : kAllTypes)
      for (bool inPlace : {false, true}) {
        for (ncclRedOp_t op : kBuiltinOps)
          cases.push_back(CollCase{CollKind::AllReduce, t, op, false, false, count, 0, inPlace, seed++});
        cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, count % 2 == 0, count, 0, inPlace, seed++});
      }
  runCases(cl, cases);
  const std::vector<CollCase> some(cases.begin(), cases.begin() + 40);
  setenv("MCCL_LL128_TWO_SHOT", "0", 1);
  mccl::knobsReload();
  runCases(cl, some);
  setenv("MCCL_LL128_TWO_SHOT", "2", 1);
  mccl::knobsReload();
  runCases(cl, some);
}

// Buffers that start at every small misalignment their type allows, each collective and
// point-to-point on the Simple kernels (64 KiB FIFOs: many steps), against the host
// reference: their launches run the kernels compiled with the wide unaligned paths
// (LaunchSpec::unaligned), whose copies take words or a head then vectors and whose
// reductions join shifted vectors. A reduction on buffers not aligned to their type is
// refused (ncclInvalidArgument: the GPU's loads of the type would fault) and the
// communicator goes on.
TEST(GpuSingleProcess, SimpleUnalignedBuffersEveryCollective) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"NCCL_PROTO", "Simple"}, {"NCCL_BUFFSIZE", "65536"}, {"NCCL_MAX_NCHANNELS", "2"}});
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  std::vector<CollCase> cases;
  uint64_t seed = 1;
  const ncclDataType_t types[] = {ncclInt8, ncclFloat16, ncclFloat32, ncclFloat64, ncclUint64};
  for (size_t misalign : {1, 2, 4, 8, 12})
    for (ncclDataType_t t : types)
      for (size_t count : {size_t{100003}, size_t{65536}}) {
        if (misalign % mccl::datatypeSize(t) != 0) continue;
        for (bool inPlace : {false, true}) {
          CollCase c{CollKind::AllReduce, t, ncclSum, false, false, count, 0, inPlace, seed++};
          c.misalign = misalign;
          cases.push_back(c);
          c.op = ncclMax, c.seed = seed++;
          cases.push_back(c);
          c.kind = CollKind::ReduceScatter, c.op = ncclSum, c.count = count / 4 + 1, c.seed = seed++;
          cases.push_back(c);
          c.preMulSum = true, c.seed = seed++;
          cases.push_back(c);
          c.preMulSum = false, c.kind = CollKind::AllGather, c.seed = seed++;
          cases.push_back(c);
          c.kind = CollKind::Broadcast, c.count = count, c.root = cl.n - 1, c.seed = seed++;
          cases.push_back(c);
          c.kind = CollKind::Reduce, c.seed = seed++;
          cases.push_back(c);
          c.kind = CollKind::AlltoAll, c.count = count / 8 + 3, c.root = 0, c.seed = seed++;
          cases.push_back(c);
        }
      }
  runCases(cl, cases);
  std::vector<std::string> errs(static_cast<size_t>(cl.n));
  runThreads(cl.n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    float* buf = nullptr;
    if (cudaMalloc(&buf, 4096) != cudaSuccess) {
      errs[r] = "cudaMalloc failed";
      return;
    }
    void* odd = reinterpret_cast<uint8_t*>(buf) + 2;
    if (ncclAllReduce(odd, odd, 100, ncclFloat32, ncclSum, cl.comms[r], nullptr) != ncclInvalidArgument ||
        ncclReduceScatter(buf, odd, 100, ncclFloat32, ncclSum, cl.comms[r], nullptr) != ncclInvalidArgument)
      errs[r] = "a float reduction on a buffer 2 bytes past an aligned one was not refused";
    else if (std::string(ncclGetLastError(cl.comms[r])).find("aligned") == std::string::npos)
      errs[r] = std::string("no sentence about alignment: ") + ncclGetLastError(cl.comms[r]);
    cudaFree(buf);
  });
  for (int r = 0; r < cl.n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
  runCases(cl, std::vector<CollCase>(cases.begin(), cases.begin() + 8));  // the communicators go on
}

// Simple forced: the Simple kernels (ring, chain and point-to-point works) and the generic
// kernel (the 9-call group, the integer average) on one communicator. 64 KiB FIFOs (NCCL_BUFFSIZE) and two flags a slot
// (MCCL_GPU_SLICES=2) on two channels, so a call takes many steps and slices of odd sizes,
// and a connection's slots and counters wrap many times across the two kernels.
TEST(GpuSingleProcess, SimpleKernelsAndGenericAlternateOnOneCommunicator) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"NCCL_PROTO", "Simple"}, {"NCCL_BUFFSIZE", "65536"}, {"NCCL_MAX_NCHANNELS", "2"}, {"MCCL_GPU_SLICES", "2"}});
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  alternateKernels(cl, {1, 13, 1023, 4001, 20000, 100003, 77}, 200);
}

// The tree AllReduce and the binomial Broadcast and Reduce, which the planner no longer
// picks for a GPU communicator on one node (the ring and the chain were faster at every
// size measured) but NCCL_ALGO=tree still asks for: the generic kernel's schedules
// beside the Simple kernel's rings, on the same connections, as above.
TEST(GpuSingleProcess, TreesAndBinomialTreesWhereNcclAlgoAsks) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"NCCL_PROTO", "Simple"}, {"NCCL_ALGO", "tree"}, {"NCCL_BUFFSIZE", "65536"}, {"NCCL_MAX_NCHANNELS", "2"}});
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  alternateKernels(cl, {1, 13, 1023, 4001, 20000, 100003, 77}, 120);
}

// Simple with units (DevWork::units): 64 KiB FIFOs (16 KiB slots) on two channels, so
// collectives of 100k-1M elements are cut into 8-512 units, the last one partial, that the
// channels take as they free up (int8 at 100k stays below 4 units a channel: fixed ranges);
// every collective, type width, in-place form and root, twice over (each launch starts its
// claims at zero), against the host reference.
TEST(GpuSingleProcess, SimpleUnitsEveryCollectiveTypeAndForm) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"NCCL_PROTO", "Simple"}, {"NCCL_BUFFSIZE", "65536"}, {"NCCL_MAX_NCHANNELS", "2"}});
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  std::vector<CollCase> cases;
  uint64_t seed = 7;
  for (int round = 0; round < 2; ++round)
    for (size_t count : {size_t{100003}, size_t{1} << 20, (size_t{1} << 20) + 5, size_t{3} << 18})
      for (ncclDataType_t t : {ncclInt8, ncclBfloat16, ncclFloat32, ncclFloat64})
        for (bool inPlace : {false, true}) {
          for (ncclRedOp_t op : {ncclSum, ncclMax}) {
            cases.push_back(CollCase{CollKind::AllReduce, t, op, false, false, count, 0, inPlace, seed++});
            cases.push_back(CollCase{CollKind::ReduceScatter, t, op, false, false, count / 2, 0, inPlace, seed++});
            cases.push_back(CollCase{CollKind::Reduce, t, op, false, false, count, cl.n - 1, inPlace, seed++});
          }
          cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, false, count, 0, inPlace, seed++});
          for (int root = 0; root < cl.n; ++root)
            cases.push_back(CollCase{CollKind::Broadcast, t, ncclSum, false, false, count, root, inPlace, seed++});
          cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count / 2 + 1, 0, inPlace, seed++});
          // Sends and Recvs with units on two ranks (their own launch; the root's block to
          // itself a copy without units).
          cases.push_back(CollCase{CollKind::AlltoAll, t, ncclSum, false, false, count / 2 + 3, 0, inPlace, seed++});
          cases.push_back(CollCase{CollKind::Gather, t, ncclSum, false, false, count / 2 + 1, cl.n - 1, inPlace, seed++});
          cases.push_back(CollCase{CollKind::Scatter, t, ncclSum, false, false, count / 2 + 1, 0, inPlace, seed++});
        }
  runCases(cl, cases);
}

// Sends and Recvs with units go in one launch after the collectives' own, wherever a rank
// calls them in its group: rank 0 calls an AllReduce and then its Send and Recv, rank 1 its
// Recv and Send first (the launches must still meet), with 64 KiB FIFOs on two channels
// (units from 128 KiB); results against the host.
TEST(GpuSingleProcess, PointToPointUnitsBesideCollectiveUnitsInAnyCallOrder) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"NCCL_PROTO", "Simple"}, {"NCCL_BUFFSIZE", "65536"}, {"NCCL_MAX_NCHANNELS", "2"}});
  Clique cl(8);
  if (cl.n != 2) GTEST_SKIP() << "two ranks: where Sends and Recvs take units";
  const size_t count = (size_t{1} << 20) + 7;  // floats: 4 MiB + 28 B, 257 units a channel
  std::vector<std::string> errs(2);
  runThreads(2, [&](int r) {
    cudaSetDevice(cl.dev(r));
    ncclComm_t c = cl.comms[r];
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    float *a, *b, *x, *y;
    for (float** p : {&a, &b, &x, &y}) cudaMalloc(p, count * sizeof(float));
    std::vector<float> h(count);
    auto value = [](int rank, int k, size_t i) { return static_cast<float>((rank * 7 + k * 3 + i % 1013) % 512); };
    for (int k = 0; k < 3 && errs[r].empty(); ++k) {
      for (size_t i = 0; i < count; ++i) h[i] = value(r, k, i);
      cudaMemcpyAsync(a, h.data(), count * sizeof(float), cudaMemcpyHostToDevice, s);
      for (size_t i = 0; i < count; ++i) h[i] = value(r, k + 10, i);
      cudaMemcpyAsync(b, h.data(), count * sizeof(float), cudaMemcpyHostToDevice, s);
      ncclGroupStart();
      if (r == 0) {
        ncclAllReduce(a, x, count, ncclFloat32, ncclSum, c, s);
        ncclSend(b, count, ncclFloat32, 1, c, s);
        ncclRecv(y, count, ncclFloat32, 1, c, s);
      } else {
        ncclRecv(y, count, ncclFloat32, 0, c, s);
        ncclSend(b, count, ncclFloat32, 0, c, s);
        ncclAllReduce(a, x, count, ncclFloat32, ncclSum, c, s);
      }
      if (ncclGroupEnd() != ncclSuccess) {
        errs[r] = std::string("group: ") + ncclGetLastError(c);
        break;
      }
      std::vector<float> gx(count), gy(count);
      cudaMemcpyAsync(gx.data(), x, count * sizeof(float), cudaMemcpyDeviceToHost, s);
      cudaMemcpyAsync(gy.data(), y, count * sizeof(float), cudaMemcpyDeviceToHost, s);
      if (cudaStreamSynchronize(s) != cudaSuccess) {
        errs[r] = "CUDA error";
        break;
      }
      for (size_t i = 0; i < count && errs[r].empty(); ++i) {
        if (gx[i] != value(0, k, i) + value(1, k, i))
          errs[r] = "AllReduce " + std::to_string(k) + " element " + std::to_string(i);
        else if (gy[i] != value(1 - r, k + 10, i))
          errs[r] = "Recv " + std::to_string(k) + " element " + std::to_string(i);
      }
    }
    for (float* p : {a, b, x, y}) cudaFree(p);
    cudaStreamDestroy(s);
  });
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
}

// Lone calls and one-communicator groups that repeat a shape reuse its plan (the GPU data
// path's plan cache, keyed on each operation's collective or peer, buffers, count, type,
// operator, root and stream). What must not be reused:
// more shapes than the cache holds, cycled; two streams with the same buffers; and a plan
// made while the buffers lay in a symmetric window (the direct path, whose barrier arrays
// leave with the window) after the window is deregistered — the memory stays and the same
// calls follow. Every result against the host reference, each call with new inputs.
TEST(GpuSingleProcess, LoneCallsReusePlansAcrossShapesStreamsAndWindows) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv everySize({{"MCCL_WIN_DIRECT", "2"}});  // every count's plan on windows is a direct one
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  const int n = cl.n;
  const std::vector<size_t> counts = {1, 3, 100, 1000, 5000, 20000, 65537, 300001, 1u << 20};  // 9 > the cache's 8
  const size_t most = counts.back();
  std::vector<std::string> errs(static_cast<size_t>(n));
  ThreadBarrier allocatedAll(n), deregistered(n), doneAll(n);
  runThreads(n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    ncclComm_t comm = cl.comms[r];
    cudaStream_t s[2] = {nullptr, nullptr};
    void* base = nullptr;
    float *h = nullptr, *got = nullptr, *got2 = nullptr;  // pinned: a pageable copy may wait for the whole device
    const bool allocated = cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking) == cudaSuccess &&
                           cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking) == cudaSuccess &&
                           ncclMemAlloc(&base, 3 * most * sizeof(float)) == ncclSuccess &&
                           cudaMallocHost(&h, most * sizeof(float)) == cudaSuccess &&
                           cudaMallocHost(&got, most * sizeof(float)) == cudaSuccess &&
                           cudaMallocHost(&got2, most * sizeof(float)) == cudaSuccess;
    if (!allocated) errs[r] = "allocation failed";
    // Ranks sharing a GPU: nobody allocates or frees while a peer's kernel waits for it.
    allocatedAll.wait();
    float* in = static_cast<float*>(base);
    float* out = in + most;
    float* from = in + 2 * most;
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    // Round k of one shape: AllReduce out of place, a group of a Send to the next rank and a
    // Recv from the previous one, then Broadcast in place from root k % n.
    auto round = [&](int k, size_t count, cudaStream_t st, const char* phase) -> bool {
      for (size_t i = 0; i < count; ++i) h[i] = static_cast<float>((k * 31 + r * 7 + static_cast<int>(i % 1000)) % 97);
      if (cudaMemcpyAsync(in, h, count * sizeof(float), cudaMemcpyHostToDevice, st) != cudaSuccess ||
          ncclAllReduce(in, out, count, ncclFloat32, ncclSum, comm, st) != ncclSuccess ||
          cudaMemcpyAsync(got, out, count * sizeof(float), cudaMemcpyDeviceToHost, st) != cudaSuccess ||
          ncclGroupStart() != ncclSuccess || ncclSend(in, count, ncclFloat32, next, comm, st) != ncclSuccess ||
          ncclRecv(from, count, ncclFloat32, prev, comm, st) != ncclSuccess || ncclGroupEnd() != ncclSuccess ||
          cudaMemcpyAsync(got2, from, count * sizeof(float), cudaMemcpyDeviceToHost, st) != cudaSuccess ||
          ncclBroadcast(in, in, count, ncclFloat32, k % n, comm, st) != ncclSuccess ||
          cudaStreamSynchronize(st) != cudaSuccess) {
        errs[r] = std::string(phase) + ": round " + std::to_string(k) + " count " + std::to_string(count) + ": " +
                  ncclGetLastError(comm);
        return false;
      }
      for (size_t i = 0; i < count; ++i) {
        float want = 0;
        for (int q = 0; q < n; ++q) want += static_cast<float>((k * 31 + q * 7 + static_cast<int>(i % 1000)) % 97);
        if (got[i] != want) {
          size_t bad = 0;
          for (size_t j = 0; j < count; ++j) {
            float w2 = 0;
            for (int q = 0; q < n; ++q) w2 += static_cast<float>((k * 31 + q * 7 + static_cast<int>(j % 1000)) % 97);
            bad += got[j] != w2;
          }
          errs[r] = std::string(phase) + ": AllReduce round " + std::to_string(k) + " count " + std::to_string(count) +
                    " element " + std::to_string(i) + ": " + std::to_string(got[i]) + " != " + std::to_string(want) +
                    " (" + std::to_string(bad) + " wrong; got[0..3] " + std::to_string(got[0]) + " " +
                    std::to_string(got[1]) + " " + std::to_string(got[2]) + " " + std::to_string(got[3]) + ")";
          return false;
        }
      }
      for (size_t i = 0; i < count; ++i) {
        const float want = static_cast<float>((k * 31 + prev * 7 + static_cast<int>(i % 1000)) % 97);
        if (got2[i] != want) {
          errs[r] = std::string(phase) + ": Recv round " + std::to_string(k) + " count " + std::to_string(count) +
                    " element " + std::to_string(i) + ": " + std::to_string(got2[i]) + " != " + std::to_string(want);
          return false;
        }
      }
      if (cudaMemcpyAsync(got, in, count * sizeof(float), cudaMemcpyDeviceToHost, st) != cudaSuccess ||
          cudaStreamSynchronize(st) != cudaSuccess) {
        errs[r] = std::string(phase) + ": copying the Broadcast's result failed";
        return false;
      }
      const int root = k % n;
      for (size_t i = 0; i < count; ++i) {
        const float want = static_cast<float>((k * 31 + root * 7 + static_cast<int>(i % 1000)) % 97);
        if (got[i] != want) {
          errs[r] = std::string(phase) + ": Broadcast round " + std::to_string(k) + " root " + std::to_string(root) +
                    " count " + std::to_string(count) + " element " + std::to_string(i) + ": " +
                    std::to_string(got[i]) + " != " + std::to_string(want);
          return false;
        }
      }
      return true;
    };
    int k = 0;
    // Plain buffers: every shape three times, on alternating streams, the shapes cycled.
    for (int pass = 0; pass < 3 && errs[r].empty(); ++pass)
      for (size_t c : counts) {
        if (!round(k, c, s[k % 2], "plain")) break;
        ++k;
      }
    // The same buffers in a symmetric window (direct path), then out of it again.
    const size_t small[] = {1000, 65537};
    ncclWindow_t win = nullptr;
    // Collective: every rank that allocated takes part, whatever went wrong before.
    if (allocated &&
        ncclCommWindowRegister(comm, base, 3 * most * sizeof(float), &win, NCCL_WIN_COLL_SYMMETRIC) != ncclSuccess &&
        errs[r].empty())
      errs[r] = std::string("ncclCommWindowRegister: ") + ncclGetLastError(comm);
    for (int pass = 0; pass < 3 && errs[r].empty(); ++pass)
      for (size_t c : small) {
        if (!round(k, c, s[0], "window")) break;
        ++k;
      }
    if (win && ncclCommWindowDeregister(comm, win) != ncclSuccess && errs[r].empty())
      errs[r] = std::string("ncclCommWindowDeregister: ") + ncclGetLastError(comm);
    // Deregistration frees (the window's device record, the direct path's barrier arrays),
    // and a free waits for the whole device: ranks sharing a GPU launch again only when every
    // rank is through, or a rank's free waits for a peer's kernel that waits for this rank.
    deregistered.wait();
    for (int pass = 0; pass < 3 && errs[r].empty(); ++pass)
      for (size_t c : small) {
        if (!round(k, c, s[0], "after the window")) break;
        ++k;
      }
    cudaStreamSynchronize(s[0]);
    cudaStreamSynchronize(s[1]);
    doneAll.wait();
    if (base) ncclMemFree(base);
    cudaFreeHost(h);
    cudaFreeHost(got);
    cudaFreeHost(got2);
    cudaStreamDestroy(s[0]);
    cudaStreamDestroy(s[1]);
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
}

// Eager calls that repeat replay a CUDA graph of their one kernel from the third alike on a
// stream (MCCL_LAUNCH_GRAPH_BYTES; launches without programmatic dependent launch, which
// MCCL_PDL=0 makes them on any GPU): every call's input changes (a copy on the stream before
// it), so a replay that ran stale parameters, skipped its kernel or ran out of order with the
// copies shows. A shape repeats on one stream, then on another (a new plan and graph), then
// interleaved with other plans (each keeps its graph), sizes on both sides of the knob.
TEST(GpuSingleProcess, RepeatedEagerCallsReplayLaunchGraphs) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv env({{"MCCL_LAUNCH_GRAPH_BYTES", "65536"}, {"MCCL_PLAN_CACHE", "1"}, {"MCCL_PDL", "0"}});
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  const int n = cl.n;
  const std::vector<size_t> counts = {1, 5, 1000, 16384, 16385};  // floats: 64 KiB, then one more
  const size_t most = counts.back();
  std::vector<std::string> errs(static_cast<size_t>(n));
  std::vector<uint64_t> made(static_cast<size_t>(n)), replayed(static_cast<size_t>(n));
  std::vector<uint64_t> made1(static_cast<size_t>(n)), replayed1(static_cast<size_t>(n));
  ThreadBarrier allocatedAll(n), doneAll(n);
  runThreads(n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    ncclComm_t comm = cl.comms[r];
    cudaStream_t s[2] = {nullptr, nullptr};
    float *in = nullptr, *out = nullptr, *h = nullptr, *got = nullptr;
    const bool allocated = cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking) == cudaSuccess &&
                           cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking) == cudaSuccess &&
                           cudaMalloc(&in, most * sizeof(float)) == cudaSuccess &&
                           cudaMalloc(&out, n * most * sizeof(float)) == cudaSuccess &&
                           cudaMallocHost(&h, most * sizeof(float)) == cudaSuccess &&
                           cudaMallocHost(&got, n * most * sizeof(float)) == cudaSuccess;
    if (!allocated) errs[r] = "allocation failed";
    allocatedAll.wait();  // ranks sharing a GPU: nobody allocates while a peer's kernel waits
    auto value = [](int k, int q, size_t i) { return static_cast<float>((k * 31 + q * 7 + static_cast<int>(i % 1000)) % 97); };
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    // Call k of one kind on count elements, on stream st, checked against the host.
    enum Kind { kAllReduce, kAllGather, kSendRecv, kBroadcast };
    auto call = [&](int k, Kind kind, size_t count, cudaStream_t st) -> bool {
      if (!errs[r].empty()) return false;
      for (size_t i = 0; i < count; ++i) h[i] = value(k, r, i);
      const size_t outCount = kind == kAllGather ? n * count : count;
      ncclResult_t rc = ncclSuccess;
      if (cudaMemcpyAsync(in, h, count * sizeof(float), cudaMemcpyHostToDevice, st) != cudaSuccess) rc = ncclUnhandledCudaError;
      if (rc == ncclSuccess) {
        switch (kind) {
          case kAllReduce: rc = ncclAllReduce(in, out, count, ncclFloat32, ncclSum, comm, st); break;
          case kAllGather: rc = ncclAllGather(in, out, count, ncclFloat32, comm, st); break;
          case kBroadcast: rc = ncclBroadcast(in, out, count, ncclFloat32, 1, comm, st); break;
          case kSendRecv:
            if ((rc = ncclGroupStart()) == ncclSuccess) {
              ncclSend(in, count, ncclFloat32, next, comm, st);
              ncclRecv(out, count, ncclFloat32, prev, comm, st);
              rc = ncclGroupEnd();
            }
            break;
        }
      }
      if (rc != ncclSuccess || cudaMemcpyAsync(got, out, outCount * sizeof(float), cudaMemcpyDeviceToHost, st) != cudaSuccess ||
          cudaStreamSynchronize(st) != cudaSuccess) {
        errs[r] = "call " + std::to_string(k) + " kind " + std::to_string(kind) + " count " + std::to_string(count) +
                  ": " + ncclGetLastError(comm);
        return false;
      }
      for (size_t i = 0; i < outCount; ++i) {
        float want = 0;
        switch (kind) {
          case kAllReduce:
            for (int q = 0; q < n; ++q) want += value(k, q, i);
            break;
          case kAllGather: want = value(k, static_cast<int>(i / count), i % count); break;
          case kBroadcast: want = value(k, 1, i); break;
          case kSendRecv: want = value(k, prev, i); break;
        }
        if (got[i] != want) {
          errs[r] = "call " + std::to_string(k) + " kind " + std::to_string(kind) + " count " + std::to_string(count) +
                    " element " + std::to_string(i) + ": " + std::to_string(got[i]) + " != " + std::to_string(want);
          return false;
        }
      }
      return true;
    };
    int k = 0;
    for (size_t c : counts) {
      // Alike on one stream (launch, launch, graph made, replays), then on the other.
      for (int i = 0; i < 12; ++i) call(k++, kAllReduce, c, s[i < 6 ? 0 : 1]);
      if (c == 1) mcclCommLaunchGraphCounters(comm, &made1[r], &replayed1[r]);
      // Plans interleaved: each repeats every fourth call.
      for (int i = 0; i < 24; ++i) call(k++, static_cast<Kind>(i % 4), c, s[0]);
    }
    cudaStreamSynchronize(s[0]);
    cudaStreamSynchronize(s[1]);
    if (mcclCommLaunchGraphCounters(comm, &made[r], &replayed[r]) != ncclSuccess && errs[r].empty())
      errs[r] = std::string("mcclCommLaunchGraphCounters: ") + ncclGetLastError(comm);
    doneAll.wait();
    cudaFree(in);
    cudaFree(out);
    cudaFreeHost(h);
    cudaFreeHost(got);
    cudaStreamDestroy(s[0]);
    cudaStreamDestroy(s[1]);
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
  // Where plans are cached (not while schedules are dumped or rank 0 logs its tuning), the
  // 4-byte AllReduce made a graph on each stream and replayed it from its third call there.
  if (getenv("MCCL_DUMP_SCHEDULE") != nullptr || getenv("NCCL_DEBUG") != nullptr) return;
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(made1[r], 2u) << "rank " << r;
    EXPECT_EQ(replayed1[r], 8u) << "rank " << r;
    EXPECT_GT(replayed[r], replayed1[r] + 20) << "rank " << r << ": the interleaved plans replayed too";
  }
}

TEST(GpuSingleProcess, MemAllocAndRegisteredBuffers) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  std::vector<std::string> errs(static_cast<size_t>(cl.n));
  runThreads(cl.n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    const size_t count = 1 << 20;
    void *buf = nullptr, *handle = nullptr;
    if (ncclMemAlloc(&buf, 2 * count * sizeof(float)) != ncclSuccess) {
      errs[r] = std::string("ncclMemAlloc: ") + ncclGetLastError(nullptr);
      return;
    }
    if (ncclCommRegister(cl.comms[r], buf, 2 * count * sizeof(float), &handle) != ncclSuccess) {
      errs[r] = std::string("ncclCommRegister: ") + ncclGetLastError(cl.comms[r]);
      return;
    }
    float* in = static_cast<float*>(buf);
    float* out = in + count;
    std::vector<float> h(count, static_cast<float>(r + 1));
    cudaMemcpy(in, h.data(), count * sizeof(float), cudaMemcpyHostToDevice);
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (int it = 0; it < 3; ++it)
      if (ncclAllReduce(in, out, count, ncclFloat, ncclSum, cl.comms[r], s) != ncclSuccess)
        errs[r] = std::string("AllReduce: ") + ncclGetLastError(cl.comms[r]);
    cudaStreamSynchronize(s);
    cudaMemcpy(h.data(), out, count * sizeof(float), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < count; i += 4099)
      if (h[i] != cl.n * (cl.n + 1) / 2.0f) errs[r] = "wrong result in registered buffer";
    if (ncclCommDeregister(cl.comms[r], handle) != ncclSuccess) errs[r] += " deregister failed";
    if (ncclMemFree(buf) != ncclSuccess) errs[r] += " ncclMemFree failed";
    cudaStreamDestroy(s);
  });
  for (int r = 0; r < cl.n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
}

// One thread registers the symmetric windows of every rank inside one group (the calls are
// collective: they run at ncclGroupEnd), uses them, and deregisters them one rank after
// another outside a group, as nccl-tests -R 2 does with several GPUs in one process; the
// same for device communicators (ncclDevCommCreate in a group, ncclDevCommDestroy one by
// one).
TEST(GpuSingleProcess, OneThreadWindowsAndDevCommsOfEveryRank) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  const size_t count = 1 << 16;
  std::vector<float*> buf(cl.n);
  std::vector<ncclWindow_t> win(cl.n, nullptr);
  std::vector<ncclDevComm> dev(cl.n);
  std::vector<cudaStream_t> s(cl.n);
  std::vector<float> host(2 * count);
  for (int r = 0; r < cl.n; ++r) {
    CUDA_OK(cudaSetDevice(cl.dev(r)));
    NCCL_OK(ncclMemAlloc(reinterpret_cast<void**>(&buf[r]), 2 * count * sizeof(float)));
    CUDA_OK(cudaStreamCreateWithFlags(&s[r], cudaStreamNonBlocking));
    for (size_t i = 0; i < count; ++i) host[i] = static_cast<float>(r + 1);
    CUDA_OK(uploadOn(s[r], buf[r], host.data(), count * sizeof(float)));
  }
  NCCL_OK(ncclGroupStart());
  for (int r = 0; r < cl.n; ++r)
    NCCL_OK(ncclCommWindowRegister(cl.comms[r], buf[r], 2 * count * sizeof(float), &win[r], NCCL_WIN_COLL_SYMMETRIC));
  NCCL_OK(ncclGroupEnd());
  for (int r = 0; r < cl.n; ++r) EXPECT_NE(win[r], nullptr) << "rank " << r << ": no window after ncclGroupEnd";
  ncclDevCommRequirements reqs;
  std::memset(&reqs, 0, sizeof reqs);
  reqs.lsaBarrierCount = 2;
  NCCL_OK(ncclGroupStart());
  for (int r = 0; r < cl.n; ++r) NCCL_OK(ncclDevCommCreate(cl.comms[r], &reqs, &dev[r]));
  NCCL_OK(ncclGroupEnd());
  for (int r = 0; r < cl.n; ++r) {
    EXPECT_EQ(dev[r].rank, r);
    EXPECT_EQ(dev[r].nRanks, cl.n);
  }
  NCCL_OK(ncclGroupStart());
  for (int r = 0; r < cl.n; ++r)
    NCCL_OK(ncclAllReduce(buf[r], buf[r] + count, count, ncclFloat, ncclSum, cl.comms[r], s[r]));
  NCCL_OK(ncclGroupEnd());
  for (int r = 0; r < cl.n; ++r) {
    CUDA_OK(cudaSetDevice(cl.dev(r)));
    CUDA_OK(cudaStreamSynchronize(s[r]));
    CUDA_OK(cudaMemcpy(host.data(), buf[r] + count, count * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT_EQ(host[0], cl.n * (cl.n + 1) / 2.0f) << "rank " << r;
    EXPECT_EQ(host[count - 1], cl.n * (cl.n + 1) / 2.0f) << "rank " << r;
  }
  for (int r = 0; r < cl.n; ++r) NCCL_OK(ncclDevCommDestroy(cl.comms[r], &dev[r]));
  for (int r = 0; r < cl.n; ++r) NCCL_OK(ncclCommWindowDeregister(cl.comms[r], win[r]));
  for (int r = 0; r < cl.n; ++r) {
    CUDA_OK(cudaSetDevice(cl.dev(r)));
    CUDA_OK(cudaStreamDestroy(s[r]));
    NCCL_OK(ncclMemFree(buf[r]));
  }
}

// Every collective that has a direct path on symmetric windows (AllReduce one-shot and
// two-shot, ReduceScatter, Reduce, AllGather, Broadcast), on buffers in such windows: every
// type, operator, in-place form, root and odd size against the host reference. They read
// and write peers' windows in place, so no FIFO connection is made; PreMulSum, whose
// scalar each rank chooses, then goes through the FIFOs and is still right.
TEST(GpuSingleProcess, SymmetricWindowsEveryTypeOpAndForm) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv everySize({{"MCCL_WIN_DIRECT", "2"}});  // the direct path at every size, not only where it is faster
  Clique cl(8);
  if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  std::vector<CollCase> cases, fifo;
  uint64_t seed = 1;
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1023}, size_t{65536 + 3}, size_t{(1 << 20) + 5}})
    for (ncclDataType_t t : kAllTypes)
      for (bool inPlace : {false, true}) {
        const bool big = count > 4096;
        for (ncclRedOp_t op : kBuiltinOps) {
          if (big && op != ncclSum && op != ncclAvg) continue;
          cases.push_back(CollCase{CollKind::AllReduce, t, op, false, false, count, 0, inPlace, seed++});
          cases.push_back(CollCase{CollKind::ReduceScatter, t, op, false, false, count / 2, 0, inPlace, seed++});
          cases.push_back(CollCase{CollKind::Reduce, t, op, false, false, count, cl.n - 1, inPlace, seed++});
        }
        for (int root = 0; root < cl.n; ++root)
          cases.push_back(CollCase{CollKind::Broadcast, t, ncclSum, false, false, count, root, inPlace, seed++});
        cases.push_back(CollCase{CollKind::Reduce, t, ncclSum, false, false, count, 0, inPlace, seed++});
        cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count / 2 + 1, 0, inPlace, seed++});
        if (count == 1023) fifo.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, false, count, 0, inPlace, seed++});
      }
  std::vector<std::string> errs(static_cast<size_t>(cl.n));
  std::vector<size_t> fifoBytes(static_cast<size_t>(cl.n), 0);
  std::vector<std::string> ledger(static_cast<size_t>(cl.n));
  runThreads(cl.n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    // The first symmetric window brings the barrier arrays of the direct path, the last
    // one's deregistration takes them away.
    mcclMemoryInfo_t none, during, after;
    mcclCommMemoryInfo(cl.comms[r], &none);
    {
      WindowMemory probe(cl.comms[r], cl.dev(r), size_t{1} << 20);
      mcclCommMemoryInfo(cl.comms[r], &during);
    }
    mcclCommMemoryInfo(cl.comms[r], &after);
    if (during.controlBytes <= none.controlBytes || after.controlBytes != none.controlBytes)
      ledger[r] = "controlBytes " + std::to_string(none.controlBytes) + " before a window, " +
                  std::to_string(during.controlBytes) + " with it, " + std::to_string(after.controlBytes) + " after";
    WindowMemory mem(cl.comms[r], cl.dev(r), size_t{64} << 20);
    if (!mem.error.empty()) {
      errs[r] = mem.error;
      return;
    }
    for (const CollCase& c : cases) {
      std::string e = runCollCase(cl.comms[r], r, cl.n, c, &mem);
      if (!e.empty() && errs[r].size() < 4000) errs[r] += e;
    }
    mcclMemoryInfo_t info;
    if (mcclCommMemoryInfo(cl.comms[r], &info) == ncclSuccess) fifoBytes[r] = info.fifoBytes;
    for (const CollCase& c : fifo) {
      std::string e = runCollCase(cl.comms[r], r, cl.n, c, &mem);
      if (!e.empty() && errs[r].size() < 4000) errs[r] += e;
    }
  });
  for (int r = 0; r < cl.n; ++r) {
    EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
    EXPECT_EQ(fifoBytes[r], 0u) << "rank " << r << ": collectives on symmetric windows made FIFO connections";
    EXPECT_TRUE(ledger[r].empty()) << "rank " << r << ": " << ledger[r];
  }
}

namespace {

// Window tests, one rank's part: a window of `bytes` on every rank (collective), then each
// case on it in turn, failures into *err and the FIFO bytes the communicator holds after
// them into *fifoBytes. False on every rank alike when any rank's window failed.
bool runWindowCases(ncclComm_t comm, int r, int n, WindowMemory& mem, ThreadBarrier& meet, std::atomic<bool>& failed,
                    const std::vector<CollCase>& cases, std::string* err, size_t* fifoBytes) {
  if (!mem.error.empty()) {
    *err = mem.error;
    failed = true;
  }
  meet.wait();
  if (failed) return false;
  for (const CollCase& c : cases) {
    std::string e = runCollCase(comm, r, n, c, &mem);
    if (!e.empty() && err->size() < 4000) *err += e;
  }
  mcclMemoryInfo_t info;
  if (mcclCommMemoryInfo(comm, &info) == ncclSuccess) *fifoBytes = info.fifoBytes;
  return true;
}

}  // namespace

// AllGather and Broadcast on symmetric windows moved by the copy engines (cudaMemcpyAsync
// into the peers' windows between two barrier kernels): chosen by NCCL_CTA_POLICY=2 (the
// zero-CTA policy, read at init) and by MCCL_WIN_CE_MIN_BYTES. Every root, in-place form,
// several types and odd sizes against the host reference (guards around every output stay
// untouched); the schedule dump names the path; then a graph of both, replayed 100 times
// with new inputs between replays, eager calls in between. Ranks sharing a GPU in this
// process keep the SM path (then this checks that the knobs leave it right); two processes
// sharing one GPU take the copy engines (GpuMpi.SymmetricWindowCollectives with
// NCCL_CTA_POLICY=2, scripts/gpu-sweep.sh windows).
TEST(GpuSingleProcess, SymmetricWindowsCopyEngines) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv everySize({{"MCCL_WIN_DIRECT", "2"}});  // where ranks share a GPU: the SM direct path at every size
  for (const char* how : {"policy", "size"}) {
    SCOPED_TRACE(how);
    const bool policy = std::string(how) == "policy";
    setenv(policy ? "NCCL_CTA_POLICY" : "MCCL_WIN_CE_MIN_BYTES", policy ? "2" : "4096", 1);
    mccl::knobsReload();
    {
      Clique cl(8);
      const int n = cl.n;
      if (n < 2) {
        unsetenv(policy ? "NCCL_CTA_POLICY" : "MCCL_WIN_CE_MIN_BYTES");
        mccl::knobsReload();
        GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
      }
      std::vector<CollCase> cases;
      uint64_t seed = 7;
      // Under either rule the small ones stay on the direct kernel (the zero-CTA policy: up
      // to 4 KiB a rank, a Broadcast below 2 MiB): both kinds in one run.
      for (size_t count : {size_t{1}, size_t{7}, size_t{1023}, size_t{65536 + 3}, size_t{(1 << 20) + 5}})
        for (ncclDataType_t t : {ncclInt8, ncclFloat16, ncclFloat32, ncclFloat64})
          for (bool inPlace : {false, true}) {
            cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count, 0, inPlace, seed++});
            for (int root = 0; root < n; ++root)
              cases.push_back(CollCase{CollKind::Broadcast, t, ncclSum, false, false, count, root, inPlace, seed++});
          }
      std::vector<std::string> errs(static_cast<size_t>(n));
      std::vector<size_t> fifoBytes(static_cast<size_t>(n), 0);
      ThreadBarrier meet(n);
      std::atomic<bool> failed{false};
      std::string dump;
      runThreads(n, [&](int r) {
        cudaSetDevice(cl.dev(r));
        WindowMemory mem(cl.comms[r], cl.dev(r), size_t{64} << 20);
        if (!runWindowCases(cl.comms[r], r, n, mem, meet, failed, cases, &errs[r], &fifoBytes[r])) return;
        // Which path a large AllGather takes, from the schedule dump.
        const size_t count = (size_t{1} << 20) / n;
        float* buf = static_cast<float*>(mem.alloc(count * (n + 2) * sizeof(float)));
        scheduleDumpOf(r, meet, [&] {
          if (ncclAllGather(buf, buf, count, ncclFloat, cl.comms[r], mem.stream()) != ncclSuccess)
            errs[r] += std::string("AllGather: ") + ncclGetLastError(cl.comms[r]);
          mem.synchronize();
        }, &dump);
        // A graph of an AllGather and a Broadcast (root n - 1), replayed with new inputs.
        float* in = buf;                    // count elements
        float* out = buf + count;           // count * n elements
        float* bc = buf + count * (n + 1);  // count elements
        cudaStream_t s = mem.stream();
        cudaGraph_t g;
        cudaGraphExec_t ge;
        cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
        ncclResult_t rc = ncclAllGather(in, out, count, ncclFloat, cl.comms[r], s);
        if (rc == ncclSuccess) rc = ncclBroadcast(bc, bc, count, ncclFloat, n - 1, cl.comms[r], s);
        cudaError_t ce = cudaStreamEndCapture(s, &g);
        const bool made = rc == ncclSuccess && ce == cudaSuccess && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess;
        if (!made) errs[r] += std::string("capture failed: ") + ncclGetLastError(cl.comms[r]);
        meet.wait();
        std::vector<float> h(count), hb(count), got(count * n);
        auto value = [](int rep, int p, size_t i) { return static_cast<float>(rep * 7 + p * 1000 + static_cast<int>(i % 991)); };
        for (int rep = 0; rep < 100; ++rep) {
          if (made && errs[r].size() < 4000) {
            for (size_t i = 0; i < count; ++i) h[i] = value(rep, r, i);
            cudaMemcpyAsync(in, h.data(), count * sizeof(float), cudaMemcpyHostToDevice, s);
            cudaMemcpyAsync(bc, h.data(), count * sizeof(float), cudaMemcpyHostToDevice, s);
            if (rep % 3 == 1 && ncclAllGather(in, out, count, ncclFloat, cl.comms[r], s) != ncclSuccess)
              errs[r] += std::string("eager: ") + ncclGetLastError(cl.comms[r]);
            cudaGraphLaunch(ge, s);
            cudaMemcpyAsync(got.data(), out, count * n * sizeof(float), cudaMemcpyDeviceToHost, s);
            cudaMemcpyAsync(hb.data(), bc, count * sizeof(float), cudaMemcpyDeviceToHost, s);
            if (cudaStreamSynchronize(s) != cudaSuccess) errs[r] += "replay " + std::to_string(rep) + " failed\n";
            for (size_t j = 0; j < count * n && errs[r].size() < 4000; j += 13) {
              const size_t i = j % count;
              if (got[j] != value(rep, static_cast<int>(j / count), i))
                errs[r] += "replay " + std::to_string(rep) + " AllGather element " + std::to_string(j) + ": " +
                           std::to_string(got[j]) + "\n";
              if (j < count && hb[i] != value(rep, n - 1, i))
                errs[r] += "replay " + std::to_string(rep) + " Broadcast element " + std::to_string(i) + ": " +
                           std::to_string(hb[i]) + "\n";
            }
          }
          meet.wait();  // every rank has read its results before any writes new inputs
        }
        if (made) cudaGraphExecDestroy(ge);
        if (ce == cudaSuccess) cudaGraphDestroy(g);
        mem.release(buf);
      });
      for (int r = 0; r < n; ++r) {
        EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
        EXPECT_EQ(fifoBytes[r], 0u) << "rank " << r << ": collectives on symmetric windows made FIFO connections";
      }
      // Ranks of one process sharing a GPU keep the SM path (a same-device copy would wait
      // for a peer's barrier kernel in the shared context: kernels/plan/direct_plan.cc).
      const bool sharing = n > gpuCount();
      EXPECT_EQ(dump.find("AllGather: direct on symmetric windows (copy engines)") != std::string::npos, !sharing)
          << dump;
      EXPECT_NE(dump.find("AllGather: direct on symmetric windows"), std::string::npos) << dump;
    }
    unsetenv(policy ? "NCCL_CTA_POLICY" : "MCCL_WIN_CE_MIN_BYTES");
    mccl::knobsReload();
  }
}

// AlltoAll on symmetric windows moved by the copy engines (each Send's block copied into the
// peer's window at its offset there, between two barrier kernels; no FIFO, no SM): chosen by
// NCCL_CTA_POLICY=2 above 4 KiB blocks and by MCCL_WIN_CE_MIN_BYTES (a block's bytes; the
// smaller blocks take the FIFO path: the dump of 1 KiB blocks says so); a Gather's blocks
// under the policy only (the dumps say so), a Scatter's never. Every type at odd counts,
// in place and out of place, every root, against the host reference with guards around every buffer;
// then one group of two AlltoAlls (one in place), an AllGather and a Send/Recv ring (the
// FIFO path beside the copy engines); the schedule dump names the path; a graph of an
// AlltoAll replayed 100 times with new inputs, eager AlltoAlls between replays. Ranks
// sharing a GPU in this process keep the FIFO path (kernels/plan/direct_plan.cc).
TEST(GpuSingleProcess, SymmetricWindowsAlltoAllCopyEngines) {
  SKIP_WITHOUT_GPUS(1);
  for (const char* how : {"policy", "size"}) {
    SCOPED_TRACE(how);
    const bool policy = std::string(how) == "policy";
    ScopedEnv knob({{policy ? "NCCL_CTA_POLICY" : "MCCL_WIN_CE_MIN_BYTES", policy ? "2" : "4096"}});
    Clique cl(8);
    const int n = cl.n;
    if (n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
    const bool sharing = n > gpuCount();
    std::vector<CollCase> cases;
    uint64_t seed = 9100;
    size_t ti = 0;
    // Under either rule the blocks of 4 KiB or less stay on the FIFOs (the zero-CTA policy:
    // the LL kernel's one block beats the copies' two barrier kernels): both paths in one run.
    for (size_t count : {size_t{1}, size_t{7}, size_t{1023}, size_t{4099}, size_t{65536 + 3}, size_t{(1 << 18) + 5}})
      for (int k = 0; k < 4; ++k)
        for (bool inPlace : {false, true}) {
          cases.push_back(CollCase{CollKind::AlltoAll, kAllTypes[ti++ % 12], ncclSum, false, false, count, 0, inPlace,
                                   seed++});
          for (CollKind kind : {CollKind::Gather, CollKind::Scatter})
            cases.push_back(CollCase{kind, kAllTypes[ti++ % 12], ncclSum, false, false, count, k % n, inPlace, seed++});
        }
    std::vector<std::string> errs(static_cast<size_t>(n));
    std::vector<size_t> fifoBytes(static_cast<size_t>(n), 0);
    ThreadBarrier meet(n);
    std::atomic<bool> failed{false};
    std::string dump, smallDump, gatherDump, scatterDump;
    runThreads(n, [&](int r) {
      cudaSetDevice(cl.dev(r));
      WindowMemory mem(cl.comms[r], cl.dev(r), size_t{96} << 20);
      if (!runWindowCases(cl.comms[r], r, n, mem, meet, failed, cases, &errs[r], &fifoBytes[r])) return;
      // One group: AlltoAlls beside an AllGather, then a Send/Recv ring on the FIFOs.
      {
        const std::vector<CollCase> group = {
            {CollKind::AlltoAll, ncclFloat32, ncclSum, false, false, 5000, 0, false, 9301},
            {CollKind::AllGather, ncclInt32, ncclSum, false, false, 3000, 0, true, 9302},
            {CollKind::AlltoAll, ncclBfloat16, ncclSum, false, false, 7001, 0, true, 9303},
        };
        std::vector<std::unique_ptr<PreparedCase>> prepared;
        for (const CollCase& c : group) prepared.emplace_back(new PreparedCase(cl.comms[r], r, n, c, &mem));
        ncclResult_t rc = ncclGroupStart();
        for (auto& p : prepared)
          if (rc == ncclSuccess) rc = p->launch();
        const ncclResult_t ge = ncclGroupEnd();
        if (rc == ncclSuccess) rc = ge;
        for (auto& p : prepared) errs[r] += p->check(rc);
        errs[r] += runP2pPattern(cl.comms[r], r, n, "ring", 4097, ncclFloat16, 0, 9304, &mem);
      }
      // Which path an AlltoAll of 8 KiB blocks takes, and one of 1 KiB blocks, from the
      // schedule dump.
      const size_t count = 2048;
      float* in = static_cast<float*>(mem.alloc(count * n * sizeof(float)));
      float* out = static_cast<float*>(mem.alloc(count * n * sizeof(float)));
      for (size_t c : {count, count / 8})
        scheduleDumpOf(r, meet, [&] {
          if (ncclAlltoAll(in, out, c, ncclFloat, cl.comms[r], mem.stream()) != ncclSuccess)
            errs[r] += std::string("AlltoAll: ") + ncclGetLastError(cl.comms[r]);
          mem.synchronize();
        }, c == count ? &dump : &smallDump);
      // A Gather and a Scatter of 8 KiB blocks, rooted at the last rank.
      scheduleDumpOf(r, meet, [&] {
        if (ncclGather(in, out, count, ncclFloat, n - 1, cl.comms[r], mem.stream()) != ncclSuccess)
          errs[r] += std::string("Gather: ") + ncclGetLastError(cl.comms[r]);
        mem.synchronize();
      }, &gatherDump);
      scheduleDumpOf(r, meet, [&] {
        if (ncclScatter(out, in, count, ncclFloat, n - 1, cl.comms[r], mem.stream()) != ncclSuccess)
          errs[r] += std::string("Scatter: ") + ncclGetLastError(cl.comms[r]);
        mem.synchronize();
      }, &scatterDump);
      // A graph of one AlltoAll, replayed with new inputs; eager ones between replays.
      cudaStream_t s = mem.stream();
      cudaGraph_t g;
      cudaGraphExec_t gx;
      cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      const ncclResult_t rc = ncclAlltoAll(in, out, count, ncclFloat, cl.comms[r], s);
      const cudaError_t ce = cudaStreamEndCapture(s, &g);
      const bool made = rc == ncclSuccess && ce == cudaSuccess && cudaGraphInstantiate(&gx, g, 0) == cudaSuccess;
      if (!made) errs[r] += std::string("capture failed: ") + ncclGetLastError(cl.comms[r]);
      meet.wait();
      std::vector<float> h(count * n), got(count * n);
      // What rank p sends to rank q at index i of the block, in replay rep.
      auto value = [](int rep, int p, int q, size_t i) {
        return static_cast<float>(rep * 7 + p * 1000 + q * 100000 + static_cast<int>(i % 97));
      };
      for (int rep = 0; rep < 100; ++rep) {
        if (made && errs[r].size() < 4000) {
          for (int q = 0; q < n; ++q)
            for (size_t i = 0; i < count; ++i) h[q * count + i] = value(rep, r, q, i);
          cudaMemcpyAsync(in, h.data(), count * n * sizeof(float), cudaMemcpyHostToDevice, s);
          if (rep % 3 == 1 && ncclAlltoAll(in, out, count, ncclFloat, cl.comms[r], s) != ncclSuccess)
            errs[r] += std::string("eager: ") + ncclGetLastError(cl.comms[r]);
          cudaGraphLaunch(gx, s);
          cudaMemcpyAsync(got.data(), out, count * n * sizeof(float), cudaMemcpyDeviceToHost, s);
          if (cudaStreamSynchronize(s) != cudaSuccess) errs[r] += "replay " + std::to_string(rep) + " failed\n";
          for (size_t j = 0; j < count * n && errs[r].size() < 4000; j += 7) {
            const int p = static_cast<int>(j / count);
            if (got[j] != value(rep, p, r, j % count))
              errs[r] += "replay " + std::to_string(rep) + " element " + std::to_string(j) + " from rank " +
                         std::to_string(p) + ": " + std::to_string(got[j]) + "\n";
          }
        }
        meet.wait();  // every rank has read its results before any writes new inputs
      }
      if (made) cudaGraphExecDestroy(gx);
      if (ce == cudaSuccess) cudaGraphDestroy(g);
      mem.release(in);
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
      EXPECT_GT(fifoBytes[r], 0u) << "rank " << r << ": the blocks of 4 KiB or less made no FIFO connection";
    }
    EXPECT_EQ(dump.find("AlltoAll on symmetric windows (copy engines)") != std::string::npos, !sharing) << dump;
    EXPECT_FALSE(smallDump.empty());
    EXPECT_EQ(smallDump.find("(copy engines)"), std::string::npos) << smallDump;
    EXPECT_EQ(gatherDump.find("Gather on symmetric windows (copy engines)") != std::string::npos, policy && !sharing)
        << gatherDump;
    EXPECT_FALSE(scatterDump.empty());
    EXPECT_EQ(scatterDump.find("(copy engines)"), std::string::npos) << scatterDump;
  }
}

// The direct path's barrier counts continue across graph replays and eager calls, on two
// communicators alternating on one stream (each with its own windows and barrier arrays):
// a graph of a small and a large AllReduce on each, replayed 1,000 times, with eager calls
// between replays; every tenth replay's results are checked.
TEST(GpuSingleProcess, SymmetricWindowsGraphReplayAndTwoCommunicators) {
  SKIP_WITHOUT_GPUS(1);
  ScopedEnv everySize({{"MCCL_WIN_DIRECT", "2"}});  // the small AllReduce on the direct path too
  Clique a(8), b(8);
  const int n = a.n;
  if (n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
  std::vector<std::string> errs(static_cast<size_t>(n));
  ThreadBarrier ready(n);
  runThreads(n, [&](int r) {
    cudaSetDevice(a.dev(r));
    const size_t small = 7, large = 300001;
    const ncclComm_t comms[2] = {a.comms[r], b.comms[r]};
    float* buf[2] = {nullptr, nullptr};  // in small, in large, out small, out large
    ncclWindow_t win[2] = {nullptr, nullptr};
    const size_t total = 2 * (small + large);
    for (int c = 0; c < 2; ++c) {
      if (ncclMemAlloc(reinterpret_cast<void**>(&buf[c]), total * sizeof(float)) != ncclSuccess ||
          ncclCommWindowRegister(comms[c], buf[c], total * sizeof(float), &win[c], NCCL_WIN_COLL_SYMMETRIC) !=
              ncclSuccess) {
        errs[r] = std::string("window: ") + ncclGetLastError(comms[c]);
        return;
      }
    }
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    auto calls = [&]() {
      ncclResult_t rc = ncclSuccess;
      for (int c = 0; c < 2 && rc == ncclSuccess; ++c) {
        float* in = buf[c];
        float* out = buf[c] + small + large;
        rc = ncclAllReduce(in, out, small, ncclFloat, ncclSum, comms[c], s);
        if (rc == ncclSuccess) rc = ncclAllReduce(in + small, out + small, large, ncclFloat, ncclSum, comms[c], s);
      }
      return rc;
    };
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    ncclResult_t rc = calls();
    cudaError_t ce = cudaStreamEndCapture(s, &g);
    const bool made = rc == ncclSuccess && ce == cudaSuccess && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess;
    // Every rank's graph is made before any rank's first replay; a rank that failed keeps
    // meeting the others below, so none waits for it.
    if (!made) errs[r] = std::string("capture failed: ") + ncclGetLastError(a.comms[r]) + " / " + cudaGetErrorString(ce);
    ready.wait();
    std::vector<float> h(total);
    for (int rep = 0; rep < 1000; ++rep) {
      if (rep % 10 == 0) ready.wait();  // in step after each check, as above
      if (!errs[r].empty()) continue;
      if (rep % 10 == 0) {
        for (int c = 0; c < 2; ++c) {
          for (size_t i = 0; i < small + large; ++i) h[i] = static_cast<float>(rep + r + c + static_cast<int>(i % 5));
          cudaMemcpyAsync(buf[c], h.data(), (small + large) * sizeof(float), cudaMemcpyHostToDevice, s);
        }
      }
      if (rep % 3 == 1 && calls() != ncclSuccess) errs[r] = std::string("eager: ") + ncclGetLastError(a.comms[r]);
      cudaGraphLaunch(ge, s);
      if (rep % 10 != 9) continue;
      for (int c = 0; c < 2 && errs[r].empty(); ++c) {
        cudaMemcpyAsync(h.data(), buf[c] + small + large, (small + large) * sizeof(float), cudaMemcpyDeviceToHost, s);
        if (cudaStreamSynchronize(s) != cudaSuccess) {
          errs[r] = "replay failed";
          break;
        }
        for (size_t i = 0; i < small + large; i += (i < small ? 1 : 97)) {
          const float want = static_cast<float>(n * (rep - 9 + c) + n * (n - 1) / 2 + n * static_cast<int>(i % 5));
          if (h[i] != want) {
            errs[r] = "communicator " + std::to_string(c) + ", replay " + std::to_string(rep) + ", element " +
                      std::to_string(i) + ": " + std::to_string(h[i]) + " != " + std::to_string(want);
            break;
          }
        }
      }
    }
    cudaStreamSynchronize(s);
    if (made) cudaGraphExecDestroy(ge);
    if (ce == cudaSuccess) cudaGraphDestroy(g);
    for (int c = 0; c < 2; ++c) {
      if (ncclCommWindowDeregister(comms[c], win[c]) != ncclSuccess) errs[r] += " deregister failed";
      ncclMemFree(buf[c]);
    }
    cudaStreamDestroy(s);
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
}

// One thread issues a Gather for every rank in one group, out of place, to every root and at
// the sizes of each protocol (nccl-tests' gather with several GPUs a process).
TEST(GpuSingleProcess, OneThreadGatherEveryRootAndProtocol) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  const int n = cl.n;
  for (size_t count : {size_t{16}, size_t{8192}, size_t{1} << 18}) {
    std::vector<int*> in(n), out(n);
    std::vector<cudaStream_t> s(n);
    for (int r = 0; r < n; ++r) {
      CUDA_OK(cudaSetDevice(cl.dev(r)));
      CUDA_OK(cudaMalloc(&in[r], count * sizeof(int)));
      CUDA_OK(cudaMalloc(&out[r], count * n * sizeof(int)));
      CUDA_OK(cudaStreamCreateWithFlags(&s[r], cudaStreamNonBlocking));
      std::vector<int> h(count);
      for (size_t i = 0; i < count; ++i) h[i] = r * 1000003 + static_cast<int>(i);
      CUDA_OK(cudaMemcpy(in[r], h.data(), count * sizeof(int), cudaMemcpyHostToDevice));
      // A copy from pageable memory may return before its DMA lands, and the non-blocking
      // streams below do not wait for the legacy stream (seen once at one rank: a 1 MiB
      // block 90 % copied when the Gather's copy read it).
      CUDA_OK(cudaDeviceSynchronize());
    }
    for (int root = 0; root < n; ++root) {
      NCCL_OK(ncclGroupStart());
      for (int r = 0; r < n; ++r) NCCL_OK(ncclGather(in[r], out[r], count, ncclInt32, root, cl.comms[r], s[r]));
      NCCL_OK(ncclGroupEnd());
      for (int r = 0; r < n; ++r) {
        CUDA_OK(cudaSetDevice(cl.dev(r)));
        CUDA_OK(cudaStreamSynchronize(s[r]));
      }
      std::vector<int> h(count * n);
      CUDA_OK(cudaSetDevice(cl.dev(root)));
      CUDA_OK(cudaMemcpy(h.data(), out[root], h.size() * sizeof(int), cudaMemcpyDeviceToHost));
      for (int q = 0; q < n; ++q)
        for (size_t i = 0; i < count; i += 97)
          ASSERT_EQ(h[q * count + i], q * 1000003 + static_cast<int>(i)) << "count " << count << " root " << root << " block " << q;
    }
    for (int r = 0; r < n; ++r) {
      CUDA_OK(cudaSetDevice(cl.dev(r)));
      CUDA_OK(cudaStreamDestroy(s[r]));
      CUDA_OK(cudaFree(in[r]));
      CUDA_OK(cudaFree(out[r]));
    }
  }
}

TEST(GpuSingleProcess, CheckPointersRejectsPeerAndHostMemory) {
  SKIP_WITHOUT_GPUS(2);
  setenv("NCCL_CHECK_POINTERS", "1", 1);
  mccl::knobsReload();
  {
    Clique cl(2);
    float *mine, *other;
    CUDA_OK(cudaSetDevice(1));
    CUDA_OK(cudaMalloc(&other, 1024));
    CUDA_OK(cudaSetDevice(0));
    CUDA_OK(cudaMalloc(&mine, 1024));
    std::vector<float> host(256);
    // Rank 0 alone: the errors are found before any communication.
    EXPECT_EQ(ncclAllReduce(other, mine, 256, ncclFloat, ncclSum, cl.comms[0], nullptr), ncclInvalidArgument);
    EXPECT_TRUE(contains(ncclGetLastError(cl.comms[0]), "sendbuff")) << ncclGetLastError(cl.comms[0]);
    EXPECT_TRUE(contains(ncclGetLastError(cl.comms[0]), "device 1")) << ncclGetLastError(cl.comms[0]);
    EXPECT_EQ(ncclAllReduce(mine, host.data(), 256, ncclFloat, ncclSum, cl.comms[0], nullptr), ncclInvalidArgument);
    EXPECT_TRUE(contains(ncclGetLastError(cl.comms[0]), "recvbuff"));
    cudaFree(mine);
    CUDA_OK(cudaSetDevice(1));
    cudaFree(other);
  }
  unsetenv("NCCL_CHECK_POINTERS");
  mccl::knobsReload();
}

// A kernel that times out waiting for a peer marks the communicator failed, and every
// kernel queued behind it on the stream stops at its first check instead of waiting out
// its own MCCL_TIMEOUT for a peer that has moved on: rank 0 queues 20 AllReduces that
// rank 1 never joins; with MCCL_TIMEOUT=1 the stream drains in about one second, not 20.
// The communicator then reports ncclRemoteError (asynchronously and at the next call) with
// a message naming MCCL_TIMEOUT, and ncclCommAbort ends both ranks.
TEST(GpuSingleProcess, CallsQueuedBehindATimeoutStopWithIt) {
  SKIP_WITHOUT_GPUS(1);
  setenv("MCCL_TIMEOUT", "1", 1);  // read at each communicator's first GPU work
  mccl::knobsReload();
  {
    Clique cl(2);
    if (cl.n < 2) {
      unsetenv("MCCL_TIMEOUT");
      mccl::knobsReload();
      GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
    }
    const int n = cl.n;
    const size_t count = 4096;
    std::vector<float*> buf(static_cast<size_t>(n), nullptr);
    std::vector<cudaStream_t> s(static_cast<size_t>(n), nullptr);
    std::vector<std::string> errs(static_cast<size_t>(n));
    ThreadBarrier joined(n);
    // Every rank takes part once, so the connections exist and only the waits remain.
    runThreads(n, [&](int r) {
      cudaSetDevice(cl.dev(r));
      if (cudaMalloc(&buf[r], count * sizeof(float)) != cudaSuccess ||
          cudaMemset(buf[r], 0, count * sizeof(float)) != cudaSuccess ||
          cudaStreamCreateWithFlags(&s[r], cudaStreamNonBlocking) != cudaSuccess)
        errs[r] = "CUDA setup failed";
      joined.wait();
      if (!errs[0].empty() || !errs[n - 1].empty()) return;
      if (ncclAllReduce(buf[r], buf[r], count, ncclFloat, ncclSum, cl.comms[r], s[r]) != ncclSuccess ||
          cudaStreamSynchronize(s[r]) != cudaSuccess)
        errs[r] = std::string("joint AllReduce: ") + ncclGetLastError(cl.comms[r]);
    });
    for (int r = 0; r < n; ++r) ASSERT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];

    CUDA_OK(cudaSetDevice(cl.dev(0)));
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i)
      ASSERT_EQ(ncclAllReduce(buf[0], buf[0], count, ncclFloat, ncclSum, cl.comms[0], s[0]), ncclSuccess)
          << "call " << i << ": " << ncclGetLastError(cl.comms[0]);
    CUDA_OK(cudaStreamSynchronize(s[0]));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 10.0) << "20 calls behind a 1 s timeout took " << seconds << " s: each waited its own";
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(ncclCommGetAsyncError(cl.comms[0], &async), ncclSuccess);
    EXPECT_EQ(async, ncclRemoteError);
    EXPECT_TRUE(contains(ncclGetLastError(cl.comms[0]), "MCCL_TIMEOUT")) << ncclGetLastError(cl.comms[0]);
    EXPECT_EQ(ncclAllReduce(buf[0], buf[0], count, ncclFloat, ncclSum, cl.comms[0], s[0]), ncclRemoteError);

    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(ncclCommAbort(cl.comms[r]), ncclSuccess) << "rank " << r;
      cl.comms[r] = nullptr;
      CUDA_OK(cudaSetDevice(cl.dev(r)));
      CUDA_OK(cudaStreamDestroy(s[r]));
      CUDA_OK(cudaFree(buf[r]));
    }
  }
  unsetenv("MCCL_TIMEOUT");
  mccl::knobsReload();
}

// ncclCommRevoke and ncclCommShrink on GPU communicators, with kernels waiting for a rank
// that never comes: the last rank stays out of three calls the others queue (an LL
// AllReduce, a Simple AllReduce of 64 MiB, a Send to it), so their kernels spin on its
// flags. The survivors then either revoke (each its own communicator; it returns once the
// kernels have left, in less than half of MCCL_TIMEOUT) and shrink the revoked parent, or
// shrink with NCCL_SHRINK_ABORT straight away. Their streams drain without an error; the
// revoked parent refuses collectives and stays quiescent; the shrunk communicator runs
// checked collectives on the GPU (LL, Simple, and a ring of Send/Recv over its ranks).
TEST(GpuSingleProcess, RevokeAndShrinkStopKernelsWaitingOnAnAbsentRank) {
  SKIP_WITHOUT_GPUS(1);
  for (const int flags : {-1, NCCL_SHRINK_ABORT}) {  // -1: ncclCommRevoke, then NCCL_SHRINK_DEFAULT
    SCOPED_TRACE(flags < 0 ? "revoke, then shrink" : "shrink with NCCL_SHRINK_ABORT");
    Clique cl(3);
    if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 on one GPU)";
    const int n = cl.n, out = n - 1, m = n - 1;
    const size_t small = 4096, large = size_t{16} << 20;  // floats: LL, and Simple
    std::vector<float*> a(static_cast<size_t>(n), nullptr), b(static_cast<size_t>(n), nullptr);
    std::vector<cudaStream_t> s(static_cast<size_t>(n), nullptr);
    std::vector<std::string> errs(static_cast<size_t>(n));
    std::vector<double> stopSeconds(static_cast<size_t>(n), 0.0);
    std::vector<ncclComm_t> kids(static_cast<size_t>(n), nullptr);
    ThreadBarrier meet(n);
    runThreads(n, [&](int r) {
      std::string& e = errs[r];
      cudaSetDevice(cl.dev(r));
      if (cudaMalloc(&a[r], large * sizeof(float)) != cudaSuccess ||
          cudaMalloc(&b[r], large * sizeof(float)) != cudaSuccess ||
          cudaMemset(a[r], 0, large * sizeof(float)) != cudaSuccess ||
          cudaStreamCreateWithFlags(&s[r], cudaStreamNonBlocking) != cudaSuccess)
        e = "CUDA setup failed";
      meet.wait();
      // Every rank takes part in the same calls once, so the connections exist (making one
      // needs both ends) and only the waits remain.
      if (e.empty()) {
        bool ok = ncclAllReduce(a[r], b[r], small, ncclFloat, ncclSum, cl.comms[r], s[r]) == ncclSuccess &&
                  ncclAllReduce(a[r], b[r], large, ncclFloat, ncclSum, cl.comms[r], s[r]) == ncclSuccess &&
                  ncclGroupStart() == ncclSuccess;
        for (int p = 0; ok && p < out; ++p)
          ok = (r == out ? ncclRecv(b[r] + p * small, small, ncclFloat, p, cl.comms[r], s[r])
                         : r == p ? ncclSend(a[r], small, ncclFloat, out, cl.comms[r], s[r])
                                  : ncclSuccess) == ncclSuccess;
        ok = ncclGroupEnd() == ncclSuccess && ok && cudaStreamSynchronize(s[r]) == cudaSuccess;
        if (!ok) e = std::string("the calls with every rank: ") + ncclGetLastError(cl.comms[r]);
      }
      meet.wait();
      if (r == out) return;  // absent from here on (its communicator is aborted at the end)
      ncclComm_t c = cl.comms[r];
      if (e.empty() && (ncclAllReduce(a[r], b[r], small, ncclFloat, ncclSum, c, s[r]) != ncclSuccess ||
                        ncclAllReduce(a[r], b[r], large, ncclFloat, ncclSum, c, s[r]) != ncclSuccess ||
                        ncclSend(a[r], small, ncclFloat, out, c, s[r]) != ncclSuccess))
        e = std::string("queueing the calls: ") + ncclGetLastError(c);
      if (!e.empty()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      if (cudaStreamQuery(s[r]) != cudaErrorNotReady) {
        e = "the calls without the last rank ended on their own";
        return;
      }
      int excluded[1] = {out};
      const auto t0 = std::chrono::steady_clock::now();
      ncclResult_t res;
      if (flags < 0) {
        res = ncclCommRevoke(c, NCCL_REVOKE_DEFAULT);
        if (res == ncclSuccess) {
          // Revoke returns once the communicator is quiescent: its kernels are gone.
          stopSeconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          if (cudaStreamQuery(s[r]) == cudaErrorNotReady) e += "the stream still runs after ncclCommRevoke; ";
          ncclResult_t async = ncclInProgress;
          if (ncclCommGetAsyncError(c, &async) != ncclSuccess || async != ncclSuccess)
            e += std::string("revoked, ncclCommGetAsyncError says ") + ncclGetErrorString(async) + "; ";
          if (ncclAllReduce(a[r], b[r], small, ncclFloat, ncclSum, c, s[r]) != ncclInvalidUsage)
            e += "a collective on the revoked communicator was not refused; ";
          res = ncclCommShrink(c, excluded, 1, &kids[r], nullptr, NCCL_SHRINK_DEFAULT);
        }
      } else {
        res = ncclCommShrink(c, excluded, 1, &kids[r], nullptr, NCCL_SHRINK_ABORT);
        stopSeconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      if (res != ncclSuccess || kids[r] == nullptr) {
        e += std::string("revoke/shrink: ") + ncclGetErrorString(res) + ": " + ncclGetLastError(c);
        return;
      }
      const cudaError_t drained = cudaStreamSynchronize(s[r]);
      if (drained != cudaSuccess) e += std::string("the stream after the revoke: ") + cudaGetErrorString(drained) + "; ";
      int count = -1, rank = -1;
      ncclCommCount(kids[r], &count);
      ncclCommUserRank(kids[r], &rank);
      if (count != m || rank != r) {
        e += "the shrunk communicator is rank " + std::to_string(rank) + " of " + std::to_string(count);
        return;
      }
      GpuMemory mem(cl.dev(r));
      for (const CollCase& k : {CollCase{CollKind::AllReduce, ncclFloat32, ncclSum, false, false, 1001, 0, false, 7},
                                CollCase{CollKind::AllReduce, ncclBfloat16, ncclMax, false, false, size_t{3} << 20, 0, true, 8},
                                CollCase{CollKind::AllGather, ncclInt32, ncclSum, false, false, 70001, 0, false, 9},
                                CollCase{CollKind::ReduceScatter, ncclFloat64, ncclMin, false, false, 5000, 0, false, 10}})
        e += runCollCase(kids[r], rank, m, k, &mem);
      // A ring of Send/Recv over the survivors, on the GPU.
      if (m > 1) {
        const int to = (rank + 1) % m, from = (rank + m - 1) % m;
        std::vector<float> want(small), got(small);
        for (size_t i = 0; i < small; ++i) want[i] = static_cast<float>(from * 100000 + static_cast<int>(i));
        std::vector<float> mine(small);
        for (size_t i = 0; i < small; ++i) mine[i] = static_cast<float>(rank * 100000 + static_cast<int>(i));
        bool ok = uploadOn(s[r], a[r], mine.data(), small * sizeof(float)) == cudaSuccess &&
                  ncclGroupStart() == ncclSuccess &&
                  ncclSend(a[r], small, ncclFloat, to, kids[r], s[r]) == ncclSuccess &&
                  ncclRecv(b[r], small, ncclFloat, from, kids[r], s[r]) == ncclSuccess &&
                  ncclGroupEnd() == ncclSuccess &&
                  cudaMemcpyAsync(got.data(), b[r], small * sizeof(float), cudaMemcpyDeviceToHost, s[r]) == cudaSuccess &&
                  cudaStreamSynchronize(s[r]) == cudaSuccess;
        if (!ok) e += std::string("Send/Recv ring on the shrunk communicator: ") + ncclGetLastError(kids[r]);
        else if (got != want) e += "Send/Recv ring on the shrunk communicator: wrong data; ";
      }
    });
    // Well before the kernels would give up on their own (MCCL_TIMEOUT).
    const double bound = static_cast<double>(mccl::knobInt(mccl::Knob::Timeout)) / 2;
    for (int r = 0; r < n; ++r) {
      EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
      EXPECT_LT(stopSeconds[r], bound) << "rank " << r << ": stopping the waiting kernels took " << stopSeconds[r]
                                       << " s (MCCL_TIMEOUT " << 2 * bound << " s)";
    }
    for (int r = 0; r < n; ++r) {
      if (kids[r]) EXPECT_EQ(ncclCommDestroy(kids[r]), ncclSuccess) << ncclGetLastError(kids[r]);
      EXPECT_EQ(r == out ? ncclCommAbort(cl.comms[r]) : ncclCommDestroy(cl.comms[r]), ncclSuccess) << "rank " << r;
      cl.comms[r] = nullptr;
      CUDA_OK(cudaSetDevice(cl.dev(r)));
      CUDA_OK(cudaStreamDestroy(s[r]));
      CUDA_OK(cudaFree(a[r]));
      CUDA_OK(cudaFree(b[r]));
    }
  }
}

// The driver's page for device memory (cuMemGetAllocationGranularity on device 0; 2 MiB
// on Hopper): what the sparse connection table maps at a time.
static size_t devicePage() {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion("cuMemGetAllocationGranularity", &f, 12000, cudaEnableDefault, &q) !=
          cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return 0;
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t gran = 0;
  auto fn = reinterpret_cast<CUresult (*)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags)>(f);
  return fn(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS ? gran : 0;
}

// The GPU connection table has memory only behind the blocks of the peers a rank connects
// to (issue 17; src/ipc_transport/conn_table.h): 80 ranks over the visible GPUs, made with
// the default table (MCCL_CONN_TABLE=auto: sparse, the table being larger than a page) and
// with MCCL_CONN_TABLE=full (80 blocks of 126 KiB in one allocation). Sparse, a rank's control memory at init is the pages of its ring
// neighbours' blocks (at most two), unchanged by a ring AllReduce on Simple but for the
// head words of its sends, and grows by at most two pages more for a Send/Recv with the
// rank half the ring away: bounded by the peers it connects to, not by the ranks, and
// below the full table's. Both layouts give the reference results.
TEST(GpuSingleProcess, ConnectionTableMemoryFollowsConnectedPeers) {
  SKIP_WITHOUT_GPUS(1);
  constexpr int kRanks = 80;
  constexpr size_t kHeadSlack = 64 * 1024;  // blocks of head words (7 KiB a peer)
  const size_t page = devicePage();
  ASSERT_GT(page, 0u) << "no cuMemGetAllocationGranularity";
  auto run = [](const char* layout, std::vector<mcclMemoryInfo_t> (&at)[3], std::string* errs) {
    ScopedEnv env({{"MCCL_SHARED_GPU", "1"}, {"NCCL_MAX_NCHANNELS", "2"}, {"NCCL_PROTO", "Simple"},
                   {"NCCL_ALGO", "ring"}, {"MCCL_CONN_TABLE", layout}, {"MCCL_TIMEOUT", "60"}});
    std::vector<ncclComm_t> comms(kRanks, nullptr);
    std::vector<int> devs;
    for (int r = 0; r < kRanks; ++r) devs.push_back(r % gpuCount());
    ASSERT_EQ(ncclCommInitAll(comms.data(), kRanks, devs.data()), ncclSuccess) << ncclGetLastError(nullptr);
    for (auto& v : at) v.assign(kRanks, mcclMemoryInfo_t{});
    std::vector<std::string> e(kRanks);
    runThreads(kRanks, [&](int r) {
      cudaSetDevice(devs[r]);
      GpuMemory mem(devs[r]);
      mcclCommMemoryInfo(comms[r], &at[0][r]);
      CollCase c;
      c.kind = CollKind::AllReduce;
      c.count = 100003;
      c.seed = 17;
      e[r] += runCollCase(comms[r], r, kRanks, c, &mem);
      e[r] += runP2pPattern(comms[r], r, kRanks, "neighbor", 4099, ncclFloat32, 0, 23, &mem);  // ring neighbours
      mcclCommMemoryInfo(comms[r], &at[1][r]);
      // Half the ring away: its own page (the neighbours' is mapped already).
      const int to = (r + kRanks / 2) % kRanks, from = (r + kRanks - kRanks / 2) % kRanks;
      float* buf = static_cast<float*>(mem.alloc(2 * 1024 * sizeof(float)));
      std::vector<float> host(1024);
      for (int i = 0; i < 1024; ++i) host[i] = static_cast<float>(r * 1024 + i);
      mem.upload(buf, host.data(), host.size() * sizeof(float));
      ncclGroupStart();
      ncclSend(buf, 1024, ncclFloat32, to, comms[r], mem.stream());
      ncclRecv(buf + 1024, 1024, ncclFloat32, from, comms[r], mem.stream());
      if (ncclGroupEnd() != ncclSuccess) e[r] += std::string("send/recv: ") + ncclGetLastError(comms[r]);
      mem.synchronize();
      mem.download(host.data(), buf + 1024, host.size() * sizeof(float));
      for (int i = 0; i < 1024; ++i)
        if (host[i] != static_cast<float>(from * 1024 + i)) {
          e[r] += "send/recv from rank " + std::to_string(from) + ": element " + std::to_string(i) + " is " +
                  std::to_string(host[i]) + "\n";
          break;
        }
      mem.release(buf);
      mcclCommMemoryInfo(comms[r], &at[2][r]);
    });
    for (int r = 0; r < kRanks; ++r) {
      if (!e[r].empty()) *errs += std::string(layout) + " rank " + std::to_string(r) + ": " + e[r];
      EXPECT_EQ(ncclCommDestroy(comms[r]), ncclSuccess);
    }
  };
  std::vector<mcclMemoryInfo_t> sparse[3], full[3];
  std::string errs;
  run("auto", sparse, &errs);
  run("full", full, &errs);
  EXPECT_TRUE(errs.empty()) << errs;
  size_t most[4] = {0, 0, 0, 0};
  for (int r = 0; r < kRanks; ++r) {
    most[0] = std::max(most[0], sparse[0][r].controlBytes);
    most[1] = std::max(most[1], sparse[1][r].controlBytes);
    most[2] = std::max(most[2], sparse[2][r].controlBytes);
    most[3] = std::max(most[3], full[0][r].controlBytes);
  }
  std::printf("connection table, %d ranks, page %zu KiB: control bytes per rank (most): sparse %zu at init, %zu after "
              "the ring AllReduce and neighbour exchange, %zu after the far Send/Recv; full %zu at init\n",
              kRanks, page / 1024, most[0], most[1], most[2], most[3]);
  for (int r = 0; r < kRanks; ++r) {
    const size_t fullInit = full[0][r].controlBytes, s0 = sparse[0][r].controlBytes, s1 = sparse[1][r].controlBytes,
                 s2 = sparse[2][r].controlBytes;
    EXPECT_GE(fullInit, size_t{kRanks} * 126 * 1024) << "rank " << r;
    EXPECT_GE(s0, page) << "rank " << r << ": the sparse table at init";
    EXPECT_LE(s0, 2 * page) << "rank " << r << ": the sparse table at init";
    EXPECT_LE(s1, s0 + kHeadSlack) << "rank " << r << ": after a ring AllReduce and the neighbour exchange";
    EXPECT_LE(s2, s0 + 2 * page + kHeadSlack) << "rank " << r << ": after a Send/Recv half the ring away";
    EXPECT_LT(s2, fullInit) << "rank " << r;
  }
}

// Point-to-point connections on one node take FIFO slots of NCCL_P2P_NVL_CHUNKSIZE (512 KiB
// unless set, as NCCL's) on two ranks, and on more wherever it is set; the collectives'
// keep NCCL_BUFFSIZE / MCCL_FIFO_SLOTS (1 MiB): a Send's step (the schedule dump's chunk)
// fits one, and is one on two ranks at 64 MiB; a Broadcast's chain on more than two ranks
// steps 128 KiB. Sends and Recvs stay right with slots of the default, of 1 MiB, of an
// odd 300000 bytes (299776 kept: whole 256-byte lines) and of 64 KiB (64 asked for, 28
// kept: a unit word a slot), in AlltoAll, Gather and Scatter of odd counts and every type
// width beside AllReduces (the other class), each setting on communicators made under it.
TEST(GpuSingleProcess, PointToPointFifoSlotsOfNvlChunkSize) {
  SKIP_WITHOUT_GPUS(1);
  struct Setting {
    const char* env;   // NCCL_P2P_NVL_CHUNKSIZE, or unset
    size_t slotBytes;  // a point-to-point slot under it (unset: on two ranks)
  };
  const size_t collSlot = 1048576;  // NCCL_BUFFSIZE 4 MiB / 4
  for (const Setting& st : {Setting{nullptr, 524288}, Setting{"1048576", 1048576}, Setting{"300000", 299776},
                            Setting{"65536", 65536}}) {
    const std::string name = st.env ? st.env : "(unset)";
    std::unique_ptr<ScopedEnv> env(st.env ? new ScopedEnv({{"NCCL_P2P_NVL_CHUNKSIZE", st.env}}) : nullptr);
    Clique cl(8);
    if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
    const int n = cl.n;
    const size_t p2pSlot = st.env || n == 2 ? st.slotBytes : collSlot;
    // 64 MiB and 12 bytes a block: beyond two ranks a Send's channels want steps of
    // 64 MiB / 16 / 2 > 1 MiB, so they take whole slots.
    const size_t count = (size_t{1} << 24) + 3;
    std::vector<std::string> errs(static_cast<size_t>(n));
    std::string dump;
    ThreadBarrier meet(n);
    runThreads(n, [&](int r) {
      cudaSetDevice(cl.dev(r));
      float *in = nullptr, *out = nullptr;
      cudaMalloc(&in, count * n * sizeof(float));
      cudaMalloc(&out, count * n * sizeof(float));
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      // Element i of rank q's input (exact in float).
      auto value = [](int q, size_t i) { return static_cast<float>((static_cast<size_t>(q) * 131 + i % 4099) % 8192); };
      std::vector<float> h(count * n);
      for (size_t i = 0; i < h.size(); ++i) h[i] = value(r, i);
      if (uploadOn(s, in, h.data(), h.size() * sizeof(float)) != cudaSuccess) errs[r] += "upload failed; ";
      scheduleDumpOf(r, meet, [&] {
        if (ncclAlltoAll(in, out, count, ncclFloat, cl.comms[r], s) != ncclSuccess)
          errs[r] += std::string("AlltoAll: ") + ncclGetLastError(cl.comms[r]);
        cudaStreamSynchronize(s);
        if (ncclBroadcast(in, in, count, ncclFloat, 0, cl.comms[r], s) != ncclSuccess)  // rank 0's first block
          errs[r] += std::string("Broadcast: ") + ncclGetLastError(cl.comms[r]);
        cudaStreamSynchronize(s);
      }, &dump);
      cudaMemcpy(h.data(), out, h.size() * sizeof(float), cudaMemcpyDeviceToHost);
      for (int p = 0; p < n && errs[r].empty(); ++p)
        for (size_t i = 0; i < count; ++i)
          if (h[static_cast<size_t>(p) * count + i] != value(p, static_cast<size_t>(r) * count + i)) {
            errs[r] += "AlltoAll from rank " + std::to_string(p) + " element " + std::to_string(i) + "\n";
            break;
          }
      cudaMemcpy(h.data(), in, count * sizeof(float), cudaMemcpyDeviceToHost);
      for (size_t i = 0; i < count; ++i)
        if (h[i] != value(0, i)) {
          errs[r] += "Broadcast element " + std::to_string(i) + "\n";
          break;
        }
      cudaFree(in);
      cudaFree(out);
      cudaStreamDestroy(s);
    });
    for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << name << " rank " << r << ": " << errs[r];
    // The step in bytes of each schedule of rank 0 whose dump line starts with `what` (its
    // Sends to itself left out).
    auto steps = [&](const char* what) {
      std::vector<size_t> out;
      for (size_t at = dump.find(what); at != std::string::npos; at = dump.find(what, at + 1)) {
        int rank = -1, ranks = 0, root = -1;
        long long cnt = 0, chunk = 0;
        const char* line = dump.c_str() + dump.find(" rank ", at);
        if (std::sscanf(line, " rank %d/%d root %d count %lld chunk %lld", &rank, &ranks, &root, &cnt, &chunk) != 5)
          ADD_FAILURE() << name << ": unparsed dump line: " << dump.substr(at, 120);
        else if (root != rank || what[0] != 'S')
          out.push_back(static_cast<size_t>(chunk) * sizeof(float));
      }
      EXPECT_FALSE(out.empty()) << name << ": no " << what << " in the schedule dump:\n" << dump.substr(0, 2000);
      return out;
    };
    // Every Send to another rank steps at most a slot; on two ranks, from 32 MiB, 128 KiB
    // (planner.cc, kP2pFineStepBytes) or the slot where that is smaller.
    for (size_t step : steps("Send/")) {
      EXPECT_LE(step, p2pSlot) << name;
      if (n == 2) EXPECT_EQ(step, std::min(p2pSlot, size_t{128} * 1024)) << name;
    }
    for (size_t step : steps("Broadcast/")) {
      if (n > 2)
        EXPECT_EQ(step, size_t{128} * 1024) << name << ": a chain of " << n << " ranks";
      else
        EXPECT_LE(step, collSlot) << name;
    }
    std::vector<CollCase> cases;
    uint64_t seed = 11;
    for (size_t c : {size_t{1}, size_t{1000}, size_t{100003}, (size_t{1} << 20) + 5, size_t{3} << 19})
      for (ncclDataType_t t : {ncclInt8, ncclBfloat16, ncclFloat32, ncclFloat64})
        for (bool inPlace : {false, true}) {
          cases.push_back(CollCase{CollKind::AlltoAll, t, ncclSum, false, false, c, 0, inPlace, seed++});
          cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, false, false, c, 0, inPlace, seed++});
          cases.push_back(CollCase{CollKind::Gather, t, ncclSum, false, false, c, n - 1, inPlace, seed++});
          cases.push_back(CollCase{CollKind::Scatter, t, ncclSum, false, false, c, 0, inPlace, seed++});
        }
    runCases(cl, cases);
  }
}

// Counts past 2^31 elements (a size_t count, as the API takes it): every collective and
// Send/Recv on uint8 counts of 2^31 + 4099 a rank (blocks, offsets and byte totals past
// 2^31 and 2^32), and an in-place float AllReduce of 2^31 + 3 elements (8 GiB: element
// indices past 2^31, byte offsets past 2^33). Each buffer is one value with marker bytes at
// the places a 32-bit index would wrap or stop (0, 1, 2^31 - 1, 2^31, 2^31 + 1, 2^32 - 1,
// 2^32, 2^32 + 1, the last two), and every byte of every result is compared with what the
// inputs give: sums of small values (exact in uint8 and float), blocks by sender.
TEST(GpuSingleProcess, CountsPast2To31Elements) {
  SKIP_WITHOUT_GPUS(1);
  Clique cl(8);
  const int n = cl.n;
  const size_t C = (size_t{1} << 31) + 4099;  // uint8 elements a rank
  const size_t F = (size_t{1} << 31) + 3;     // float elements
  const size_t aBytes = std::max(static_cast<size_t>(n) * C, F * sizeof(float)), bBytes = static_cast<size_t>(n) * C;
  const int perGpu = (n + gpuCount() - 1) / gpuCount();
  size_t freeBytes = 0, totalBytes = 0;
  cudaSetDevice(0);
  cudaMemGetInfo(&freeBytes, &totalBytes);
  if (freeBytes < static_cast<size_t>(perGpu) * (aBytes + bBytes + (size_t{1} << 30)))
    GTEST_SKIP() << "needs " << ((aBytes + bBytes) >> 30) + 1 << " GiB of GPU memory a rank";
  // The places of a block of `len` where a 32-bit count would go wrong.
  auto probes = [](size_t len) {
    std::vector<size_t> p;
    const size_t at[] = {0,
                         1,
                         (size_t{1} << 31) - 1,
                         size_t{1} << 31,
                         (size_t{1} << 31) + 1,
                         (size_t{1} << 32) - 1,
                         size_t{1} << 32,
                         (size_t{1} << 32) + 1,
                         len - 2,
                         len - 1};
    for (size_t x : at)
      if (x < len && std::find(p.begin(), p.end(), x) == p.end()) p.push_back(x);
    std::sort(p.begin(), p.end());
    return p;
  };
  // Summed inputs: rank r's bytes are r + 1, its markers 9 + r + 2 (p % 5) (sums of eight
  // ranks stay below 256, and a marker's sum never equals the value's).
  auto sumBase = [](int r) { return static_cast<uint8_t>(r + 1); };
  auto sumMark = [](int r, size_t p) { return static_cast<uint8_t>(9 + r + 2 * (p % 5)); };
  // Moved inputs: block q of rank r is 1 + (8 r + q) % 120, its markers 128 + (8 r + q + p % 7) % 120.
  auto moveBase = [](int r, int q) { return static_cast<uint8_t>(1 + (8 * r + q) % 120); };
  auto moveMark = [](int r, int q, size_t p) { return static_cast<uint8_t>(128 + (8 * r + q + p % 7) % 120); };
  std::vector<std::string> errs(static_cast<size_t>(n));
  ThreadBarrier allocated(n), done(n);
  std::atomic<bool> noMemory{false};
  runThreads(n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    std::string& err = errs[static_cast<size_t>(r)];
    ncclComm_t comm = cl.comms[static_cast<size_t>(r)];
    cudaStream_t s;
    uint8_t *a = nullptr, *b = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess || cudaMalloc(&a, aBytes) != cudaSuccess ||
        cudaMalloc(&b, bBytes) != cudaSuccess) {
      err = "allocation failed";
      noMemory = true;
    }
    // Ranks sharing a GPU allocate and free while none of them has a kernel running
    // (cudaMalloc and cudaFree may wait for the whole device); all stop if one could not.
    allocated.wait();
    if (noMemory) {
      cudaFree(a);
      cudaFree(b);
      return;
    }
    std::vector<uint8_t> h(size_t{64} << 20);
    // A block of `len` bytes at d: `base` everywhere, mark(p) at the probes.
    auto fill = [&](uint8_t* d, size_t len, uint8_t base, const std::function<uint8_t(size_t)>& mark) {
      cudaMemsetAsync(d, base, len, s);
      for (size_t p : probes(len)) {
        uint8_t v = mark(p);
        if (uploadOn(s, d + p, &v, 1) != cudaSuccess) err += "upload failed; ";
      }
    };
    // Every element of [d, d + len) against base, those at the places pr against mark(p).
    auto scan = [&](const char* what, const auto* d, size_t len, auto base, const std::vector<size_t>& pr,
                    const auto& mark) {
      using T = decltype(base);
      if (cudaStreamSynchronize(s) != cudaSuccess) {
        err += std::string(what) + ": stream failed; ";
        return;
      }
      T* hv = reinterpret_cast<T*>(h.data());
      const size_t chunk = h.size() / sizeof(T);
      size_t wrong = 0, first = len;
      for (size_t off = 0; off < len; off += chunk) {
        const size_t m = std::min(chunk, len - off);
        if (cudaMemcpyAsync(hv, d + off, m * sizeof(T), cudaMemcpyDeviceToHost, s) != cudaSuccess ||
            cudaStreamSynchronize(s) != cudaSuccess) {
          err += std::string(what) + ": download failed; ";
          return;
        }
        for (size_t p : pr)
          if (p >= off && p < off + m) {
            if (hv[p - off] != mark(p)) {
              ++wrong;
              first = std::min(first, p);
            }
            hv[p - off] = base;  // checked: the scan below takes it as the value
          }
        for (size_t i = 0; i < m; ++i)
          if (hv[i] != base) {
            ++wrong;
            first = std::min(first, off + i);
          }
      }
      if (wrong)
        err += std::string(what) + ": " + std::to_string(wrong) + " wrong elements of " + std::to_string(len) +
               ", the first at " + std::to_string(first) + "; ";
    };
    auto check = [&](const char* what, const uint8_t* d, size_t len, uint8_t base,
                     const std::function<uint8_t(size_t)>& mark) { scan(what, d, len, base, probes(len), mark); };
    auto call = [&](const char* what, ncclResult_t rc) {
      if (rc != ncclSuccess) err += std::string(what) + ": " + ncclGetLastError(comm) + "; ";
    };
    uint8_t sumAll = 0;
    for (int q = 0; q < n; ++q) sumAll = static_cast<uint8_t>(sumAll + sumBase(q));
    auto sumMarks = [&](size_t p) {
      unsigned t = 0;
      for (int q = 0; q < n; ++q) t += sumMark(q, p);
      return static_cast<uint8_t>(t);
    };
    auto myMark = [&](size_t p) { return sumMark(r, p); };

    // AllReduce out of place, then Reduce to the last rank.
    fill(a, C, sumBase(r), myMark);
    cudaMemsetAsync(b, 0, C, s);
    call("AllReduce", ncclAllReduce(a, b, C, ncclUint8, ncclSum, comm, s));
    check("AllReduce", b, C, sumAll, sumMarks);
    cudaMemsetAsync(b, 0, C, s);
    call("Reduce", ncclReduce(a, b, C, ncclUint8, ncclSum, n - 1, comm, s));
    if (r == n - 1) check("Reduce", b, C, sumAll, sumMarks);
    // Broadcast in place from rank 0.
    fill(b, C, moveBase(r, 0), [&](size_t p) { return moveMark(r, 0, p); });
    call("Broadcast", ncclBroadcast(b, b, C, ncclUint8, 0, comm, s));
    check("Broadcast", b, C, moveBase(0, 0), [&](size_t p) { return moveMark(0, 0, p); });
    // AllGather: block q of the output is rank q's input.
    fill(b, C, moveBase(r, 0), [&](size_t p) { return moveMark(r, 0, p); });
    cudaMemsetAsync(a, 0, static_cast<size_t>(n) * C, s);
    call("AllGather", ncclAllGather(b, a, C, ncclUint8, comm, s));
    for (int q = 0; q < n; ++q)
      check("AllGather", a + static_cast<size_t>(q) * C, C, moveBase(q, 0), [&](size_t p) { return moveMark(q, 0, p); });
    // ReduceScatter: every rank's block r, summed.
    for (int q = 0; q < n; ++q) fill(a + static_cast<size_t>(q) * C, C, sumBase(r), myMark);
    cudaMemsetAsync(b, 0, C, s);
    call("ReduceScatter", ncclReduceScatter(a, b, C, ncclUint8, ncclSum, comm, s));
    check("ReduceScatter", b, C, sumAll, sumMarks);
    // AlltoAll: block q of rank r's input lands in block r of rank q's output.
    for (int q = 0; q < n; ++q)
      fill(a + static_cast<size_t>(q) * C, C, moveBase(r, q), [&](size_t p) { return moveMark(r, q, p); });
    cudaMemsetAsync(b, 0, static_cast<size_t>(n) * C, s);
    call("AlltoAll", ncclAlltoAll(a, b, C, ncclUint8, comm, s));
    for (int q = 0; q < n; ++q)
      check("AlltoAll", b + static_cast<size_t>(q) * C, C, moveBase(q, r), [&](size_t p) { return moveMark(q, r, p); });
    // Send/Recv around the ring.
    const int to = (r + 1) % n, from = (r + n - 1) % n;
    fill(a, C, moveBase(r, to), [&](size_t p) { return moveMark(r, to, p); });
    cudaMemsetAsync(b, 0, C, s);
    ncclGroupStart();
    call("Send", ncclSend(a, C, ncclUint8, to, comm, s));
    call("Recv", ncclRecv(b, C, ncclUint8, from, comm, s));
    call("ncclGroupEnd", ncclGroupEnd());
    check("Send/Recv", b, C, moveBase(from, r), [&](size_t p) { return moveMark(from, r, p); });

    // Float AllReduce in place, 2^31 + 3 elements. The bytes 0x40 make 3.0039215 (six low
    // mantissa bits clear), so sums of up to 64 ranks are exact in any order; the markers
    // are small integers.
    float* f = reinterpret_cast<float*>(a);
    cudaMemsetAsync(f, 0x40, F * sizeof(float), s);
    const size_t fp[] = {0, (size_t{1} << 31) - 1, size_t{1} << 31, (size_t{1} << 31) + 1, F - 1};
    for (size_t i : fp) {
      float v = static_cast<float>(r + 1) * static_cast<float>(1 + i % 3);
      if (uploadOn(s, f + i, &v, sizeof v) != cudaSuccess) err += "upload failed; ";
    }
    call("AllReduce float", ncclAllReduce(f, f, F, ncclFloat32, ncclSum, comm, s));
    float one;
    std::memset(&one, 0x40, sizeof one);
    scan("AllReduce float", f, F, static_cast<float>(static_cast<double>(one) * n),
         std::vector<size_t>(std::begin(fp), std::end(fp)),
         [&](size_t i) { return static_cast<float>(n * (n + 1) / 2) * static_cast<float>(1 + i % 3); });
    cudaStreamSynchronize(s);
    done.wait();
    cudaFree(a);
    cudaFree(b);
    cudaStreamDestroy(s);
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[static_cast<size_t>(r)].empty()) << "rank " << r << ": " << errs[static_cast<size_t>(r)];
}
