// The single-process GPU tests' communicators: a clique of ranks as threads of this
// process (ncclCommInitAll), the cases every rank runs, and calls that alternate the
// kernels of every protocol on one communicator (shared by test_gpu_single.cc and
// test_gpu_plain_direct.cc).
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <functional>
#include <vector>

#include "core/knobs.h"
#include "gpu_util.h"
#include "mccl.h"
#include "test_util.h"

namespace mccl_test {

// MCCL_TEST_RANKS=k (with MCCL_SHARED_GPU=1): k ranks over the visible GPUs, rank r on
// GPU r % count, so a machine with one or two GPUs runs 3- and 4-rank communicators.
inline int testRanks() {
  const char* v = getenv("MCCL_TEST_RANKS");
  return v ? atoi(v) : 0;
}

struct Clique {
  std::vector<ncclComm_t> comms;
  std::vector<int> devs;
  int n = 0;
  explicit Clique(int want) {
    n = testRanks() > 0 ? testRanks() : std::min(want, gpuCount());
    comms.assign(static_cast<size_t>(n), nullptr);
    for (int r = 0; r < n; ++r) devs.push_back(r % std::max(1, gpuCount()));
    EXPECT_EQ(ncclCommInitAll(comms.data(), n, devs.data()), ncclSuccess) << ncclGetLastError(nullptr);
  }
  int dev(int r) const { return devs[static_cast<size_t>(r)]; }
  ~Clique() {
    for (ncclComm_t c : comms)
      if (c) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess) << ncclGetLastError(c);
  }
};

// Each rank on a thread of its own (its device current), every case in order.
inline void runCases(Clique& cl, const std::vector<CollCase>& cases) {
  std::vector<std::string> errs(static_cast<size_t>(cl.n));
  runThreads(cl.n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    GpuMemory mem(cl.dev(r));
    for (const CollCase& c : cases) {
      std::string e = runCollCase(cl.comms[r], r, cl.n, c, &mem);
      if (!e.empty() && errs[r].size() < 4000) errs[r] += e;
    }
  });
  for (int r = 0; r < cl.n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ":\n" << errs[r];
}


// What rank 0 prints under MCCL_DUMP_SCHEDULE=1 while every rank runs call (the plans it
// makes), into *dump; every rank calls it.
inline void scheduleDumpOf(int r, ThreadBarrier& meet, const std::function<void()>& call, std::string* dump) {
  meet.wait();
  if (r == 0) {
    setenv("MCCL_DUMP_SCHEDULE", "1", 1);
    mccl::knobsReload();
    testing::internal::CaptureStdout();
  }
  meet.wait();
  call();
  meet.wait();
  if (r == 0) {
    *dump = testing::internal::GetCapturedStdout();
    unsetenv("MCCL_DUMP_SCHEDULE");
    mccl::knobsReload();
  }
  meet.wait();
}

