// GPU communicators across processes (one GPU per MPI rank, CUDA IPC between them):
// collectives against the host reference, point-to-point, and graph capture. Skipped
// where the ranks have no GPU each.
#include <gtest/gtest.h>
#include <mpi.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/comm.h"
#include "core/window.h"
#include "gpu_util.h"
#include "ipc_transport/ce_sync.h"
#include "ipc_transport/p2p_engine.h"
#include "kernels/launch/gpu_datapath_impl.h"
#include "ipc_transport/user_buffers.h"
#include "scoped_env.h"
#include "mccl_mpi.h"
#include "mpi_util.h"
#include "test_util.h"

using namespace mccl_test;

namespace {
// Every kernel of the process (mccl's and this file's) is loaded when the CUDA context is
// made, before MemoryComesBackAfterDestroy reads its baseline, so that its readings are the
// communicators' memory and not kernel code: mccl loads all of its kernels at the first
// communicator on a device (preloadKernels in gpu_datapath.cc), about 86 MiB on an H200
// that no destroy gives back, as NCCL's stay loaded too. Set before main, and so before
// MPI_Init and the first CUDA call, which read it.
[[maybe_unused]] const bool kEagerModuleLoading = [] { return setenv("CUDA_MODULE_LOADING", "EAGER", 1) == 0; }();

// Every rank must see a GPU of its own, else every rank skips.
bool gpusForAll() {
  int have = gpuCount() > 0 ? 1 : 0, all = 0;
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all != 0;
}

// A communicator of MPI_COMM_WORLD on this rank's GPU, and that GPU.
ncclResult_t commOnOwnGpu(ncclComm_t* comm, int* dev) {
  ncclResult_t rc = mcclCommInitFromMpi(comm, MPI_COMM_WORLD, MCCL_DEVICE_AUTO, nullptr);
  return rc == ncclSuccess ? ncclCommCuDevice(*comm, dev) : rc;
}
}  // namespace

// The GPU memory a communicator takes comes back at destroy, and creating and destroying
// communicators does not grow it. The first test of this file on purpose: no mccl kernel
// has run in this process yet, so the per-thread stack the driver reserves for the
// largest kernel launched (for every thread slot of the GPU, for the life of the context)
// shows in the readings.
TEST(GpuMpi, MemoryComesBackAfterDestroy) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  const int r = worldRank();
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int localRank = 0, localSize = 1;
  MPI_Comm_rank(local, &localRank);
  MPI_Comm_size(local, &localSize);
  MPI_Comm_free(&local);
  // The readings are the whole GPU's: with processes sharing one (MCCL_SHARED_GPU=2 on a
  // machine with fewer GPUs than ranks) they include the other processes' memory.
  int shared = localSize > gpuCount() ? 1 : 0, anyShared = 0;
  MPI_Allreduce(&shared, &anyShared, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anyShared) GTEST_SKIP() << "processes share a GPU: its memory readings include theirs";
  const int dev = localRank % gpuCount();
  CUDA_OK(cudaSetDevice(dev));
  auto used = []() {
    size_t f = 0, t = 0;
    cudaMemGetInfo(&f, &t);
    return static_cast<int64_t>(t - f);
  };
  const size_t count = 16u << 20;  // 64 MiB of floats: the Simple protocol on every channel it plans
  float *in, *out;
  CUDA_OK(cudaMalloc(&in, count * sizeof(float)));
  CUDA_OK(cudaMalloc(&out, count * sizeof(float)));
  CUDA_OK(cudaMemset(in, 0, count * sizeof(float)));
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_OK(cudaDeviceSynchronize());
  const int64_t before = used();
  auto useOnce = [&](ncclComm_t comm, size_t big) {
    NCCL_OK(ncclAllReduce(in, out, 2, ncclFloat, ncclSum, comm, s));
    NCCL_OK(ncclAllReduce(in, out, big, ncclFloat, ncclSum, comm, s));
    NCCL_OK(ncclAllReduce(in, out, big / 4 + 1, ncclInt8, ncclMax, comm, s));
    NCCL_OK(ncclBroadcast(in, out, big, ncclFloat, 0, comm, s));
    CUDA_OK(cudaStreamSynchronize(s));
  };
  ncclComm_t comm;
  NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, dev, nullptr));
  useOnce(comm, count);
  const int64_t inUse = used() - before;
  mcclMemoryInfo_t mi;
  NCCL_OK(mcclCommMemoryInfo(comm, &mi));
  EXPECT_GT(mi.controlBytes, 0u);
  // Peers over CUDA IPC receive into FIFOs on the GPU; over the network path
  // (NCCL_P2P_DISABLE=1) into pinned host staging, beside the 64-byte flag block.
  const char* p2pOff = std::getenv("NCCL_P2P_DISABLE");
  if (worldSize() > 1 && p2pOff && std::atoi(p2pOff) == 1) EXPECT_GT(mi.hostMappedBytes, 4096u);
  else if (worldSize() > 1) EXPECT_GT(mi.fifoBytes, 0u);
  // The budget the build checks too (MCCL_KERNEL_STACK_BUDGET): above the default stack limit
  // of 1 KiB the driver reserves more local memory for every thread slot of the GPU.
  EXPECT_LE(mi.kernelStackBytes, 1024u) << "a kernel's per-thread stack makes the driver reserve it for every thread";
  NCCL_OK(ncclCommDestroy(comm));
  CUDA_OK(cudaDeviceSynchronize());
  // A FIFO a peer has mapped (CUDA IPC) is released when the peer closes it, in its own
  // destroy: read once every rank has destroyed.
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t afterDestroy = used() - before;
  // A few communicators first: the kernels of the smaller sizes load on first use (CUDA
  // lazy loading keeps their code in device memory), which is not growth per communicator.
  auto cycle = [&](int times, int64_t* inUseAfter) {
    for (int i = 0; i < times; ++i) {
      NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, dev, nullptr));
      useOnce(comm, 1 << 18);
      NCCL_OK(ncclCommDestroy(comm));
    }
    CUDA_OK(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    *inUseAfter = used() - before;
  };
  int64_t warm = 0, after50 = 0, after100 = 0;
  cycle(3, &warm);
  cycle(50, &after50);
  cycle(50, &after100);
  const double mib = 1048576.0;
  if (r == 0)
    std::printf("[memory] rank 0, MiB above the level before init: in use %.1f (mccl's account: FIFOs %.1f, control %.2f, "
                "scratch %.1f, tables %.3f, host %.2f, peers mapped %.1f; kernel stack %zu B), after destroy %.1f, after "
                "3 more communicators %.1f, after 50 more %.1f, after 100 more %.1f\n",
                inUse / mib, mi.fifoBytes / mib, mi.controlBytes / mib, mi.scratchBytes / mib, mi.tableBytes / mib,
                mi.hostMappedBytes / mib, mi.peerMappedBytes / mib, mi.kernelStackBytes, afterDestroy / mib,
                warm / mib, after50 / mib, after100 / mib);
  EXPECT_LE(afterDestroy, int64_t{64} << 20) << "destroy must give back what the communicator took";
  // The CUDA allocator may settle on a few more pages while sizes of FIFOs come and go
  // (seen: 8 MiB once over the first 50); what must not happen is growth that goes on.
  EXPECT_LE(after100, int64_t{64} << 20) << "communicators made and destroyed left device memory behind";
  EXPECT_LE(after100 - after50, int64_t{2} << 20) << "every communicator made and destroyed leaves device memory behind";
  cudaStreamDestroy(s);
  cudaFree(in);
  cudaFree(out);
}

