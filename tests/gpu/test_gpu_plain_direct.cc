// The direct path on plain buffers (kernels/work/direct.h): AllReduce, ReduceScatter and
// AllGather on cudaMalloc'ed buffers that are no window read and write the peers' buffers in
// place, their addresses exchanged in the kernel over the LL connections, or staged through
// those connections' slots where a peer does not map a buffer. MCCL_PLAIN_DIRECT=2 takes the
// path at every size, 3 with every part staged. Ranks that are threads of one process always
// reach each other's buffers, so here only 3 runs the staged half; across processes the
// first use of a buffer is staged and later ones in place (GpuMpi.PlainBuffersDirect).
// Every case is checked against the host reference of tests/common/coll_check.h, with guards
// around every output; the schedule dump names the path.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "clique.h"
#include "core/knobs.h"
#include "core/types.h"
#include "gpu_util.h"
#include "scoped_env.h"
#include "test_util.h"

using namespace mccl_test;

namespace {

// AllReduce (every operator, PreMulSum), ReduceScatter and AllGather of every type, in place
// and out of place, at odd counts and at buffers one element past 16-byte bounds, each case
// twice (the second on the buffers of the first, as a caching allocator hands them out).
std::vector<CollCase> everyCase(int n) {
  std::vector<CollCase> cases;
  uint64_t seed = 301;
  for (size_t count : {size_t{1}, size_t{7}, size_t{1023}, size_t{65536 + 3}, size_t{(1 << 19) + 5}})
    for (ncclDataType_t t : kAllTypes)
      for (bool inPlace : {false, true})
        for (size_t misalign : {size_t{0}, size_t{1}}) {
          const bool big = count > 4096;
          if (misalign && (big || inPlace)) continue;
          const size_t es = mccl::datatypeSize(t);
          std::vector<CollCase> one;
          for (ncclRedOp_t op : kBuiltinOps) {
            if (big && op != ncclSum && op != ncclAvg) continue;
            one.push_back(CollCase{CollKind::AllReduce, t, op, false, false, count, 0, inPlace, seed++, misalign * es});
            one.push_back(
                CollCase{CollKind::ReduceScatter, t, op, false, false, count / n + 1, 0, inPlace, seed++, misalign * es});
          }
          if (!misalign) one.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, false, count, 0, inPlace, seed++});
          one.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count / n + 1, 0, inPlace, seed++, misalign * es});
          for (int again = 0; again < 2; ++again)
            for (CollCase c : one) {
              c.seed += static_cast<uint64_t>(again) * 100000;
              cases.push_back(c);
            }
        }
  return cases;
}

}  // namespace

TEST(GpuPlainDirect, EveryTypeOpAndForm) {
  SKIP_WITHOUT_GPUS(1);
  for (const char* mode : {"2", "3"}) {
    SCOPED_TRACE(std::string("MCCL_PLAIN_DIRECT=") + mode);
    ScopedEnv env({{"MCCL_PLAIN_DIRECT", mode}});
    Clique cl(8);
    const int n = cl.n;
    if (n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
    const std::vector<CollCase> cases = everyCase(n);
    std::vector<std::string> errs(static_cast<size_t>(n));
    ThreadBarrier meet(n);
    std::string dump;
    runThreads(n, [&](int r) {
      cudaSetDevice(cl.dev(r));
      GpuMemory mem(cl.dev(r));
      for (const CollCase& c : cases) {
        std::string e = runCollCase(cl.comms[r], r, n, c, &mem);
        if (!e.empty() && errs[r].size() < 4000) errs[r] += e;
      }
      // The path each of the three takes, from the schedule dump (256 KiB: its staged parts
      // fit the LL slots of even 4 channels, NCCL_MAX_NCHANNELS as the GPU tests run 3 ranks).
      const size_t count = size_t{1} << 16;
      float* buf = static_cast<float*>(mem.alloc(count * (n + 1) * sizeof(float)));
      scheduleDumpOf(r, meet, [&] {
        ncclComm_t comm = cl.comms[r];
        if (ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, mem.stream()) != ncclSuccess ||
            ncclAllReduce(buf, buf + count, count, ncclFloat, ncclSum, comm, mem.stream()) != ncclSuccess ||
            ncclReduceScatter(buf, buf + count * n, count / n, ncclFloat, ncclMax, comm, mem.stream()) != ncclSuccess ||
            ncclAllGather(buf, buf + count, count / n, ncclFloat, comm, mem.stream()) != ncclSuccess)
          errs[r] += std::string("dumped calls: ") + ncclGetLastError(comm);
        mem.synchronize();
      }, &dump);
      mem.release(buf);
    });
    for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
    for (const char* path : {"AllReduce: direct on plain buffers (two-shot)", "AllReduce: direct on plain buffers (one-shot)",
                             "ReduceScatter: direct on plain buffers", "AllGather: direct on plain buffers"})
      EXPECT_NE(dump.find(path), std::string::npos) << path << " not in:\n" << dump;
  }
}

