// Memory windows and the device API on GPU communicators (MPI, one GPU per rank, all ranks
// on one node): user kernels load and store peers' windows through ncclGetLsaPointer /
// ncclGetPeerPointer between LSA barriers, checked against values computed on the host;
// registration and device communicators come and go with the memory ledger flat; bad
// arguments fail on every rank with nothing registered. Run: ctest -R gpu_devapi_np2, or
//   mpirun -np 2 build/tests/mccl_gpu_devapi_tests
// Skipped where a rank has no GPU or the ranks are not one LSA team.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "mccl.h"
#include "mccl_mpi.h"
#include "nccl.h"
#include "nccl_device.h"
#include "gpu_util.h"
#include "test_util.h"

namespace {

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int worldSize() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// A GPU communicator over MPI_COMM_WORLD whose ranks form one LSA team, or null (skip).
class DevApi : public testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    int have = n > 0 ? 1 : 0, all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) GTEST_SKIP() << "needs a GPU per rank";
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    int localRank = 0;
    MPI_Comm_rank(local, &localRank);
    MPI_Comm_free(&local);
    dev_ = localRank % n;
    ASSERT_EQ(cudaSetDevice(dev_), cudaSuccess);
    ASSERT_EQ(mcclCommInitFromMpi(&comm_, MPI_COMM_WORLD, dev_, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
    int lsa = ncclTeamLsa(comm_).nRanks, lsaAll = 0;
    MPI_Allreduce(&lsa, &lsaAll, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (lsaAll != worldSize()) GTEST_SKIP() << "needs a GPU per rank with all ranks one LSA team (one node, P2P)";
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
    if (comm_) EXPECT_EQ(ncclCommDestroy(comm_), ncclSuccess);
  }
  mcclMemoryInfo_t memory() {
    mcclMemoryInfo_t m;
    std::memset(&m, 0, sizeof m);
    EXPECT_EQ(mcclCommMemoryInfo(comm_, &m), ncclSuccess);
    return m;
  }
  int dev_ = 0;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

float valueOf(int rank, int iter, size_t j) { return static_cast<float>((rank + 1) * 1000 + iter * 7 + static_cast<int>(j % 97)); }

// NCCL's example 06_device_api/01_allreduce: each rank sums a slice of every peer's send
// window and stores the sum into every peer's receive window, between LSA barriers.
__global__ void lsaAllReduce(ncclWindow_t sendwin, size_t sendoffset, ncclWindow_t recvwin, size_t recvoffset,
                             size_t count, ncclDevComm devComm) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamLsa(devComm), devComm.lsaBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_relaxed);
  const int rank = devComm.lsaRank, nRanks = devComm.lsaSize;
  const size_t tid = threadIdx.x + (size_t)blockDim.x * (rank + (size_t)blockIdx.x * nRanks);
  const size_t nThreads = (size_t)blockDim.x * gridDim.x * nRanks;
  for (size_t o = tid; o < count; o += nThreads) {
    float v = 0;
    for (int p = 0; p < nRanks; p++) v += ((const float*)ncclGetLsaPointer(sendwin, sendoffset, p))[o];
    for (int p = 0; p < nRanks; p++) ((float*)ncclGetLsaPointer(recvwin, recvoffset, p))[o] = v;
  }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

// Each warp of each block: stores this rank's values into the next rank's window (by world
// rank, ncclGetPeerPointer) and its rank into the next rank's resource buffer, with warp
// barriers of a set made by ncclLsaBarrierCreateRequirement (one per warp) and split
// arrive/wait; then checks what the previous rank stored into its own window. errors[0]
// counts mismatches, errors[1] wrong pointers.
__global__ void ringShift(ncclWindow_t win, size_t offset, size_t count, int iter, ncclDevComm devComm,
                          ncclLsaBarrierHandle warpBars, ncclDevResourceHandle res, unsigned* errors) {
  const int warp = threadIdx.x / 32, nWarps = blockDim.x / 32;
  const int gw = blockIdx.x * nWarps + warp, nGw = gridDim.x * nWarps;
  ncclCoopWarp coop;
  ncclTeam world = ncclTeamWorld(devComm), lsa = ncclTeamLsa(devComm);
  const int next = (devComm.rank + 1) % devComm.nRanks, prev = (devComm.rank + devComm.nRanks - 1) % devComm.nRanks;
  ncclLsaBarrierSession<ncclCoopWarp> bar{coop, devComm, lsa, warpBars, (uint32_t)gw};
  bar.sync(coop, cuda::memory_order_acq_rel);  // nobody reads its window from the last round any more
  float* dst = (float*)ncclGetPeerPointer(win, offset, next);
  float* same = (float*)ncclGetPeerPointer(win, offset, world, next);
  float* byLsa = (float*)ncclGetLsaPointer(win, offset, ncclTeamRankToTeam(lsa, world, next));
  if (coop.thread_rank() == 0 && (dst != same || dst != byLsa || dst == nullptr)) atomicAdd(&errors[1], 1u);
  if (coop.thread_rank() == 0 && ncclGetLsaMultimemPointer(win, 0, devComm) != nullptr) atomicAdd(&errors[1], 1u);
  for (size_t j = (size_t)gw * 32 + coop.thread_rank(); j < count; j += (size_t)nGw * 32)
    dst[j] = (float)((devComm.rank + 1) * 1000 + iter * 7 + (int)(j % 97));
  int* slot = (int*)ncclGetResourceBufferLsaPointer(devComm, res, ncclTeamRankToTeam(lsa, world, next));
  if (coop.thread_rank() == 0) slot[gw] = devComm.rank * 100000 + iter * 100 + gw;
  bar.arrive(coop, cuda::memory_order_release);
  bar.wait(coop, cuda::memory_order_acquire);
  const float* mine = (const float*)ncclGetLocalPointer(win, offset);
  for (size_t j = (size_t)gw * 32 + coop.thread_rank(); j < count; j += (size_t)nGw * 32)
    if (mine[j] != (float)((prev + 1) * 1000 + iter * 7 + (int)(j % 97))) atomicAdd(&errors[0], 1u);
  const int* own = (const int*)ncclGetResourceBufferLocalPointer(devComm, res);
  if (coop.thread_rank() == 0 && own[gw] != prev * 100000 + iter * 100 + gw) atomicAdd(&errors[0], 1u);
}

// ncclSymPtr: every rank stores its values into the next rank's window through
// (base + j).peerPtr(next) between LSA barriers, then checks what the previous rank stored
// (errors[0]); every pointer form agrees with the window functions (errors[1]). And
// ncclCoopBcast in every group, from several roots, each member checking what it got
// (errors[2]). Blocks of 128 threads.
struct Pair {
  int rank;
  float half;
};
__global__ void symPtrAndBcast(ncclWindow_t win, size_t offset, size_t count, int iter, ncclDevComm devComm,
                               unsigned* errors) {
  ncclCoopCta cta;
  const int t = threadIdx.x;
  const int next = (devComm.rank + 1) % devComm.nRanks, prev = (devComm.rank + devComm.nRanks - 1) % devComm.nRanks;
  ncclTeam world = ncclTeamWorld(devComm), lsa = ncclTeamLsa(devComm);
  ncclSymPtr<float> base(win, offset);
  if (t == 0) {
    bool ok = base.localPtr() == (float*)ncclGetLocalPointer(win, offset) &&
              (base + 5).localPtr() == base.localPtr() + 5 && (base + 7 - 2).localPtr() == base.localPtr() + 5 &&
              base.peerPtr(next) == (float*)ncclGetPeerPointer(win, offset, next) &&
              base.peerPtr(world, next) == base.peerPtr(next) &&
              base.lsaPtr(ncclTeamRankToTeam(lsa, world, next)) == base.peerPtr(next) && base.peerPtr(next) != nullptr &&
              ncclSymPtr<char>(base + 3).localPtr() == (char*)base.localPtr() + 12 &&
              base.lsaPtr(devComm.lsaSize) == nullptr && base.multimemPtr(ncclMultimemHandle{}) == nullptr &&
              base.lsaMultimemPtr(devComm) == nullptr;
    if (!ok) atomicAdd(&errors[1], 1u);
  }
  {
    ncclLsaBarrierSession<ncclCoopCta> bar{cta, devComm, ncclTeamTagLsa(), blockIdx.x};
    bar.sync(cta, cuda::memory_order_acq_rel);  // nobody reads its window from the last round any more
    for (size_t j = (size_t)blockIdx.x * blockDim.x + t; j < count; j += (size_t)gridDim.x * blockDim.x)
      *(base + j).peerPtr(next) = (float)((devComm.rank + 1) * 1000 + iter * 7 + (int)(j % 97));
    bar.sync(cta, cuda::memory_order_acq_rel);
  }
  for (size_t j = (size_t)blockIdx.x * blockDim.x + t; j < count; j += (size_t)gridDim.x * blockDim.x)
    if (*(base + j).localPtr() != (float)((prev + 1) * 1000 + iter * 7 + (int)(j % 97))) atomicAdd(&errors[0], 1u);
  // ncclCoopBcast: the block from two roots (back to back, entrySync on), each warp from
  // lane 5, 8-lane tiles a Pair from their lane 3, the upper half of each byte's lanes of
  // warp 0, and warps 1-2 as a span from its member 33.
  for (int root : {0, 77}) {
    const long long got = ncclCoopBcast(cta, (long long)t * 3 + iter, root);
    if (got != (long long)root * 3 + iter) atomicAdd(&errors[2], 1u);
  }
  const int lane = t % 32, warp = t / 32;
  if (ncclCoopBcast(ncclCoopWarp(), lane * 10 + warp, 5) != 50 + warp) atomicAdd(&errors[2], 1u);
  const Pair pr = ncclCoopBcast(ncclCoopTile<8>(), Pair{t, 0.5f * t}, 3, false);
  const int tileRoot = (t & ~7) + 3;
  if (pr.rank != tileRoot || pr.half != 0.5f * tileRoot) atomicAdd(&errors[2], 1u);
  const uint32_t mask = 0xf0f0f0f0u;
  if (warp == 0 && ((mask >> lane) & 1u)) {
    /* member 2 of the mask is lane 6 */
    if (ncclCoopBcast(ncclCoopLanes(mask), (double)lane, 2) != 6.0) atomicAdd(&errors[2], 1u);
  }
  if (warp == 1 || warp == 2) {
    ncclCoopWarpSpan span(1, 2, 4);
    if (ncclCoopBcast(span, (short)(t + iter), 33) != (short)(32 + 33 + iter)) atomicAdd(&errors[2], 1u);
  }
}

// The LL all-to-all: in every epoch each rank sends every member (itself too) a float and a
// 24-byte Big (three lines a value), and broadcasts a 16-byte Two; each rank receives them
// with recv, recvUnrolled and recvReduce and checks them against what the sender must have
// sent in this epoch (errors[0]), the reduction in double (errors[1]). Slots: floats at
// [0, n), Bigs at [n, 2n), Twos at [2n, 3n); maxElts 3n, so a Big's lines are s, s + 3n,
// s + 6n. One session per block; `round` numbers the epochs across kernels.
struct Big {
  int from, to;
  long long round;
  float f, g;
};
struct Two {
  double d;
  int from, round;
};
__device__ __host__ float a2aValue(int from, int to, int block, int round) {
  return (float)(from * 1000 + to * 100 + block * 10) + 0.25f * (float)(round % 1024);
}
constexpr int kA2AMaxRanks = 8;

__global__ void llAllToAll(ncclDevComm devComm, ncclLLA2AHandle h, int firstRound, int epochs, unsigned* errors) {
  ncclCoopCta cta;
  ncclTeam team = ncclTeamLsa(devComm);
  const int n = team.nRanks, me = team.rank, t = threadIdx.x, b = blockIdx.x;
  ncclLLA2ASession<ncclCoopCta> a2a(cta, devComm, team, h, b, 3 * n);
  for (int e = 0; e < epochs; e++) {
    const int round = firstRound + e;
    if (t < n) a2a.send(t, me, a2aValue(me, t, b, round));
    if (t >= 32 && t < 32 + n) {
      const int to = t - 32;
      a2a.send(to, n + me, Big{me, to, 1000000007LL * round + b, a2aValue(me, to, b, round), -1.5f * round});
    }
    if (t == 64) a2a.bcast(2 * n + me, Two{0.5 * round + me, me, round});
    if (t < n) {
      if (a2a.recv<float>(t) != a2aValue(t, me, b, round)) atomicAdd(&errors[0], 1u);
    } else if (t >= 32 && t < 32 + n) {
      const int from = t - 32;
      const Big v = a2a.recv<Big>(n + from);
      if (v.from != from || v.to != me || v.round != 1000000007LL * round + b || v.f != a2aValue(from, me, b, round) ||
          v.g != -1.5f * round)
        atomicAdd(&errors[0], 1u);
    } else if (t == 64) {
      Two two[kA2AMaxRanks];
      a2a.recvUnrolled<1, kA2AMaxRanks>(2 * n, n, 1, two);
      for (int from = 0; from < n; from++)
        if (two[from].d != 0.5 * round + from || two[from].from != from || two[from].round != round)
          atomicAdd(&errors[0], 1u);
    } else if (t == 96) {
      // Unroll 2 over n floats: a full step and, for odd n, the tail.
      const double sum = a2a.recvReduce<2, float>(0, n, 1, [](float v) { return (double)v; },
                                                   [](double x, double y) { return x + y; });
      double want = 0;
      for (int from = 0; from < n; from++) want += a2aValue(from, me, b, round);
      if (sum != want) atomicAdd(&errors[1], 1u);
    } else if (t == 97) {
      // No values: nothing to wait for, the accumulator value-initialised.
      if (a2a.recvReduce<2, float>(0, 0, 1, [](float v) { return (double)v; }, [](double x, double y) { return x + y; }) != 0.0)
        atomicAdd(&errors[1], 1u);
    }
    a2a.endEpoch(cta);
  }
}

// The same with a session per warp (ncclCoopWarp; block index = the warp's index in the
// grid): lane p sends a float to member p and receives member p's.
__global__ void llAllToAllWarps(ncclDevComm devComm, ncclLLA2AHandle h, int firstRound, int epochs, unsigned* errors) {
  ncclCoopWarp warp;
  ncclTeam team = ncclTeamLsa(devComm);
  const int n = team.nRanks, me = team.rank, lane = threadIdx.x % 32;
  const int gw = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  ncclLLA2ASession<ncclCoopWarp> a2a(warp, devComm, team, h, gw, n);
  for (int e = 0; e < epochs; e++) {
    const int round = firstRound + e;
    if (lane < n) a2a.send(lane, me, a2aValue(me, lane, gw, round));
    if (lane < n && a2a.recv<float>(lane) != a2aValue(lane, me, gw, round)) atomicAdd(&errors[0], 1u);
    a2a.endEpoch(warp);
  }
}

// ncclFindWindow in each form: thread i of the grid looks up probes[i] alone
// (ncclCoopThread), warp i of the grid as a warp (ncclCoopWarp), block i as a block
// (ncclCoopCta); the first member writes what it found, and a member that found something
// else counts an error.
__global__ void findByThread(ncclDevComm devComm, const void* const* probes, int n, ncclWindow_t* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = ncclFindWindow(ncclCoopThread(), devComm, probes[i]);
}
__global__ void findByWarp(ncclDevComm devComm, const void* const* probes, int n, ncclWindow_t* out, unsigned* errors) {
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (i >= n) return;  // whole warps: blockDim.x is a multiple of 32
  const ncclWindow_t w = ncclFindWindow(ncclCoopWarp(), devComm, probes[i]);
  if (threadIdx.x % 32 == 0) out[i] = w;
  const unsigned long long mine = reinterpret_cast<unsigned long long>(w);
  if (__shfl_sync(0xffffffffu, mine, 0) != mine) atomicAdd(errors, 1u);
}
__global__ void findByCta(ncclDevComm devComm, const void* const* probes, ncclWindow_t* out, unsigned* errors) {
  __shared__ ncclWindow_t first;
  const ncclWindow_t w = ncclFindWindow(ncclCoopCta(), devComm, probes[blockIdx.x]);
  if (threadIdx.x == 0) first = w;
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = w;
  if (first != w) atomicAdd(errors, 1u);
}
// Thread i reads float at[i] of the next LSA member's buffer of the window that holds its
// own &local[i] (found, then reached with ncclGetLsaPointer).
__global__ void readPeerThroughFound(ncclDevComm devComm, char* const* local, const size_t* at, int n, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const ncclWindow_t w = ncclFindWindow(ncclCoopThread(), devComm, local[i] + at[i]);
  const float* p = w ? static_cast<const float*>(ncclGetLsaPointer(w, at[i], (devComm.lsaRank + 1) % devComm.lsaSize))
                     : nullptr;
  out[i] = p ? *p : -1.0f;
}

}  // namespace