TEST(GpuMpi, CollectivesFromMpiComm) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r = worldRank(), n = worldSize();
  ncclComm_t comm;
  NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_AUTO, nullptr));
  int dev, isHost;
  NCCL_OK(ncclCommCuDevice(comm, &dev));
  NCCL_OK(mcclCommIsHost(comm, &isHost));
  ASSERT_EQ(isHost, 0);
  GpuMemory mem(dev);
  std::vector<CollCase> cases;
  uint64_t seed = 11;
  // MCCL_TEST_QUICK=1 (time-boxed GPU runs): sizes up to 1M+3 only.
  const bool quick = std::getenv("MCCL_TEST_QUICK") != nullptr;
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1023}, size_t{(1 << 20) + 3}, size_t{64} << 20})
    for (ncclDataType_t t : kAllTypes) {
      if (quick && count > (2u << 20)) continue;
      bool huge = count > (4u << 20);
      if (huge && t != ncclFloat32 && t != ncclBfloat16) continue;
      for (bool inPlace : {false, true}) {
        for (ncclRedOp_t op : kBuiltinOps) {
          if (count > 4096 && op != ncclSum && op != ncclMin) continue;
          cases.push_back(CollCase{CollKind::AllReduce, t, op, false, false, count, 0, inPlace, seed++});
          cases.push_back(CollCase{CollKind::Reduce, t, op, false, false, count, n - 1, inPlace, seed++});
          cases.push_back(CollCase{CollKind::ReduceScatter, t, op, false, false, count / n, 0, inPlace, seed++});
        }
        cases.push_back(CollCase{CollKind::AllReduce, t, ncclSum, true, true, count, 0, inPlace, seed++});
        for (int root = 0; root < n; ++root)
          cases.push_back(CollCase{CollKind::Broadcast, t, ncclSum, false, false, count, root, inPlace, seed++});
        cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count / n, 0, inPlace, seed++});
      }
    }
  std::string errs;
  for (const CollCase& c : cases) {
    std::string e = runCollCase(comm, r, n, c, &mem);
    if (!e.empty() && errs.size() < 4000) errs += e;
  }
  EXPECT_TRUE(errs.empty()) << errs;
  for (const char* p : {"ring", "alltoall", "scatter", "gather", "neighbor"})
    errs += runP2pPattern(comm, r, n, p, 100003, ncclFloat64, 0, 5, &mem);
  EXPECT_TRUE(errs.empty()) << errs;
  NCCL_OK(ncclCommDestroy(comm));
}

// Collectives on symmetric windows across processes: the peers' windows are CUDA IPC
// mappings, read and written in place by the direct path (every type, operator, in-place
// form, root and odd size), with no FIFO connection made.
TEST(GpuMpi, SymmetricWindowCollectives) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  ScopedEnv everySize({{"MCCL_WIN_DIRECT", "2"}});  // the direct path at every size, not only where it is faster
  int r = worldRank(), n = worldSize();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  ncclComm_t comm;
  NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_AUTO, nullptr));
  int dev;
  NCCL_OK(ncclCommCuDevice(comm, &dev));
  std::string errs;
  {
    WindowMemory mem(comm, dev, size_t{64} << 20);
    ASSERT_TRUE(mem.error.empty()) << mem.error;
    std::vector<CollCase> cases;
    uint64_t seed = 101;
    for (size_t count : {size_t{1}, size_t{7}, size_t{1023}, size_t{65536 + 3}, size_t{(1 << 20) + 5}})
      for (ncclDataType_t t : kAllTypes)
        for (bool inPlace : {false, true}) {
          for (ncclRedOp_t op : kBuiltinOps) {
            if (count > 4096 && op != ncclSum && op != ncclAvg) continue;
            cases.push_back(CollCase{CollKind::AllReduce, t, op, false, false, count, 0, inPlace, seed++});
            cases.push_back(CollCase{CollKind::Reduce, t, op, false, false, count, n - 1, inPlace, seed++});
            cases.push_back(CollCase{CollKind::ReduceScatter, t, op, false, false, count / n + 1, 0, inPlace, seed++});
          }
          for (int root = 0; root < n; ++root)
            cases.push_back(CollCase{CollKind::Broadcast, t, ncclSum, false, false, count, root, inPlace, seed++});
          cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count / n + 1, 0, inPlace, seed++});
        }
    for (const CollCase& c : cases) {
      std::string e = runCollCase(comm, r, n, c, &mem);
      if (!e.empty() && errs.size() < 4000) errs += e;
    }
    mcclMemoryInfo_t info;
    NCCL_OK(mcclCommMemoryInfo(comm, &info));
    EXPECT_EQ(info.fifoBytes, 0u) << "collectives on symmetric windows made FIFO connections";
    // AlltoAll: on the copy engines under NCCL_CTA_POLICY=2 or from MCCL_WIN_CE_MIN_BYTES a
    // block (scripts/gpu-sweep.sh windows), on the FIFOs otherwise; Gather too, under the
    // policy only; Scatter always on the FIFOs. In place and out of place, every root.
    size_t ti = 0;
    for (size_t count : {size_t{1}, size_t{7}, size_t{1023}, size_t{4099}, size_t{65536 + 3}, size_t{(1 << 18) + 5}})
      for (bool inPlace : {false, true}) {
        std::vector<CollCase> blocks = {
            {CollKind::AlltoAll, kAllTypes[ti++ % 12], ncclSum, false, false, count, 0, inPlace, seed++}};
        for (int root = 0; root < n; ++root) {
          blocks.push_back({CollKind::Gather, kAllTypes[ti++ % 12], ncclSum, false, false, count, root, inPlace, seed++});
          blocks.push_back({CollKind::Scatter, kAllTypes[ti++ % 12], ncclSum, false, false, count, root, inPlace, seed++});
        }
        for (const CollCase& c : blocks) {
          std::string e = runCollCase(comm, r, n, c, &mem);
          if (!e.empty() && errs.size() < 4000) errs += e;
        }
      }
    MPI_Barrier(MPI_COMM_WORLD);  // every rank's kernels are done before any window goes
  }
  EXPECT_TRUE(errs.empty()) << errs;
  NCCL_OK(ncclCommDestroy(comm));
}