// The path's steps on the LL connections: its works take kPlainSteps steps of each, beside
// LL Broadcasts and Reduces on the same connections, the lean and general LL kernels, Simple
// and point-to-point, one call after the other on one stream, so every step count, credit
// and flag must agree at both ends (counts from a line a rank to several staged steps a
// channel).
TEST(GpuPlainDirect, AlternatesWithEveryKernel) {
  SKIP_WITHOUT_GPUS(1);
  for (const char* mode : {"2", "3"}) {
    SCOPED_TRACE(std::string("MCCL_PLAIN_DIRECT=") + mode);
    ScopedEnv env({{"MCCL_PLAIN_DIRECT", mode}});
    Clique cl(8);
    if (cl.n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
    alternateKernels(cl, {1, 7, 1023, 20000, 300001}, 200);
  }
}

// The path in a CUDA graph: an in-place AllReduce (two-shot), an out-of-place one (one-shot
// on two ranks), a ReduceScatter and an AllGather captured once and replayed 200 times with
// new inputs, an eager call of each between some replays; at a size the tuner gives the
// path (3.5 MiB) and staged (MCCL_PLAIN_DIRECT=3).
TEST(GpuPlainDirect, GraphReplay) {
  SKIP_WITHOUT_GPUS(1);
  for (const char* mode : {"1", "3"}) {
    SCOPED_TRACE(std::string("MCCL_PLAIN_DIRECT=") + mode);
    ScopedEnv env({{"MCCL_PLAIN_DIRECT", mode}});
    Clique cl(8);
    const int n = cl.n;
    if (n < 2) GTEST_SKIP() << "needs 2 ranks (MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 on one GPU)";
    // 3.5 MiB of floats: every call in the tuner's band (AllGather from 1 MiB, the in-place
    // AllReduce's two-shot parts within the LL slots of 32 channels) on 2 and 3 ranks.
    const size_t count = size_t{7} << 17;
    const size_t blk = count / static_cast<size_t>(n), gathered = blk * static_cast<size_t>(n);
    std::vector<std::string> errs(static_cast<size_t>(n));
    ThreadBarrier meet(n);
    std::string dump;
    runThreads(n, [&](int r) {
      cudaSetDevice(cl.dev(r));
      ncclComm_t comm = cl.comms[r];
      cudaStream_t s;
      // a: AllReduce in place, then a -> b; c -> e: ReduceScatter; b's block r -> d: AllGather.
      float *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr, *e = nullptr;
      if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
          cudaMalloc(&a, count * sizeof(float)) != cudaSuccess || cudaMalloc(&b, count * sizeof(float)) != cudaSuccess ||
          cudaMalloc(&c, count * sizeof(float)) != cudaSuccess || cudaMalloc(&d, gathered * sizeof(float)) != cudaSuccess ||
          cudaMalloc(&e, blk * sizeof(float)) != cudaSuccess)
        errs[r] = "allocation failed";
      auto calls = [&]() {
        ncclResult_t rc = ncclAllReduce(a, a, count, ncclFloat, ncclSum, comm, s);
        if (rc == ncclSuccess) rc = ncclAllReduce(a, b, count, ncclFloat, ncclSum, comm, s);
        if (rc == ncclSuccess) rc = ncclReduceScatter(c, e, blk, ncclFloat, ncclSum, comm, s);
        if (rc == ncclSuccess) rc = ncclAllGather(b + static_cast<size_t>(r) * blk, d, blk, ncclFloat, comm, s);
        return rc;
      };
      cudaGraph_t g = nullptr;
      cudaGraphExec_t ge = nullptr;
      bool made = false;
      scheduleDumpOf(r, meet, [&] {
        if (!errs[r].empty()) return;
        cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
        const ncclResult_t rc = calls();
        const cudaError_t ce = cudaStreamEndCapture(s, &g);
        made = rc == ncclSuccess && ce == cudaSuccess && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess;
        if (!made) errs[r] += std::string("capture failed: ") + ncclGetLastError(comm) + "\n";
      }, &dump);
      std::vector<float> ha(count), hc(count), gotD(gathered), gotE(blk);
      // Small integers: every sum is exact in float.
      auto value = [](int rep, int p, size_t i) {
        return static_cast<float>((rep * 3 + p * 5 + static_cast<int>(i % 13)) % 17);
      };
      for (int rep = 0; rep < 200; ++rep) {
        if (made && errs[r].size() < 4000) {
          for (size_t i = 0; i < count; ++i) {
            ha[i] = value(rep, r, i);
            hc[i] = value(rep + 1, r, i);
          }
          cudaMemcpyAsync(a, ha.data(), count * sizeof(float), cudaMemcpyHostToDevice, s);
          cudaMemcpyAsync(c, hc.data(), count * sizeof(float), cudaMemcpyHostToDevice, s);
          const bool eager = rep % 7 == 3;
          if (eager && calls() != ncclSuccess) errs[r] += std::string("eager: ") + ncclGetLastError(comm) + "\n";
          if (!eager) cudaGraphLaunch(ge, s);
          cudaMemcpyAsync(gotD.data(), d, gathered * sizeof(float), cudaMemcpyDeviceToHost, s);
          cudaMemcpyAsync(gotE.data(), e, blk * sizeof(float), cudaMemcpyDeviceToHost, s);
          if (cudaStreamSynchronize(s) != cudaSuccess) errs[r] += "replay " + std::to_string(rep) + " failed\n";
          auto sum = [&](int of, size_t i) {
            float t = 0;
            for (int q = 0; q < n; ++q) t += value(of, q, i);
            return t;
          };
          // d: b's first blocks, b = n times a's sum; e: the sum of block r of every c.
          for (size_t j = 0; j < gathered && errs[r].size() < 4000; j += 7)
            if (gotD[j] != sum(rep, j) * static_cast<float>(n)) {
              errs[r] += "replay " + std::to_string(rep) + " AllGather element " + std::to_string(j) + ": " +
                         std::to_string(gotD[j]) + " != " + std::to_string(sum(rep, j) * static_cast<float>(n)) + "\n";
              break;
            }
          for (size_t i = 0; i < blk && errs[r].size() < 4000; i += 5)
            if (gotE[i] != sum(rep + 1, static_cast<size_t>(r) * blk + i)) {
              errs[r] += "replay " + std::to_string(rep) + " ReduceScatter element " + std::to_string(i) + ": " +
                         std::to_string(gotE[i]) + "\n";
              break;
            }
        }
        meet.wait();  // every rank has read its results before any writes new inputs
      }
      if (made) cudaGraphExecDestroy(ge);
      if (g) cudaGraphDestroy(g);
      cudaStreamSynchronize(s);
      meet.wait();
      for (float* p : {a, b, c, d, e}) cudaFree(p);
      cudaStreamDestroy(s);
    });
    for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
    // A cap on the channels can leave these sizes to the FIFOs (their staged parts would not
    // fit the LL slots of so few): the path is checked where none is set.
    // Beyond two ranks the out-of-place AllReduce is two-shot too at this size
    // (MCCL_WIN_ONESHOT_MAX_BYTES).
    if (getenv("NCCL_MAX_NCHANNELS") != nullptr) continue;
    for (const char* path : {"AllReduce: direct on plain buffers (two-shot)", "AllReduce: direct on plain buffers (one-shot)",
                             "ReduceScatter: direct on plain buffers", "AllGather: direct on plain buffers"})
      if (n == 2 || std::string(path).find("one-shot") == std::string::npos)
        EXPECT_NE(dump.find(path), std::string::npos) << path << " not in:\n" << dump;
  }
}