TEST_F(DevApi, SymPtrAndCoopBcast) {
  const int nBlocks = 4, nThreads = 128;
  const size_t count = 70001, offset = 1024;
  const size_t bytes = offset + count * sizeof(float);
  float* buf = nullptr;
  NCCL_OK(ncclMemAlloc((void**)&buf, bytes));
  CUDA_OK(cudaMemset(buf, 0, bytes));
  CUDA_OK(cudaDeviceSynchronize());
  ncclWindow_t win = nullptr;
  NCCL_OK(ncclCommWindowRegister(comm_, buf, bytes, &win, NCCL_WIN_COLL_SYMMETRIC));
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = nBlocks;
  ncclDevComm devComm;
  NCCL_OK(ncclDevCommCreate(comm_, &reqs, &devComm));
  unsigned* errors = nullptr;
  CUDA_OK(cudaMalloc(&errors, 3 * sizeof(unsigned)));
  CUDA_OK(cudaMemset(errors, 0, 3 * sizeof(unsigned)));
  for (int iter = 0; iter < 3; iter++) symPtrAndBcast<<<nBlocks, nThreads, 0, stream_>>>(win, offset, count, iter, devComm, errors);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaStreamSynchronize(stream_));
  unsigned e[3];
  CUDA_OK(cudaMemcpy(e, errors, sizeof e, cudaMemcpyDeviceToHost));
  EXPECT_EQ(e[0], 0u) << "values the previous rank stored through ncclSymPtr were wrong";
  EXPECT_EQ(e[1], 0u) << "an ncclSymPtr pointer disagrees with the window functions";
  EXPECT_EQ(e[2], 0u) << "ncclCoopBcast gave a member the wrong value";
  MPI_Barrier(MPI_COMM_WORLD);
  cudaFree(errors);
  NCCL_OK(ncclDevCommDestroy(comm_, &devComm));
  NCCL_OK(ncclCommWindowDeregister(comm_, win));
  NCCL_OK(ncclMemFree(buf));
}