// The copy engines' barriers (collectives on symmetric windows under NCCL_CTA_POLICY_ZERO):
// stream memory operations on words in host memory, two per launch and no kernel, with
// every result right (AllGather, AlltoAll, Broadcast from 2 MiB, Gather from every root, in
// and out of place); under MCCL_CE_SYNC=0 the barrier kernel, with the same results.
TEST(GpuMpi, CopyEngineBarriersAsStreamMemoryOperations) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  const int r = worldRank(), n = worldSize();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  for (const char* mode : {"1", "0"}) {
    ScopedEnv env({{"NCCL_CTA_POLICY", "2"}, {"MCCL_CE_SYNC", mode}});
    ncclComm_t comm;
    NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_AUTO, nullptr));
    int dev;
    NCCL_OK(ncclCommCuDevice(comm, &dev));
    std::string errs;
    {
      WindowMemory mem(comm, dev, size_t{64} << 20);
      ASSERT_TRUE(mem.error.empty()) << mem.error;
      mccl::CeSync* ce = comm->sym->ceSync();
      if (mode[0] == '1') ASSERT_NE(ce, nullptr) << "MCCL_CE_SYNC=1 made no memory-operation barriers";
      else ASSERT_EQ(ce, nullptr) << "MCCL_CE_SYNC=0 made memory-operation barriers";
      const uint64_t before = ce ? ce->barriers() : 0;
      std::vector<CollCase> cases;
      uint64_t seed = 7001;
      size_t ti = 0;
      for (bool inPlace : {false, true}) {
        for (size_t count : {size_t{4099}, size_t{(1 << 16) + 3}}) {
          cases.push_back({CollKind::AllGather, kAllTypes[ti++ % 12], ncclSum, false, false, count, 0, inPlace, seed++});
          cases.push_back({CollKind::AlltoAll, kAllTypes[ti++ % 12], ncclSum, false, false, count, 0, inPlace, seed++});
          for (int root = 0; root < n; ++root)
            cases.push_back({CollKind::Gather, kAllTypes[ti++ % 12], ncclSum, false, false, count, root, inPlace, seed++});
        }
        cases.push_back({CollKind::Broadcast, ncclFloat32, ncclSum, false, false, (size_t{1} << 20) + 5, n - 1, inPlace,
                         seed++});
      }
      for (const CollCase& c : cases) {
        std::string e = runCollCase(comm, r, n, c, &mem);
        if (!e.empty() && errs.size() < 4000) errs += e;
      }
      if (ce) {
        // Two barriers a launch, every case one launch on the copy engines (2 MiB and up
        // for the Broadcast; blocks above 4 KiB for the others).
        EXPECT_EQ(ce->barriers() - before, 2 * cases.size()) << "not every case went to the copy engines";
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
    EXPECT_TRUE(errs.empty()) << "MCCL_CE_SYNC=" << mode << ": " << errs;
    NCCL_OK(ncclCommDestroy(comm));
  }
}

// What stream s was given waits for peers that never come: still running 300 ms later;
// ncclCommAbort(comm) then lets the stream go within 10 s.
static void expectHeldUntilAbort(ncclComm_t comm, cudaStream_t s, const std::string& what) {
  usleep(300 * 1000);
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady) << what << ": ended without its peers";
  NCCL_OK(ncclCommAbort(comm));
  cudaError_t q = cudaErrorNotReady;
  for (int i = 0; i < 1000 && q == cudaErrorNotReady; ++i) {
    usleep(10 * 1000);
    q = cudaStreamQuery(s);
  }
  EXPECT_EQ(q, cudaSuccess) << what << ": the stream still waits 10 s after ncclCommAbort (" << cudaGetErrorString(q)
                            << ")";
}

// A copy-engine AllGather whose peers never come: its entry barrier holds the stream (the
// copies must not write into windows still in use), and ncclCommAbort lets the stream go in
// bounded time, with memory-operation barriers (which no abort flag reaches: abort writes
// their words) as with the barrier kernel.
TEST(GpuMpi, AbortReleasesCopyEngineBarriers) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  const int r = worldRank(), n = worldSize();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  for (const char* mode : {"1", "0"}) {
    ScopedEnv env({{"NCCL_CTA_POLICY", "2"}, {"MCCL_CE_SYNC", mode}});
    ncclComm_t comm;
    NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_AUTO, nullptr));
    int dev;
    NCCL_OK(ncclCommCuDevice(comm, &dev));
    cudaSetDevice(dev);
    const size_t count = size_t{1} << 16, bytes = count * sizeof(float);
    void* base = nullptr;
    NCCL_OK(ncclMemAlloc(&base, bytes * static_cast<size_t>(n + 1)));
    ncclWindow_t win = nullptr;
    NCCL_OK(ncclCommWindowRegister(comm, base, bytes * static_cast<size_t>(n + 1), &win, NCCL_WIN_COLL_SYMMETRIC));
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    if (r == 0) {
      float* in = static_cast<float*>(base);
      NCCL_OK(ncclAllGather(in, in + count, count, ncclFloat32, comm, s));
      expectHeldUntilAbort(comm, s, std::string("MCCL_CE_SYNC=") + mode + ", an AllGather whose peers never call it");
    }
    // Rank 0's copies, let go, may still write into the others' windows: those stay until
    // rank 0's stream is through.
    MPI_Barrier(MPI_COMM_WORLD);
    if (r != 0) NCCL_OK(ncclCommAbort(comm));
    cudaStreamDestroy(s);
    ncclMemFree(base);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// The copy engines' waits end by themselves after MCCL_TIMEOUT where a peer never comes,