// Calls whose launches take the kernels of one protocol and type (reductions with any
// operator, data movement: the lean LL kernel, llKernel<false, T>, llKernel<true, T>, the
// Simple kernels) and the generic kernel (a group of 9 AllReduce max, more works than those
// launches take; Simple's integer average) in turn,
// on one communicator and stream: 8 collectives (AllReduce sum, max and avg, AllGather,
// Broadcast, ReduceScatter, Reduce, a Send/Recv ring) cycling over 5 types and the counts,
// every root. Every result against a host reference in double precision.
inline void alternateKernels(Clique& cl, const std::vector<size_t>& counts, int calls) {
  const int n = cl.n;
  const ncclDataType_t types[] = {ncclInt8, ncclInt32, ncclFloat32, ncclFloat64, ncclUint64};
  const size_t most = *std::max_element(counts.begin(), counts.end()) * 8 * static_cast<size_t>(n);
  std::vector<std::string> errs(static_cast<size_t>(n));
  ThreadBarrier allocatedAll(n), doneAll(n);
  runThreads(n, [&](int r) {
    cudaSetDevice(cl.dev(r));
    ncclComm_t comm = cl.comms[r];
    cudaStream_t s = nullptr;
    uint8_t *in = nullptr, *out = nullptr, *h = nullptr;  // pinned: a pageable copy may wait for the whole device
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess || cudaMalloc(&in, most) != cudaSuccess ||
        cudaMalloc(&out, most) != cudaSuccess || cudaMallocHost(&h, most) != cudaSuccess)
      errs[r] = "allocation failed";
    allocatedAll.wait();
    auto value = [](int k, int rank, size_t i) { return static_cast<double>((k * 13 + rank * 5 + static_cast<int>(i % 11)) % 7); };
    auto put = [](uint8_t* p, ncclDataType_t t, size_t i, double v) {
      switch (t) {
        case ncclInt8: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
        case ncclInt32: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
        case ncclFloat32: reinterpret_cast<float*>(p)[i] = static_cast<float>(v); break;
        case ncclFloat64: reinterpret_cast<double*>(p)[i] = v; break;
        default: reinterpret_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); break;
      }
    };
    auto get = [](const uint8_t* p, ncclDataType_t t, size_t i) -> double {
      switch (t) {
        case ncclInt8: return reinterpret_cast<const int8_t*>(p)[i];
        case ncclInt32: return reinterpret_cast<const int32_t*>(p)[i];
        case ncclFloat32: return reinterpret_cast<const float*>(p)[i];
        case ncclFloat64: return reinterpret_cast<const double*>(p)[i];
        default: return static_cast<double>(reinterpret_cast<const uint64_t*>(p)[i]);
      }
    };
    const char* names[] = {"AllReduce sum", "AllReduce max x9", "AllGather",     "Broadcast",
                           "ReduceScatter", "Reduce",        "AllReduce avg", "Send/Recv"};
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    for (int k = 0; k < calls && errs[r].empty(); ++k) {
      const ncclDataType_t t = types[k % 5];
      const size_t count = counts[(k / 5) % counts.size()];
      const size_t esize = t == ncclInt8 ? 1 : t == ncclInt32 || t == ncclFloat32 ? 4 : 8;
      const bool floating = t == ncclFloat32 || t == ncclFloat64;
      const int what = k % 8, root = (k / 8) % n;
      const size_t inCount = what == 4 ? count * static_cast<size_t>(n) : count;
      const size_t outCount = what == 2 ? count * static_cast<size_t>(n) : count;
      for (size_t i = 0; i < inCount; ++i) put(h, t, i, value(k, r, i));
      ncclResult_t res = ncclSuccess;
      if (cudaMemcpyAsync(in, h, inCount * esize, cudaMemcpyHostToDevice, s) != cudaSuccess ||
          cudaMemsetAsync(out, 0x5a, outCount * esize, s) != cudaSuccess)
        res = ncclUnhandledCudaError;
      else if (what == 0 || what == 6)
        res = ncclAllReduce(in, out, count, t, what == 0 ? ncclSum : ncclAvg, comm, s);
      else if (what == 1 && (res = ncclGroupStart()) == ncclSuccess) {
        const size_t part = (count + 8) / 9;
        for (size_t p = 0; p < 9; ++p) {
          const size_t lo = std::min(count, p * part), hi = std::min(count, lo + part);
          if (res == ncclSuccess)
            res = ncclAllReduce(in + lo * esize, out + lo * esize, hi - lo, t, ncclMax, comm, s);
        }
        const ncclResult_t end = ncclGroupEnd();
        if (res == ncclSuccess) res = end;
      }
      else if (what == 2) res = ncclAllGather(in, out, count, t, comm, s);
      else if (what == 3) res = ncclBroadcast(in, out, count, t, root, comm, s);
      else if (what == 4) res = ncclReduceScatter(in, out, count, t, ncclSum, comm, s);
      else if (what == 5) res = ncclReduce(in, out, count, t, ncclSum, root, comm, s);
      else if ((res = ncclGroupStart()) == ncclSuccess) {
        ncclSend(in, count, t, next, comm, s);
        ncclRecv(out, count, t, prev, comm, s);
        res = ncclGroupEnd();
      }
      if (res != ncclSuccess || cudaMemcpyAsync(h, out, outCount * esize, cudaMemcpyDeviceToHost, s) != cudaSuccess ||
          cudaStreamSynchronize(s) != cudaSuccess) {
        errs[r] = std::string(names[what]) + " call " + std::to_string(k) + ": " + ncclGetLastError(comm);
        break;
      }
      if (what == 5 && r != root) continue;  // only the root's output is defined
      for (size_t i = 0; i < outCount; ++i) {
        double want = 0;
        switch (what) {
          case 1: for (int q = 0; q < n; ++q) want = std::max(want, value(k, q, i)); break;
          case 2: want = value(k, static_cast<int>(i / count), i % count); break;
          case 3: want = value(k, root, i); break;
          case 4: for (int q = 0; q < n; ++q) want += value(k, q, static_cast<size_t>(r) * count + i); break;
          case 7: want = value(k, prev, i); break;
          default: for (int q = 0; q < n; ++q) want += value(k, q, i); break;
        }
        if (what == 6) want = floating ? want / n : std::floor(want / n);
        const double got = get(h, t, i);
        if (what == 6 && floating ? std::fabs(got - want) > 1e-5 * std::max(1.0, want) : got != want) {
          errs[r] = std::string(names[what]) + " call " + std::to_string(k) + " type " + std::to_string(t) + " count " +
                    std::to_string(count) + " element " + std::to_string(i) + ": " + std::to_string(got) +
                    " != " + std::to_string(want);
          break;
        }
      }
    }
    cudaStreamSynchronize(s);
    doneAll.wait();
    cudaFreeHost(h);
    cudaFree(in);
    cudaFree(out);
    cudaStreamDestroy(s);
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errs[r].empty()) << "rank " << r << ": " << errs[r];
}

}  // namespace mccl_test