// ncclLLA2ASession over the LSA team: several kernels of several epochs (each block's epoch
// kept between kernels in its header line), then the epochs carried across the wrap of the
// 32-bit count (every rank sets its headers near it), where the halves must have been
// cleared: lines from the first kernels carry the epochs the new cycle starts with. Then
// sessions of warps on a second handle.
TEST_F(DevApi, LlAllToAllAcrossKernelsAndTheEpochWrap) {
  const int n = worldSize();
  if (n > kA2AMaxRanks) GTEST_SKIP() << "the test's kernel receives the broadcasts of at most 8 ranks";
  const int nBlocks = 3, nThreads = 128, epochs = 5;
  const int nSlots = ncclLLA2ACalcSlots(3 * n, sizeof(Big));
  ASSERT_EQ(nSlots, 9 * n);
  ncclLLA2AHandle h;
  ncclDevResourceRequirements req;
  NCCL_OK(ncclLLA2ACreateRequirement(nBlocks, nSlots, &h, &req));
  ncclLLA2AHandle wh;
  ncclDevResourceRequirements wreq;
  NCCL_OK(ncclLLA2ACreateRequirement(8, ncclLLA2ACalcSlots(n, sizeof(float)), &wh, &wreq));
  req.next = &wreq;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.resourceRequirementsList = &req;
  reqs.lsaBarrierCount = 1;
  ncclDevComm devComm;
  NCCL_OK(ncclDevCommCreate(comm_, &reqs, &devComm));
  unsigned* errors = nullptr;
  CUDA_OK(cudaMalloc(&errors, 2 * sizeof(unsigned)));
  CUDA_OK(cudaMemset(errors, 0, 2 * sizeof(unsigned)));
  char* buf = static_cast<char*>(devComm.resourceWindow_inlined.localPtr) + ncclGetResourceBufferOffset(h.bufHandle);
  const size_t blockBytes = (1 + 2 * static_cast<size_t>(nSlots)) * 16;
  auto headers = [&] {
    std::vector<uint32_t> x(nBlocks);
    for (int b = 0; b < nBlocks; b++)
      EXPECT_EQ(cudaMemcpy(&x[b], buf + b * blockBytes, 4, cudaMemcpyDeviceToHost), cudaSuccess);
    return x;
  };
  int round = 0;
  for (int k = 0; k < 3; k++, round += epochs) llAllToAll<<<nBlocks, nThreads, 0, stream_>>>(devComm, h, round, epochs, errors);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaStreamSynchronize(stream_));
  // Epochs start at 2 and the header keeps the next one minus 2.
  for (uint32_t x : headers()) EXPECT_EQ(x, static_cast<uint32_t>(3 * epochs));
  // Next epoch 2^32 - 3: the coming kernels run 2^32 - 3 .. 2^32 - 1, then 2, 3, ...
  MPI_Barrier(MPI_COMM_WORLD);
  for (int b = 0; b < nBlocks; b++) {
    const uint32_t x = 0xfffffffdu - 2;
    CUDA_OK(cudaMemcpy(buf + b * blockBytes, &x, 4, cudaMemcpyHostToDevice));
  }
  CUDA_OK(cudaDeviceSynchronize());
  MPI_Barrier(MPI_COMM_WORLD);
  for (int k = 0; k < 3; k++, round += epochs) llAllToAll<<<nBlocks, nThreads, 0, stream_>>>(devComm, h, round, epochs, errors);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaStreamSynchronize(stream_));
  // 15 epochs from 2^32 - 3: three before the wrap, then 2 .. 13; the next is 14.
  for (uint32_t x : headers()) EXPECT_EQ(x, 14u - 2);
  // Sessions of warps on a handle of their own: 2 blocks of 4 warps, 7 kernels of 9 epochs.
  llAllToAllWarps<<<2, 128, 0, stream_>>>(devComm, wh, 0, 0, errors);  // sessions that end no epoch
  for (int k = 0; k < 7; k++) llAllToAllWarps<<<2, 128, 0, stream_>>>(devComm, wh, 9 * k, 9, errors);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaStreamSynchronize(stream_));
  unsigned e[2];
  CUDA_OK(cudaMemcpy(e, errors, sizeof e, cudaMemcpyDeviceToHost));
  EXPECT_EQ(e[0], 0u) << "a received value was not what its sender sent in that epoch";
  EXPECT_EQ(e[1], 0u) << "recvReduce's sum was wrong";
  MPI_Barrier(MPI_COMM_WORLD);
  cudaFree(errors);
  NCCL_OK(ncclDevCommDestroy(comm_, &devComm));
}