// as a kernel's do: the host watches their words (ipc_transport/mem_ops.h MemOpWatched),
// lets every wait go and fails the communicator. MCCL_TIMEOUT=2, rank 0 alone calls: a
// windowed AllGather under NCCL_CTA_POLICY_ZERO (memory-operation barriers; under
// MCCL_CE_SYNC=0 the barrier kernel, whose own clock ends it), then a user's Send on the copy
// engines (MCCL_P2P_CE_MIN_BYTES=1) whose Recv never comes, after two that came. Each time
// the stream is still held 300 ms in, is through within 20 s with no abort and not before the
// timeout, and the communicator reports ncclRemoteError naming MCCL_TIMEOUT and a peer (at
// ncclCommGetAsyncError and at its next call). Before the watch the memory operations held
// the stream until ncclCommAbort.
TEST(GpuMpi, CopyEngineWaitsEndAfterTheTimeout) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  const int r = worldRank(), n = worldSize();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  for (const char* mode : {"1", "0", "p2p"}) {
    SCOPED_TRACE(std::string("case ") + mode);
    const bool p2p = mode[0] == 'p';
    ScopedEnv env({{"MCCL_TIMEOUT", "2"},
                   {"NCCL_CTA_POLICY", p2p ? "0" : "2"},
                   {"MCCL_CE_SYNC", p2p ? "1" : mode},
                   {"MCCL_P2P_CE_MIN_BYTES", p2p ? "1" : "0"}});
    ncclComm_t comm;
    int dev;
    NCCL_OK(commOnOwnGpu(&comm, &dev));
    cudaSetDevice(dev);
    auto* gpu = dynamic_cast<mccl::GpuDataPath*>(comm->dataPath.get());
    ASSERT_NE(gpu, nullptr);
    const size_t count = size_t{1} << 16, bytes = count * sizeof(float);
    void* base = nullptr;
    NCCL_OK(ncclMemAlloc(&base, bytes * static_cast<size_t>(n + 1)));
    ncclWindow_t win = nullptr;
    if (!p2p)
      NCCL_OK(ncclCommWindowRegister(comm, base, bytes * static_cast<size_t>(n + 1), &win, NCCL_WIN_COLL_SYMMETRIC));
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    float* buf = static_cast<float*>(base);
    if (p2p && r < 2) {  // two Sends that meet their Recvs: pages ready, buffers known
      for (int i = 0; i < 2; ++i) {
        if (r == 0) NCCL_OK(ncclSend(buf, count, ncclFloat32, 1, comm, s));
        else NCCL_OK(ncclRecv(buf, count, ncclFloat32, 0, comm, s));
        ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
      mccl::CeSync* ce = p2p ? nullptr : comm->sym->ceSync();
      const uint64_t barriers = ce ? ce->barriers() : 0, taken = gpu->peerEngines().opsTaken();
      const auto start = std::chrono::steady_clock::now();
      if (p2p) NCCL_OK(ncclSend(buf, count, ncclFloat32, 1, comm, s));
      else NCCL_OK(ncclAllGather(buf, buf + count, count, ncclFloat32, comm, s));
      if (p2p) EXPECT_EQ(gpu->peerEngines().opsTaken(), taken + 1) << "the Send did not go to the copy engines";
      if (ce) EXPECT_GT(ce->barriers(), barriers) << "the AllGather took no memory-operation barrier";
      usleep(300 * 1000);
      EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady) << "ended without its peer";
      cudaError_t q = cudaErrorNotReady;
      for (int i = 0; i < 2000 && q == cudaErrorNotReady; ++i) {
        usleep(10 * 1000);
        q = cudaStreamQuery(s);
      }
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_EQ(q, cudaSuccess) << "still held " << waited << " s in, past MCCL_TIMEOUT=2 ("
                                << cudaGetErrorString(q) << ")";
      EXPECT_GE(waited, 1.9) << "let go before MCCL_TIMEOUT";
      ncclResult_t async = ncclSuccess;
      EXPECT_EQ(ncclCommGetAsyncError(comm, &async), ncclSuccess);
      EXPECT_EQ(async, ncclRemoteError);
      const std::string why = ncclGetLastError(comm);
      EXPECT_NE(why.find("MCCL_TIMEOUT"), std::string::npos) << why;
      EXPECT_NE(why.find("for rank "), std::string::npos) << why;  // the peer it waited for: 1, or 2 of 3
      EXPECT_EQ(why.find("for rank 0 "), std::string::npos) << why;
      EXPECT_EQ(ncclSend(buf, count, ncclFloat32, 1, comm, s), ncclRemoteError);
    }
    // The others stay in the communicator until rank 0 is through (a rank that aborts is
    // lost to its peers, which would let rank 0's waits go before the timeout), and keep
    // their windows until rank 0's copies, let go, can no longer write into them.
    MPI_Barrier(MPI_COMM_WORLD);
    NCCL_OK(ncclCommAbort(comm));
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    MPI_Barrier(MPI_COMM_WORLD);
    cudaStreamDestroy(s);
    ncclMemFree(base);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// Plain cudaMalloc'ed buffers a case releases are kept and handed out again for the next
// request of the same size, as a caching allocator does (PyTorch's): the user-buffer path
// imports a plain output the second time a call uses it. The destructor frees them all.
// ipc: from cudaMalloc whatever MCCL_SHARED_GPU says (the stream-ordered pool's blocks cannot
// be shared through CUDA IPC; ranks that are processes sharing a GPU each allocate in their
// own context, before their case's calls).
class ReusedMemory : public GpuMemory {
 public:
  explicit ReusedMemory(int dev, bool ipc = false) : GpuMemory(dev), dev_(dev), ipc_(ipc) {}
  ~ReusedMemory() override { dropAll(); }
  // Frees every buffer kept: the next requests allocate anew (the allocator may hand back
  // the same addresses, as other allocations).
  void dropAll() {
    for (auto& kv : free_)
      for (void* p : kv.second) {
        if (ipc_) cudaFree(p);
        else GpuMemory::release(p);
      }
    free_.clear();
  }
  void* alloc(size_t bytes) override {
    std::vector<void*>& kept = free_[bytes];
    void* p = nullptr;
    if (kept.empty() && ipc_) {
      cudaSetDevice(dev_);
      if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) p = nullptr;
    } else if (kept.empty()) {
      p = GpuMemory::alloc(bytes);
    } else {
      p = kept.back();
      kept.pop_back();
    }
    if (p) sizes_[p] = bytes;
    return p;
  }
  void release(void* p) override {
    auto it = sizes_.find(p);
    if (it == sizes_.end()) return;
    free_[it->second].push_back(p);
    sizes_.erase(it);
  }

 private:
  int dev_;
  bool ipc_;
  std::map<size_t, std::vector<void*>> free_;
  std::map<void*, size_t> sizes_;
};

// Why a test of two ranks or more, each on a GPU of its own, cannot run here (nullptr: it
// can); a user-buffer test also needs allocations of its own (ranks sharing a GPU allocate
// from the stream-ordered pool, whose blocks the path never maps).
static const char* gpuPairSkip() {
  if (!gpusForAll()) return "needs a GPU per rank";
  if (worldSize() < 2) return "needs 2 ranks";
  return nullptr;
}
static const char* userBufferTestSkip() {
  if (const char* why = gpuPairSkip()) return why;
  if (std::getenv("MCCL_SHARED_GPU")) return "ranks sharing a GPU allocate from the stream-ordered pool";
  return nullptr;
}

// A user's Send/Recv on the copy engines (MCCL_P2P_CE_MIN_BYTES=1: every size): the hosts
// meet in shared memory, the first to come offers its buffer (a plain cudaMalloc'ed one is
// offered from its second use), the second issues the copy. Every pattern three times over
// reused buffers (the first round on the FIFOs, the next on the copy engines), every value
// checked; then rank 0 sends in one group and receives in the next while rank 1 does both
// in one (the copies run beside the kernels, never behind them); then a Send whose Recv
// never comes holds the stream until ncclCommAbort lets it go.
TEST(GpuMpi, SendRecvOnTheCopyEngines) {
  if (const char* why = gpuPairSkip()) GTEST_SKIP() << why;
  const int r = worldRank(), n = worldSize();
  ScopedEnv env({{"MCCL_P2P_CE_MIN_BYTES", "1"}});
  ncclComm_t comm;
  int dev;
  NCCL_OK(commOnOwnGpu(&comm, &dev));
  cudaSetDevice(dev);
  auto* gpu = dynamic_cast<mccl::GpuDataPath*>(comm->dataPath.get());
  ASSERT_NE(gpu, nullptr);
  mccl::PeerEngines& pe = gpu->peerEngines();
  std::string errs;
  {
    ReusedMemory mem(dev, true);
    uint64_t seed = 9001;
    size_t ti = 0;
    for (const char* pattern : {"ring", "pairs", "neighbor", "alltoall"})
      for (size_t count : {size_t{1}, size_t{1023}, size_t{(1 << 18) + 3}})
        for (int round = 0; round < 3; ++round) {
          std::string e = runP2pPattern(comm, r, n, pattern, count, kAllTypes[ti % 12], 0, seed, &mem);
          if (!e.empty() && errs.size() < 4000) errs += std::string(pattern) + ": " + e;
          if (round == 2) ++ti, ++seed;
        }
  }
  unsigned long long mine[2] = {pe.opsTaken(), pe.copiesIssued()}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_TRUE(errs.empty()) << errs;
  EXPECT_GT(all[1], 0u) << "no Send/Recv went to the copy engines";
  EXPECT_EQ(all[0], 2 * all[1]) << "every copy is one Send and one Recv, and one end issues it";

  // Rank 0: Send to 1, then in another group Recv from 1; rank 1: both in one group.
  const size_t count = (size_t{1} << 20) + 7, bytes = count * sizeof(int32_t);
  void *sbuf = nullptr, *rbuf = nullptr;
  ASSERT_EQ(cudaMalloc(&sbuf, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&rbuf, bytes), cudaSuccess);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  std::vector<int32_t> h(count), got(count);
  for (int round = 0; round < 3 && r < 2; ++round) {
    for (size_t i = 0; i < count; ++i) h[i] = static_cast<int32_t>(i * 7 + static_cast<size_t>(r) * 1000003 + round);
    // On s: a cudaMemset on the legacy stream does not order with a non-blocking stream.
    ASSERT_EQ(cudaMemcpyAsync(sbuf, h.data(), bytes, cudaMemcpyHostToDevice, s), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(rbuf, 0xff, bytes, s), cudaSuccess);
    const int peer = 1 - r;
    if (r == 0) {
      NCCL_OK(ncclSend(sbuf, count, ncclInt32, peer, comm, s));
      NCCL_OK(ncclRecv(rbuf, count, ncclInt32, peer, comm, s));
    } else {
      NCCL_OK(ncclGroupStart());
      NCCL_OK(ncclSend(sbuf, count, ncclInt32, peer, comm, s));
      NCCL_OK(ncclRecv(rbuf, count, ncclInt32, peer, comm, s));
      NCCL_OK(ncclGroupEnd());
    }
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(got.data(), rbuf, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i)
      bad += got[i] != static_cast<int32_t>(i * 7 + static_cast<size_t>(peer) * 1000003 + round);
    EXPECT_EQ(bad, 0u) << "rank " << r << " round " << round << ": groups split differently";
  }
  MPI_Barrier(MPI_COMM_WORLD);

  // A Send whose Recv never comes: rank 0 comes first and offers (rank 1's page is ready
  // from the rounds above), its stream waits for rank 1 until the abort.
  if (r == 0) {
    NCCL_OK(ncclSend(sbuf, count, ncclInt32, 1, comm, s));
    expectHeldUntilAbort(comm, s, "a Send whose Recv never comes");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (r != 0) NCCL_OK(ncclCommAbort(comm));
  cudaStreamDestroy(s);
  cudaFree(sbuf);
  cudaFree(rbuf);
  MPI_Barrier(MPI_COMM_WORLD);
}



// The collectives that only move data, on plain cudaMalloc'ed buffers, on the copy engines
// (MCCL_PLAIN_CE_MIN_BYTES=1: every size): AllGather and Broadcast cut into their Sends and
// Recvs by the planner, AlltoAll, Gather and Scatter; each pair's hosts meet as a user's
// Send/Recv's do, the first to come offers its buffer (a plain one from its second use).
// Every case three times over reused buffers (the first round on the FIFOs, the next on the
// copy engines), in place and out, every root, every value checked. Then one group holds an
// AllGather and a user's Send/Recv with the same peer, in opposite orders on even and odd
// ranks: the two kinds meet in lanes of their own, so neither is paired with the other's.
// Then under NCCL_CTA_POLICY=2 (the knob unset): AllGather above 4 KiB a rank moves on the
// copy engines, at 4 KiB on the kernel.
TEST(GpuMpi, PlainCollectivesOnTheCopyEngines) {
  if (const char* why = gpuPairSkip()) GTEST_SKIP() << why;
  const int r = worldRank(), n = worldSize();
  std::string errs;
  unsigned long long mine[2] = {0, 0}, all[2] = {0, 0};
  {
    ScopedEnv env({{"MCCL_PLAIN_CE_MIN_BYTES", "1"}, {"MCCL_P2P_CE_MIN_BYTES", "1"}});
    ncclComm_t comm;
    int dev;
    NCCL_OK(commOnOwnGpu(&comm, &dev));
    auto* gpu = dynamic_cast<mccl::GpuDataPath*>(comm->dataPath.get());
    ASSERT_NE(gpu, nullptr);
    mccl::PeerEngines& pe = gpu->peerEngines();
    ReusedMemory mem(dev, true);
    uint64_t seed = 12001;
    size_t ti = 0;
    for (size_t count : {size_t{1}, size_t{1023}, size_t{(1 << 18) + 3}})
      for (bool inPlace : {false, true}) {
        std::vector<CollCase> cases;
        const ncclDataType_t t = kAllTypes[ti++ % 12];
        cases.push_back({CollKind::AllGather, t, ncclSum, false, false, count, 0, inPlace, seed++});
        cases.push_back({CollKind::AlltoAll, t, ncclSum, false, false, count, 0, inPlace, seed++});
        for (int root = 0; root < n; ++root) {
          cases.push_back({CollKind::Broadcast, t, ncclSum, false, false, count, root, inPlace, seed++});
          cases.push_back({CollKind::Gather, t, ncclSum, false, false, count, root, inPlace, seed++});
          cases.push_back({CollKind::Scatter, t, ncclSum, false, false, count, root, inPlace, seed++});
        }
        for (const CollCase& c : cases)
          for (int round = 0; round < 3; ++round) {
            std::string e = runCollCase(comm, r, n, c, &mem);
            if (!e.empty() && errs.size() < 4000) errs += "round " + std::to_string(round) + ": " + e;
          }
      }
    mine[0] = pe.opsTaken();
    mine[1] = pe.copiesIssued();
    MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_TRUE(errs.empty()) << errs;
    EXPECT_GT(all[1], 0u) << "no collective's transfer went to the copy engines";
    EXPECT_EQ(all[0], 2 * all[1]) << "every copy is one Send and one Recv, and one end issues it";

    // An AllGather and a ring of Sends and Recvs in one group, in opposite orders on even and
    // odd ranks; five rounds over the same buffers.
    errs.clear();
    const size_t count = (size_t{1} << 16) + 5, bytes = count * sizeof(int32_t);
    const int next = (r + 1) % n, prev = (r - 1 + n) % n;
    void *sbuf = nullptr, *rbuf = nullptr, *gin = nullptr, *gout = nullptr;
    ASSERT_EQ(cudaMalloc(&sbuf, bytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&rbuf, bytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&gin, bytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&gout, bytes * static_cast<size_t>(n)), cudaSuccess);
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    auto value = [](int rank, size_t i, int round, int what) {
      return static_cast<int32_t>(i * 13 + static_cast<size_t>(rank) * 1000003 + static_cast<size_t>(round) * 7 + what);
    };
    std::vector<int32_t> h(count), got(count * static_cast<size_t>(n));
    const uint64_t takenBefore = pe.opsTaken();
    std::vector<int32_t> h2(count);
    for (int round = 0; round < 5; ++round) {
      // Every buffer set on s before the group (a cudaMemset on the legacy stream does not
      // order with a non-blocking stream: it could land after a peer's copy).
      for (size_t i = 0; i < count; ++i) h[i] = value(r, i, round, 0), h2[i] = value(r, i, round, 1);
      ASSERT_EQ(cudaMemcpyAsync(sbuf, h.data(), bytes, cudaMemcpyHostToDevice, s), cudaSuccess);
      ASSERT_EQ(cudaMemcpyAsync(gin, h2.data(), bytes, cudaMemcpyHostToDevice, s), cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(rbuf, 0xff, bytes, s), cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(gout, 0xff, bytes * static_cast<size_t>(n), s), cudaSuccess);
      auto gather = [&] { NCCL_OK(ncclAllGather(gin, gout, count, ncclInt32, comm, s)); };
      auto ring = [&] {
        NCCL_OK(ncclSend(sbuf, count, ncclInt32, next, comm, s));
        NCCL_OK(ncclRecv(rbuf, count, ncclInt32, prev, comm, s));
      };
      NCCL_OK(ncclGroupStart());
      if (r % 2 == 0) gather(), ring();
      else ring(), gather();
      NCCL_OK(ncclGroupEnd());
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.data(), rbuf, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      size_t bad = 0;
      for (size_t i = 0; i < count; ++i) bad += got[i] != value(prev, i, round, 0);
      ASSERT_EQ(cudaMemcpy(got.data(), gout, bytes * static_cast<size_t>(n), cudaMemcpyDeviceToHost), cudaSuccess);
      for (int q = 0; q < n; ++q)
        for (size_t i = 0; i < count; ++i) bad += got[static_cast<size_t>(q) * count + i] != value(q, i, round, 1);
      EXPECT_EQ(bad, 0u) << "rank " << r << " round " << round << ": an AllGather and a Send/Recv ring in one group";
    }
    EXPECT_GT(pe.opsTaken(), takenBefore) << "the mixed group never went to the copy engines";
    MPI_Barrier(MPI_COMM_WORLD);
    cudaStreamDestroy(s);
    cudaFree(sbuf);
    cudaFree(rbuf);
    cudaFree(gin);
    cudaFree(gout);
    NCCL_OK(ncclCommDestroy(comm));
  }
  {
    ScopedEnv env({{"NCCL_CTA_POLICY", "2"}});
    ncclComm_t comm;
    int dev;
    NCCL_OK(commOnOwnGpu(&comm, &dev));
    auto* gpu = dynamic_cast<mccl::GpuDataPath*>(comm->dataPath.get());
    ASSERT_NE(gpu, nullptr);
    mccl::PeerEngines& pe = gpu->peerEngines();
    ReusedMemory mem(dev, true);
    errs.clear();
    uint64_t seed = 13001;
    uint64_t taken[2] = {0, 0};
    for (int big = 0; big < 2; ++big) {
      const uint64_t before = pe.opsTaken();
      const size_t count = big ? 1024 + 1 : 1024;  // floats: 4 KiB a rank, and 4 bytes more
      for (int round = 0; round < 3; ++round) {
        std::string e = runCollCase(comm, r, n, {CollKind::AllGather, ncclFloat32, ncclSum, false, false, count, 0, false, seed++}, &mem);
        if (!e.empty() && errs.size() < 4000) errs += e;
      }
      taken[big] = pe.opsTaken() - before;
    }
    EXPECT_TRUE(errs.empty()) << "NCCL_CTA_POLICY=2: " << errs;
    unsigned long long t[2] = {taken[0], taken[1]}, sum[2] = {0, 0};
    MPI_Allreduce(t, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(sum[0], 0u) << "NCCL_CTA_POLICY=2: an AllGather of 4 KiB a rank went to the copy engines";
    EXPECT_GT(sum[1], 0u) << "NCCL_CTA_POLICY=2: an AllGather above 4 KiB a rank never went to the copy engines";
    MPI_Barrier(MPI_COMM_WORLD);
    NCCL_OK(ncclCommDestroy(comm));
  }
}

// The user-buffer path (ipc_transport/user_buffers.h): Simple AllGather, AllReduce's final
// data (every operator), Broadcast (every root), AlltoAll and the point-to-point patterns write into
// the receiver's output, mapped in the
// sender's process by its import service; every type, in place and out of place, odd
// sizes (from 1 byte: MCCL_USER_BUFFERS_MIN_BYTES=1, everything on Simple), checked on the
// host. Three kinds of outputs:
// * registered (MCCL_USER_BUFFERS=1): imported at their first use; deregistration closes the
//   peer's mappings;
// * plain ones kept and used again (2, the default): imported at their second use; freeing
//   them has the peers close their mappings (the owner's sweep, every 100 ms);
// * plain ones allocated and freed per case (2): a new allocation each time (where the
//   address comes back, with a new BUFFER_ID), never imported, all through the FIFO.
TEST(GpuMpi, UserBuffersRegisteredAndPlainOutputs) {
  if (const char* why = userBufferTestSkip()) GTEST_SKIP() << why;
  const int r = worldRank(), n = worldSize();
  ncclComm_t comm;
  int dev;
  NCCL_OK(commOnOwnGpu(&comm, &dev));
  const bool quick = std::getenv("MCCL_TEST_QUICK") != nullptr;
  std::string errs;
  enum Outputs { kRegistered, kReused, kFresh };
  static const char* const kName[] = {"registered", "plain reused", "plain fresh"};
  for (Outputs kind : {kRegistered, kReused, kFresh}) {
    ScopedEnv env({{"MCCL_USER_BUFFERS", kind == kRegistered ? "1" : "2"},
                   {"MCCL_USER_BUFFERS_MIN_BYTES", "1"},
                   {"NCCL_PROTO", "Simple"}});
    const size_t liveBefore = mccl::importedUserBuffers(), madeBefore = mccl::userBufferImportsMade();
    std::unique_ptr<GpuMemory> mem(kind == kRegistered ? new RegisteredMemory(comm, dev)
                                   : kind == kReused  ? new ReusedMemory(dev)
                                                      : new GpuMemory(dev));
    std::vector<CollCase> cases;
    uint64_t seed = 701;
    for (size_t count : {size_t{1}, size_t{7}, size_t{4099}, size_t{(1 << 20) + 5}, size_t{(3 << 20) + 1}})
      for (ncclDataType_t t : kAllTypes) {
        if (quick && count > 4099 && t != ncclFloat32 && t != ncclInt8) continue;
        for (bool inPlace : {false, true}) {
          for (int root = 0; root < n; ++root)
            cases.push_back(CollCase{CollKind::Broadcast, t, ncclSum, false, false, count, root, inPlace, seed++});
          for (int again = 0; again < (kind == kReused ? 2 : 1); ++again) {
            cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count, 0, inPlace, seed++});
            // AlltoAll's Sends into the peers' blocks (in place: sent from a staged copy).
            cases.push_back(CollCase{CollKind::AlltoAll, t, ncclSum, false, false, count, 0, inPlace, seed++});
            // A ring AllReduce's final data (its reduce steps keep the FIFO).
            for (ncclRedOp_t op : kBuiltinOps)
              if (count <= 4099 || op == ncclSum)
                cases.push_back(CollCase{CollKind::AllReduce, t, op, false, false, count * n, 0, inPlace, seed++});
          }
        }
      }
    for (const CollCase& c : cases) {
      std::string e = runCollCase(comm, r, n, c, mem.get());
      if (!e.empty() && errs.size() < 4000) errs += std::string(kName[kind]) + ": " + e;
    }
    for (const char* p : {"ring", "alltoall", "scatter", "gather", "neighbor"})
      for (size_t count : {size_t{3}, size_t{(1 << 19) + 7}}) errs += runP2pPattern(comm, r, n, p, count, ncclFloat64, 0, 9, mem.get());
    mem.reset();              // deregistered and freed
    MPI_Barrier(MPI_COMM_WORLD);  // every rank's calls, deregistrations and frees are done
    if (kind == kFresh) {
      EXPECT_EQ(mccl::userBufferImportsMade(), madeBefore) << "plain outputs used once were imported";
      continue;
    }
    // The peers' outputs were mapped here (every rank sends to another rank's output).
    EXPECT_GT(mccl::userBufferImportsMade(), madeBefore) << kName[kind] << ": no output was imported";
    // Deregistering or freeing them closes the mappings (the sweep looks every 100 ms, the
    // closer waits for the device: a few seconds at most).
    for (int i = 0; i < 1000 && mccl::importedUserBuffers() != liveBefore; ++i) usleep(10000);
    EXPECT_EQ(mccl::importedUserBuffers(), liveBefore) << kName[kind] << ": outputs gone are still mapped here";
  }
  EXPECT_TRUE(errs.empty()) << errs;
  NCCL_OK(ncclCommDestroy(comm));
}