TEST_F(DevApi, LsaAllReduceThroughWindows) {
  const int rank = worldRank(), n = worldSize();
  const size_t count = (size_t{1} << 20) + 5;  // odd: the loop's tail
  const size_t bytes = count * sizeof(float);
  float *send = nullptr, *recv = nullptr;
  NCCL_OK(ncclMemAlloc((void**)&send, bytes));
  NCCL_OK(ncclMemAlloc((void**)&recv, bytes));
  ncclWindow_t sendWin = nullptr, recvWin = nullptr;
  NCCL_OK(ncclCommWindowRegister(comm_, send, bytes, &sendWin, NCCL_WIN_COLL_SYMMETRIC));
  NCCL_OK(ncclCommWindowRegister(comm_, recv, bytes, &recvWin, NCCL_WIN_COLL_SYMMETRIC));
  const int nBlocks = 8;
  ncclDevCommRequirements reqs;
  std::memset(&reqs, 0, sizeof reqs);  // as nccl-tests does
  reqs.lsaBarrierCount = nBlocks;
  ncclDevComm devComm;
  NCCL_OK(ncclDevCommCreate(comm_, &reqs, &devComm));
  EXPECT_EQ(devComm.rank, rank);
  EXPECT_EQ(devComm.nRanks, n);
  EXPECT_EQ(devComm.lsaSize, n);
  EXPECT_EQ(devComm.lsaRank, rank);
  std::vector<float> host(count), got(count);
  // Several kernels on the same barriers: epochs carry over from one session to the next.
  for (int iter = 0; iter < 4; iter++) {
    for (size_t j = 0; j < count; j++) host[j] = valueOf(rank, iter, j);
    CUDA_OK(cudaMemcpy(send, host.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(recv, 0xff, bytes));
    CUDA_OK(cudaDeviceSynchronize());
    lsaAllReduce<<<nBlocks, 256, 0, stream_>>>(sendWin, 0, recvWin, 0, count, devComm);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaStreamSynchronize(stream_));
    // The kernel's last barrier: every peer's stores into recv are done once mine ends.
    CUDA_OK(cudaMemcpy(got.data(), recv, bytes, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t j = 0; j < count; j++) {
      float want = 0;
      for (int r = 0; r < n; r++) want += valueOf(r, iter, j);
      if (got[j] != want && bad++ < 5) ADD_FAILURE() << "iter " << iter << " element " << j << ": " << got[j] << " != " << want;
    }
    EXPECT_EQ(bad, 0u) << "iteration " << iter;
    MPI_Barrier(MPI_COMM_WORLD);  // nobody overwrites send before every rank checked
  }
  NCCL_OK(ncclDevCommDestroy(comm_, &devComm));
  NCCL_OK(ncclCommWindowDeregister(comm_, sendWin));
  NCCL_OK(ncclCommWindowDeregister(comm_, recvWin));
  NCCL_OK(ncclMemFree(send));
  NCCL_OK(ncclMemFree(recv));
}

TEST_F(DevApi, PeerStoresWithWarpBarriersAndResources) {
  const int nBlocks = 4, nThreads = 128, nWarps = nBlocks * nThreads / 32;
  const size_t count = 100003, offset = 4096;
  const size_t bytes = offset + count * sizeof(float);
  void* buf = nullptr;
  CUDA_OK(cudaMalloc(&buf, bytes));
  CUDA_OK(cudaMemset(buf, 0, bytes));
  CUDA_OK(cudaDeviceSynchronize());
  ncclWindow_t win = nullptr;
  NCCL_OK(ncclCommWindowRegister(comm_, buf, bytes, &win, NCCL_WIN_DEFAULT));
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ncclLsaBarrierHandle warpBars;
  ncclDevResourceRequirements barReq;
  NCCL_OK(ncclLsaBarrierCreateRequirement(ncclTeamLsa(comm_), nWarps, &warpBars, &barReq));
  ncclDevResourceHandle res = 0;
  ncclDevResourceRequirements resReq;
  std::memset(&resReq, 0, sizeof resReq);
  resReq.bufferSize = nWarps * sizeof(int);
  resReq.bufferAlign = 512;
  resReq.outBufferHandle = &res;
  barReq.next = &resReq;
  reqs.resourceRequirementsList = &barReq;
  ncclDevComm devComm;
  NCCL_OK(ncclDevCommCreate(comm_, &reqs, &devComm));
  EXPECT_EQ(ncclGetResourceBufferOffset(res) % 512, 0u);
  unsigned* errors = nullptr;
  CUDA_OK(cudaMalloc(&errors, 2 * sizeof(unsigned)));
  CUDA_OK(cudaMemset(errors, 0, 2 * sizeof(unsigned)));
  for (int iter = 0; iter < 3; iter++) ringShift<<<nBlocks, nThreads, 0, stream_>>>(win, offset, count, iter, devComm, warpBars, res, errors);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaStreamSynchronize(stream_));
  unsigned e[2];
  CUDA_OK(cudaMemcpy(e, errors, sizeof e, cudaMemcpyDeviceToHost));
  EXPECT_EQ(e[0], 0u) << "values the previous rank stored were wrong";
  EXPECT_EQ(e[1], 0u) << "peer pointers disagree, or a multimem pointer was not NULL";
  // The host's view of the last round: the previous rank's values, iteration 2.
  const int prev = (worldRank() + worldSize() - 1) % worldSize();
  std::vector<float> got(count);
  CUDA_OK(cudaMemcpy(got.data(), static_cast<char*>(buf) + offset, count * sizeof(float), cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (size_t j = 0; j < count; j++) bad += got[j] != valueOf(prev, 2, j);
  EXPECT_EQ(bad, 0u);
  MPI_Barrier(MPI_COMM_WORLD);
  cudaFree(errors);
  NCCL_OK(ncclDevCommDestroy(comm_, &devComm));
  NCCL_OK(ncclCommWindowDeregister(comm_, win));
  CUDA_OK(cudaFree(buf));
}

// ncclFindWindow over more windows than a block of the table holds (32): half registered
// before the device communicator, half after (added to the table it already has), two of
// them deregistered (one in each block) and one registered again at the same address; each
// probe (a window's first, middle and last byte, memory in no window, NULL) found by a
// thread, a warp and a block alike, and the window found reaches the peer's buffer.
TEST_F(DevApi, FindWindowAcrossRegistrationsAndTableBlocks) {
  constexpr int kWindows = 40;
  const size_t winBytes = 65536;
  const int rank = worldRank();
  const mcclMemoryInfo_t before = memory();
  char* base = nullptr;
  char* outside = nullptr;
  CUDA_OK(cudaMalloc(&base, kWindows * winBytes));
  CUDA_OK(cudaMalloc(&outside, 4096));
  auto fill = [&](int i, int r) { return static_cast<float>((r + 1) * 1000 + i); };
  for (int i = 0; i < kWindows; i++) {
    std::vector<float> v(winBytes / sizeof(float), fill(i, rank));
    CUDA_OK(cudaMemcpy(base + i * winBytes, v.data(), winBytes, cudaMemcpyHostToDevice));
  }
  auto reg = [&](int i) {
    ncclWindow_t w = nullptr;
    EXPECT_EQ(ncclCommWindowRegister(comm_, base + i * winBytes, winBytes, &w,
                                     i % 2 ? NCCL_WIN_COLL_SYMMETRIC : NCCL_WIN_DEFAULT),
              ncclSuccess)
        << ncclGetLastError(comm_);
    return w;
  };
  std::vector<ncclWindow_t> win(kWindows, nullptr);
  for (int i = 0; i < kWindows / 2; i++) win[i] = reg(i);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ncclDevComm devComm;
  NCCL_OK(ncclDevCommCreate(comm_, &reqs, &devComm));
  ASSERT_NE(devComm.windowTable, nullptr);
  for (int i = kWindows / 2; i < kWindows; i++) win[i] = reg(i);

  const int nProbes = 3 * kWindows + 3;
  std::vector<const void*> probes;
  for (int i = 0; i < kWindows; i++)
    for (size_t off : {size_t{0}, winBytes / 2 + 3, winBytes - 1}) probes.push_back(base + i * winBytes + off);
  probes.push_back(outside);
  probes.push_back(outside + 100);
  probes.push_back(nullptr);
  ASSERT_EQ(static_cast<int>(probes.size()), nProbes);
  const void** dProbes = nullptr;
  ncclWindow_t* dOut = nullptr;
  unsigned* dErrors = nullptr;
  CUDA_OK(cudaMalloc(&dProbes, nProbes * sizeof(void*)));
  CUDA_OK(cudaMalloc(&dOut, 3 * nProbes * sizeof(ncclWindow_t)));
  CUDA_OK(cudaMalloc(&dErrors, sizeof(unsigned)));
  CUDA_OK(cudaMemcpy(dProbes, probes.data(), nProbes * sizeof(void*), cudaMemcpyHostToDevice));
  auto check = [&](const char* when) {
    std::vector<ncclWindow_t> want;
    for (int i = 0; i < kWindows; i++) want.insert(want.end(), 3, win[i]);
    want.insert(want.end(), 3, nullptr);
    CUDA_OK(cudaMemset(dOut, 0xff, 3 * nProbes * sizeof(ncclWindow_t)));
    CUDA_OK(cudaMemset(dErrors, 0, sizeof(unsigned)));
    findByThread<<<(nProbes + 127) / 128, 128, 0, stream_>>>(devComm, dProbes, nProbes, dOut);
    findByWarp<<<(nProbes + 7) / 8, 256, 0, stream_>>>(devComm, dProbes, nProbes, dOut + nProbes, dErrors);
    findByCta<<<nProbes, 96, 0, stream_>>>(devComm, dProbes, dOut + 2 * nProbes, dErrors);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaStreamSynchronize(stream_));
    std::vector<ncclWindow_t> got(3 * nProbes);
    unsigned errors = 0;
    CUDA_OK(cudaMemcpy(got.data(), dOut, got.size() * sizeof(ncclWindow_t), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(&errors, dErrors, sizeof errors, cudaMemcpyDeviceToHost));
    EXPECT_EQ(errors, 0u) << when << ": members of one warp or block found different windows";
    const char* form[3] = {"thread", "warp", "block"};
    int wrong = 0;
    for (int f = 0; f < 3; f++)
      for (int p = 0; p < nProbes; p++)
        if (got[f * nProbes + p] != want[p] && wrong++ < 8)
          ADD_FAILURE() << when << ": probe " << p << " (window " << p / 3 << ") by a " << form[f] << ": found "
                        << static_cast<void*>(got[f * nProbes + p]) << ", expected " << static_cast<void*>(want[p]);
    EXPECT_EQ(wrong, 0) << when;
  };
  check("40 windows, 20 registered after the device communicator");
  NCCL_OK(ncclCommWindowDeregister(comm_, win[5]));
  NCCL_OK(ncclCommWindowDeregister(comm_, win[33]));
  win[5] = win[33] = nullptr;
  check("windows 5 and 33 deregistered");
  win[5] = reg(5);
  check("window 5 registered again");

  // Through the windows found, the next LSA member's values.
  const int peer = (devComm.lsaRank + 1) % devComm.lsaSize;
  std::vector<char*> local;
  std::vector<size_t> at;
  std::vector<float> want;
  for (int i = 0; i < kWindows; i++) {
    if (!win[i]) continue;
    local.push_back(base + i * winBytes);
    at.push_back(sizeof(float) * ((i * 977) % (winBytes / sizeof(float))));
    want.push_back(fill(i, peer));  // the communicator is the LSA team: world rank = LSA rank
  }
  const int n = static_cast<int>(local.size());
  char** dLocal = nullptr;
  size_t* dAt = nullptr;
  float* dVal = nullptr;
  CUDA_OK(cudaMalloc(&dLocal, n * sizeof(char*)));
  CUDA_OK(cudaMalloc(&dAt, n * sizeof(size_t)));
  CUDA_OK(cudaMalloc(&dVal, n * sizeof(float)));
  CUDA_OK(cudaMemcpy(dLocal, local.data(), n * sizeof(char*), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dAt, at.data(), n * sizeof(size_t), cudaMemcpyHostToDevice));
  readPeerThroughFound<<<(n + 63) / 64, 64, 0, stream_>>>(devComm, dLocal, dAt, n, dVal);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaStreamSynchronize(stream_));
  std::vector<float> got(n);
  CUDA_OK(cudaMemcpy(got.data(), dVal, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int k = 0; k < n; k++) EXPECT_EQ(got[k], want[k]) << "through the window found for " << local[k] - base;

  MPI_Barrier(MPI_COMM_WORLD);  // every rank done reading its peer's windows
  NCCL_OK(ncclDevCommDestroy(comm_, &devComm));
  for (ncclWindow_t w : win)
    if (w) NCCL_OK(ncclCommWindowDeregister(comm_, w));
  const mcclMemoryInfo_t after = memory();
  EXPECT_EQ(after.controlBytes, before.controlBytes) << "the window table outlived its device communicators";
  EXPECT_EQ(after.peerMappedBytes, before.peerMappedBytes);
  for (void* p : {static_cast<void*>(dProbes), static_cast<void*>(dOut), static_cast<void*>(dErrors),
                  static_cast<void*>(dLocal), static_cast<void*>(dAt), static_cast<void*>(dVal)})
    CUDA_OK(cudaFree(p));
  CUDA_OK(cudaFree(outside));
  CUDA_OK(cudaFree(base));
}

TEST_F(DevApi, RegisterDeregisterKeepsTheLedgerFlat) {
  const size_t bytes = 1 << 20;
  void *a = nullptr, *b = nullptr;
  CUDA_OK(cudaMalloc(&a, 2 * bytes));
  CUDA_OK(cudaMalloc(&b, bytes));
  // The first symmetric window also brings the direct path's barrier arrays (mapped into
  // every peer), and the last one takes them away: a window held through the loop keeps
  // them out of the counts below, and its deregistration must bring the ledger back.
  const mcclMemoryInfo_t empty = memory();
  ncclWindow_t anchor = nullptr;
  NCCL_OK(ncclCommWindowRegister(comm_, b, bytes, &anchor, NCCL_WIN_COLL_SYMMETRIC));
  const mcclMemoryInfo_t before = memory();
  for (int i = 0; i < 100; i++) {
    ncclWindow_t w1 = nullptr, w2 = nullptr;
    NCCL_OK(ncclCommWindowRegister(comm_, a, bytes, &w1, NCCL_WIN_COLL_SYMMETRIC));
    // A second window in the same allocation: one mapping of it, counted once.
    NCCL_OK(ncclCommWindowRegister(comm_, static_cast<char*>(a) + bytes, bytes, &w2, NCCL_WIN_COLL_SYMMETRIC));
    if (i == 0) {
      const mcclMemoryInfo_t during = memory();
      if (worldSize() > 1) EXPECT_EQ(during.peerMappedBytes - before.peerMappedBytes, (worldSize() - 1) * 2 * bytes);
      EXPECT_GT(during.controlBytes, before.controlBytes);
    }
    if (i % 10 == 0) {
      ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
      reqs.lsaBarrierCount = 4;
      ncclDevComm dc;
      NCCL_OK(ncclDevCommCreate(comm_, &reqs, &dc));
      NCCL_OK(ncclDevCommDestroy(comm_, &dc));
    }
    NCCL_OK(ncclCommWindowDeregister(comm_, w2));
    NCCL_OK(ncclCommWindowDeregister(comm_, w1));
  }
  const mcclMemoryInfo_t after = memory();
  EXPECT_EQ(after.peerMappedBytes, before.peerMappedBytes);
  EXPECT_EQ(after.controlBytes, before.controlBytes);
  EXPECT_EQ(after.scratchBytes, before.scratchBytes);
  NCCL_OK(ncclCommWindowDeregister(comm_, anchor));
  const mcclMemoryInfo_t none = memory();
  EXPECT_EQ(none.peerMappedBytes, empty.peerMappedBytes);
  EXPECT_EQ(none.controlBytes, empty.controlBytes);
  // Windows a user leaves registered are unmapped by ncclCommDestroy (TearDown).
  ncclWindow_t left = nullptr;
  NCCL_OK(ncclCommWindowRegister(comm_, b, bytes, &left, NCCL_WIN_COLL_SYMMETRIC));
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  ncclDevComm dc;
  NCCL_OK(ncclDevCommCreate(comm_, &reqs, &dc));
  NCCL_OK(ncclCommDestroy(comm_));
  comm_ = nullptr;
  MPI_Barrier(MPI_COMM_WORLD);
  CUDA_OK(cudaFree(a));
  CUDA_OK(cudaFree(b));
}

TEST_F(DevApi, BadArgumentsFailOnEveryRank) {
  const int rank = worldRank(), n = worldSize();
  const size_t bytes = 65536;
  void* d = nullptr;
  CUDA_OK(cudaMalloc(&d, bytes));
  std::vector<char> hostBuf(bytes);
  const mcclMemoryInfo_t before = memory();
  ncclWindow_t w = nullptr;
  // Host memory on every rank.
  EXPECT_EQ(ncclCommWindowRegister(comm_, hostBuf.data(), bytes, &w, NCCL_WIN_COLL_SYMMETRIC), ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(comm_)).find("not device memory"), std::string::npos) << ncclGetLastError(comm_);
  EXPECT_EQ(w, nullptr);
  // Host memory on rank 0 only: rank 0 names its buffer, the others name rank 0.
  ncclResult_t r = ncclCommWindowRegister(comm_, rank == 0 ? static_cast<void*>(hostBuf.data()) : d, bytes, &w,
                                          NCCL_WIN_COLL_SYMMETRIC);
  EXPECT_EQ(r, rank == 0 ? ncclInvalidArgument : ncclInvalidUsage);
  if (rank != 0) EXPECT_NE(std::string(ncclGetLastError(comm_)).find("rank 0"), std::string::npos) << ncclGetLastError(comm_);
  EXPECT_EQ(w, nullptr);
  // A window running past its allocation.
  EXPECT_EQ(ncclCommWindowRegister(comm_, static_cast<char*>(d) + 4096, bytes, &w, NCCL_WIN_COLL_SYMMETRIC),
            ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(comm_)).find("past the end"), std::string::npos) << ncclGetLastError(comm_);
  // Symmetric windows of different sizes.
  if (n > 1) {
    EXPECT_EQ(ncclCommWindowRegister(comm_, d, rank == 0 ? bytes : bytes / 2, &w, NCCL_WIN_COLL_SYMMETRIC),
              ncclInvalidUsage);
    EXPECT_NE(std::string(ncclGetLastError(comm_)).find("same size"), std::string::npos) << ncclGetLastError(comm_);
    EXPECT_EQ(w, nullptr);
  }
  // Not windows of this communicator.
  EXPECT_EQ(ncclCommWindowDeregister(comm_, reinterpret_cast<ncclWindow_t>(d)), ncclInvalidArgument);
  ncclDevComm bogus;
  std::memset(&bogus, 0, sizeof bogus);
  EXPECT_EQ(ncclDevCommDestroy(comm_, &bogus), ncclInvalidArgument);
  // GIN on a GPU communicator.
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.ginSignalCount = 1;
  ncclDevComm dc;
  EXPECT_EQ(ncclDevCommCreate(comm_, &reqs, &dc), ncclInvalidUsage);
  EXPECT_NE(std::string(ncclGetLastError(comm_)).find("GIN"), std::string::npos);
  const mcclMemoryInfo_t after = memory();
  EXPECT_EQ(after.peerMappedBytes, before.peerMappedBytes);
  EXPECT_EQ(after.controlBytes, before.controlBytes);
  // The communicator still works after all of that.
  ncclWindow_t ok = nullptr;
  NCCL_OK(ncclCommWindowRegister(comm_, d, bytes, &ok, NCCL_WIN_COLL_SYMMETRIC));
  NCCL_OK(ncclCommWindowDeregister(comm_, ok));
  CUDA_OK(cudaFree(d));
}