// The direct path on plain buffers (kernels/work/direct.h) between processes: a buffer's first
// use is staged through the LL connections' slots (its peers do not map it yet), its second
// in place (imported by the peers' import services, which the count of imports shows);
// MCCL_PLAIN_DIRECT=3 stages every part. AllReduce (every operator; in place: two-shot),
// ReduceScatter and AllGather of every type, odd sizes, checked on the host.
TEST(GpuMpi, PlainBuffersDirect) {
  if (const char* why = gpuPairSkip()) GTEST_SKIP() << why;
  const int r = worldRank(), n = worldSize();
  ncclComm_t comm;
  int dev;
  NCCL_OK(commOnOwnGpu(&comm, &dev));
  std::string errs;
  for (const char* mode : {"2", "3"}) {
    ScopedEnv env({{"MCCL_PLAIN_DIRECT", mode}});
    const size_t madeBefore = mccl::userBufferImportsMade();
    {
      ReusedMemory mem(dev, true);
      uint64_t seed = 901;
      for (size_t count : {size_t{1}, size_t{7}, size_t{4099}, size_t{(1 << 18) + 5}})
        for (ncclDataType_t t : kAllTypes)
          for (bool inPlace : {false, true}) {
            std::vector<CollCase> cases;
            for (ncclRedOp_t op : kBuiltinOps) {
              if (count > 4099 && op != ncclSum) continue;
              cases.push_back(CollCase{CollKind::AllReduce, t, op, false, false, count, 0, inPlace, seed++});
              cases.push_back(CollCase{CollKind::ReduceScatter, t, op, false, false, count / n + 1, 0, inPlace, seed++});
            }
            cases.push_back(CollCase{CollKind::AllGather, t, ncclSum, false, false, count / n + 1, 0, inPlace, seed++});
            for (int again = 0; again < 2; ++again)
              for (const CollCase& c : cases) {
                std::string e = runCollCase(comm, r, n, c, &mem);
                if (!e.empty() && errs.size() < 4000) errs += std::string("MCCL_PLAIN_DIRECT=") + mode + ": " + e;
              }
          }
      MPI_Barrier(MPI_COMM_WORLD);  // every rank's calls are done before any buffer goes
    }
    if (std::string(mode) == "2")
      EXPECT_GT(mccl::userBufferImportsMade(), madeBefore) << "no buffer was mapped by a peer";
    else
      EXPECT_EQ(mccl::userBufferImportsMade(), madeBefore) << "MCCL_PLAIN_DIRECT=3 offered a buffer";
  }
  EXPECT_TRUE(errs.empty()) << errs;
  NCCL_OK(ncclCommDestroy(comm));
}

// A lone call on the buffers, stream and sizes of one of the last few reuses its plan
// (GpuDataPath::runCached); a plain direct work's offers are made again each time: the
// buffers' first call is staged, the next in place (the peers map them by then), and once
// they are freed and allocated again (the same addresses, other allocations) the peers must
// not read or write the old mappings. Four rounds of AllReduce out of place (one-shot) and
// in place (two-shot), ReduceScatter and AllGather, each three times a round on one
// stream, every value checked on the host.
TEST(GpuMpi, PlainDirectReusedPlansFollowReallocatedBuffers) {
  if (const char* why = gpuPairSkip()) GTEST_SKIP() << why;
  const int r = worldRank(), n = worldSize();
  ncclComm_t comm;
  int dev;
  NCCL_OK(commOnOwnGpu(&comm, &dev));
  ScopedEnv env({{"MCCL_PLAIN_DIRECT", "2"}, {"MCCL_PLAN_CACHE", "1"}});
  const size_t madeBefore = mccl::userBufferImportsMade();
  std::string errs;
  {
    ReusedMemory mem(dev, true);
    const size_t count = (1 << 18) + 5;
    for (int round = 0; round < 4; ++round) {
      for (int call = 0; call < 3; ++call) {
        const uint64_t seed = 5000 + 100 * static_cast<uint64_t>(round) + 10 * static_cast<uint64_t>(call);
        const CollCase cases[] = {
            {CollKind::AllReduce, ncclFloat32, ncclSum, false, false, count, 0, false, seed},
            {CollKind::AllReduce, ncclFloat32, ncclSum, false, false, count, 0, true, seed + 1},
            {CollKind::ReduceScatter, ncclFloat32, ncclSum, false, false, count / n + 1, 0, false, seed + 2},
            {CollKind::AllGather, ncclFloat32, ncclSum, false, false, count / n + 1, 0, false, seed + 3},
        };
        for (const CollCase& c : cases) {
          std::string e = runCollCase(comm, r, n, c, &mem);
          if (!e.empty() && errs.size() < 4000)
            errs += "round " + std::to_string(round) + " call " + std::to_string(call) + ": " + e;
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);  // every rank's calls are done before any buffer goes
      mem.dropAll();
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  EXPECT_TRUE(errs.empty()) << errs;
  EXPECT_GT(mccl::userBufferImportsMade(), madeBefore) << "no buffer was mapped by a peer";
  NCCL_OK(ncclCommDestroy(comm));
}

// Send/Recv into the receiver's output by default (MCCL_USER_BUFFERS_MIN_BYTES 0): only
// where the group goes both ways with that peer. Each end knows only its own group, so a
// Send whose peer posts its Recv and its Send in two groups ("pairs-split") must find a
// null offer and go through the FIFO, and one-way patterns (gather, scatter; ring beyond
// two ranks) must never map a peer's output. Plain outputs used again (imported at their
// second use), every pattern twice, sizes on one step and on many (units on two ranks),
// every value checked on the host.
TEST(GpuMpi, UserBuffersSendRecvBothWaysOnly) {
  if (const char* why = userBufferTestSkip()) GTEST_SKIP() << why;
  const int r = worldRank(), n = worldSize();
  ncclComm_t comm;
  int dev;
  NCCL_OK(commOnOwnGpu(&comm, &dev));
  ScopedEnv env({{"MCCL_USER_BUFFERS", "2"}, {"MCCL_USER_BUFFERS_MIN_BYTES", "0"},
                 {"MCCL_USER_BUFFERS_SENDRECV_BYTES", "1"}, {"NCCL_PROTO", "Simple"}});
  std::string errs;
  const size_t kCounts[] = {3, (1 << 19) + 7};
  {
    ReusedMemory mem(dev);
    const size_t madeBefore = mccl::userBufferImportsMade();
    std::vector<std::string> oneWay = {"gather", "scatter"};
    if (n > 2) oneWay.push_back("ring");
    for (const std::string& p : oneWay)
      for (size_t count : kCounts)
        for (int again = 0; again < 2; ++again)
          errs += runP2pPattern(comm, r, n, p, count, ncclFloat64, n - 1, 31 + again, &mem);
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_EQ(mccl::userBufferImportsMade(), madeBefore) << "a one-way Send/Recv mapped a peer's output";
  }
  const size_t madeBefore = mccl::userBufferImportsMade();
  {
    ReusedMemory mem(dev);
    for (const char* p : {"pairs-split", "pairs", "neighbor", "ring", "alltoall"})
      for (size_t count : kCounts)
        for (int again = 0; again < 2; ++again)
          errs += runP2pPattern(comm, r, n, p, count, ncclFloat64, 0, 41 + again, &mem);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // Every rank with a partner receives from it both ways: its output was mapped there, and
  // its partner's here.
  if ((r ^ 1) < n) EXPECT_GT(mccl::userBufferImportsMade(), madeBefore) << "no output was mapped both ways";
  EXPECT_TRUE(errs.empty()) << errs;
  NCCL_OK(ncclCommDestroy(comm));
}

// Units by agreement (dev_work.h, kUnitsAgree): beyond two ranks a large Send/Recv takes
// units only where both ends run the Simple kernel, which each end learns at run time. Rank
// 0 swaps a large message with rank 1 in a group that also holds 18 small Sends and Recvs
// with rank 2 (more than the Simple kernel takes: the generic kernel, no units), while rank
// 1's group holds only the swap (the Simple kernel, which offers units); then a ring of
// large messages where every end runs the Simple kernel (units agreed). Small FIFO slots
// (NCCL_BUFFSIZE 256 KiB) make the messages many units a channel. Every value checked.
TEST(GpuMpi, SendRecvUnitsByAgreement) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r = worldRank(), n = worldSize();
  if (n < 3) GTEST_SKIP() << "needs 3 ranks (on two, both ends of a group agree from the host)";
  ScopedEnv env({{"NCCL_BUFFSIZE", "262144"}, {"NCCL_PROTO", "Simple"}, {"MCCL_USER_BUFFERS_SENDRECV_BYTES", "0"}});
  ncclComm_t comm;
  NCCL_OK(mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_AUTO, nullptr));
  const size_t big = (16u << 20) / sizeof(float) + 5, small = 1000;
  const int kSmallOps = 9;
  auto value = [](int from, int to, size_t i) { return static_cast<float>(from * 4096 + to * 512 + static_cast<int>(i % 509)); };
  // What this rank sends to (and receives from) whom, and how much, in each of the two groups.
  struct Msg {
    int peer;
    size_t count;
    bool send;
  };
  std::vector<std::vector<Msg>> groups(2);
  if (r == 0 || r == 1) {
    groups[0].push_back({1 - r, big, false});
    groups[0].push_back({1 - r, big, true});
  }
  if (r == 0 || r == 2)
    for (int k = 0; k < kSmallOps; ++k) {
      groups[0].push_back({2 - r, small, false});
      groups[0].push_back({2 - r, small, true});
    }
  groups[1].push_back({(r + n - 1) % n, big, false});
  groups[1].push_back({(r + 1) % n, big, true});
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::string errs;
  for (int round = 0; round < 2; ++round)
    for (size_t g = 0; g < groups.size(); ++g) {
      std::vector<void*> bufs;
      for (const Msg& m : groups[g]) {
        void* b = nullptr;
        CUDA_OK(cudaMalloc(&b, m.count * sizeof(float)));
        std::vector<float> h(m.count, -1.0f);
        if (m.send)
          for (size_t i = 0; i < m.count; ++i) h[i] = value(r, m.peer, i);
        CUDA_OK(uploadOn(s, b, h.data(), m.count * sizeof(float)));
        bufs.push_back(b);
      }
      NCCL_OK(ncclGroupStart());
      for (size_t k = 0; k < groups[g].size(); ++k) {
        const Msg& m = groups[g][k];
        if (m.send) NCCL_OK(ncclSend(bufs[k], m.count, ncclFloat32, m.peer, comm, s));
        else NCCL_OK(ncclRecv(bufs[k], m.count, ncclFloat32, m.peer, comm, s));
      }
      NCCL_OK(ncclGroupEnd());
      CUDA_OK(cudaStreamSynchronize(s));
      for (size_t k = 0; k < groups[g].size(); ++k) {
        const Msg& m = groups[g][k];
        if (!m.send) {
          std::vector<float> h(m.count);
          CUDA_OK(cudaMemcpy(h.data(), bufs[k], m.count * sizeof(float), cudaMemcpyDeviceToHost));
          for (size_t i = 0; i < m.count && errs.size() < 2000; ++i)
            if (h[i] != value(m.peer, r, i))
              errs += "group " + std::to_string(g) + " rank " + std::to_string(r) + " from " + std::to_string(m.peer) +
                      " element " + std::to_string(i) + ": " + std::to_string(h[i]) + "\n";
        }
        CUDA_OK(cudaFree(bufs[k]));
      }
    }
  EXPECT_TRUE(errs.empty()) << errs;
  CUDA_OK(cudaStreamDestroy(s));
  NCCL_OK(ncclCommDestroy(comm));
}

TEST(GpuMpi, UniqueIdPathAndGraph) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r = worldRank(), n = worldSize();
  ncclUniqueId id;
  if (r == 0) NCCL_OK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  CUDA_OK(cudaSetDevice(r % gpuCount()));
  ncclComm_t comm;
  NCCL_OK(ncclCommInitRank(&comm, n, id, r));
  const size_t count = 1 << 20;
  float *in, *out;
  CUDA_OK(cudaMalloc(&in, count * sizeof(float)));
  CUDA_OK(cudaMalloc(&out, count * sizeof(float)));
  std::vector<float> h(count, static_cast<float>(r + 1));
  CUDA_OK(cudaMemcpy(in, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());  // the non-blocking stream below does not wait for it
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  NCCL_OK(ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, s));
  NCCL_OK(ncclAllReduce(out, out, count, ncclFloat, ncclMax, comm, s));
  CUDA_OK(cudaStreamEndCapture(s, &g));
  CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < 100; ++i) CUDA_OK(cudaGraphLaunch(ge, s));
  CUDA_OK(cudaStreamSynchronize(s));
  CUDA_OK(cudaMemcpy(h.data(), out, count * sizeof(float), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < count; i += 1001) ASSERT_EQ(h[i], n * (n + 1) / 2.0f);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaFree(in);
  cudaFree(out);
  cudaStreamDestroy(s);
  NCCL_OK(ncclCommDestroy(comm));
}
