// Builds against mccl's nccl.h and nccl_device.h only (nothing of mccl's sources): the
// device API used the way NCCL 2.28's examples (06_device_api) and nccl-tests 2.19.6's
// device kernels (the --device_implementation AllReduce/AlltoAll) use it. Compiled, not run,
// by the ctest "device_api_compile"; the GPU test tests/gpu/test_gpu_devapi.cu runs the same
// shapes of kernels.
#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include <cstdio>
#include <cstring>

// NCCL's example 06_device_api/01_allreduce: an LSA barrier, then every rank sums a slice
// of the peers' send windows and stores it into every peer's receive window.
template <typename T>
__global__ void lsaAllReduceKernel(ncclWindow_t sendwin, size_t sendoffset, ncclWindow_t recvwin, size_t recvoffset,
                                   size_t count, struct ncclDevComm devComm) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamLsa(devComm), devComm.lsaBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_relaxed);
  const int rank = devComm.rank, nRanks = devComm.nRanks;
  const int globalTid = threadIdx.x + blockDim.x * (rank + blockIdx.x * nRanks);
  const int globalNthreads = blockDim.x * gridDim.x * nRanks;
  for (size_t o = globalTid; o < count; o += globalNthreads) {
    T v = 0;
    for (int peer = 0; peer < nRanks; peer++) v += ((T*)ncclGetLsaPointer(sendwin, sendoffset, peer))[o];
    for (int peer = 0; peer < nRanks; peer++) ((T*)ncclGetLsaPointer(recvwin, recvoffset, peer))[o] = v;
  }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

// nccl-tests' NvlAlltoAllKernel shape: acquire/release barriers, pointers by LSA rank.
template <typename T>
__global__ void lsaAlltoAllKernel(ncclWindow_t sendwin, size_t sendoffset, ncclWindow_t recvwin, size_t recvoffset,
                                  size_t count, int root, struct ncclDevComm devComm) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamLsa(devComm), devComm.lsaBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);
  int rank = devComm.rank, nRanks = devComm.nRanks;
  int tid = threadIdx.x + blockDim.x * blockIdx.x;
  int nthreads = blockDim.x * gridDim.x;
  T* sendPtr = (T*)ncclGetLsaPointer(sendwin, sendoffset, rank);
  for (size_t offset = tid; offset < count; offset += nthreads)
    for (int peer = 0; peer < nRanks; peer++) {
      T* recvPtr = (T*)ncclGetLsaPointer(recvwin, recvoffset, peer);
      recvPtr[rank * count + offset] = sendPtr[peer * count + offset];
    }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

// The rest of the supported surface: team tag constructor, split arrive/wait, warp and
// thread groups, world-rank and team pointers, local pointers, teams and their helpers,
// resource buffers, multimem (NULL here).
__global__ void surfaceKernel(ncclWindow_t win, struct ncclDevComm devComm, ncclLsaBarrierHandle extra,
                              ncclDevResourceHandle buf, int* out) {
  {
    ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamTagLsa(), 0};
    bar.arrive(ncclCoopCta(), cuda::memory_order_release);
    bar.wait(ncclCoopCta(), cuda::memory_order_acquire);
  }
  if (threadIdx.x < 32) {
    ncclLsaBarrierSession<ncclCoopWarp> bar{ncclCoopWarp(), devComm, ncclTeamLsa(devComm), extra, 0};
    bar.sync(ncclCoopWarp(), cuda::memory_order_acq_rel);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ncclLsaBarrierSession<ncclCoopThread> bar{ncclCoopThread(), devComm, ncclTeamLsa(devComm), extra, 1};
    bar.sync(ncclCoopThread(), cuda::memory_order_seq_cst);
    ncclTeam world = ncclTeamWorld(devComm), lsa = ncclTeamLsa(devComm);
    int peer = ncclTeamRankToWorld(devComm, lsa, (lsa.rank + 1) % lsa.nRanks);
    int* p = (int*)ncclGetPeerPointer(win, 0, peer);
    int* q = (int*)ncclGetPeerPointer(win, 0, world, peer);
    int* l = (int*)ncclGetLocalPointer(win, 0);
    int* r = (int*)ncclGetResourceBufferLsaPointer(devComm, buf, lsa.rank);
    int* rl = (int*)ncclGetResourceBufferLocalPointer(devComm, buf);
    int* rp = (int*)ncclGetResourceBufferPeerPointer(devComm, buf, world, devComm.rank);
    void* mm = ncclGetLsaMultimemPointer(win, 0, devComm);
    const bool found = ncclFindWindow(ncclCoopThread(), devComm, l) == win;
    out[0] = found + (p == q) + (r == rl) + (rp == rl) + (mm == nullptr) + (l != nullptr) +
             ncclTeamRankIsMember(lsa, world, devComm.rank) + ncclTeamRankToTeam(lsa, world, devComm.rank) +
             ncclTeamRankToLsa(devComm, world, devComm.rank) + ncclTeamInnerFactor(world, 1).nRanks +
             ncclTeamOuterFactor(world, 1).nRanks + ncclTeamRankInDifference(world, lsa, 0) + ncclTeamRail(devComm).rank;
  }
  ncclCoopWarpSpan span(0, 1, 3);
  ncclCoopLanes lanes = ncclCoopCoalesced();
  if (threadIdx.x < 32) {
    span.sync();
    lanes.sync();
    const ncclWindow_t w = ncclFindWindow(ncclCoopWarp(), devComm, ncclGetLocalPointer(win, 8));
    out[1 + threadIdx.x] = (w == win) + span.thread_rank() + lanes.thread_rank() + ncclCoopTile<8>().thread_rank() +
                           (int)ncclCoopGetLaneMask(ncclCoopTile<4>()) + ncclCoopIsThread(ncclCoopThread());
  }
}

// ncclSymPtr (arithmetic, conversion, every pointer form) and ncclCoopBcast in every group.
struct Pair {
  int a;
  float b;
};
__global__ void symPtrAndBcastKernel(ncclWindow_t win, struct ncclDevComm devComm, long long* out) {
  ncclSymPtr<float> p(win, 0);
  p += 4;
  p -= 1u;
  ncclSymPtr<float> q = p + 8ull;
  ncclSymPtr<char> bytes = q;
  ncclTeam lsa = ncclTeamLsa(devComm);
  float* local = q.localPtr();
  float* viaLsa = q.lsaPtr(lsa.rank);
  float* viaWorld = q.peerPtr(devComm.rank);
  float* viaTeam = (q - 2).peerPtr(lsa, lsa.rank);
  const bool same = p == q || p != q;
  long long v = threadIdx.x == 0 ? 1000 + devComm.rank : -1;
  long long cta = ncclCoopBcast(ncclCoopCta(), v, 0);
  long long warp = ncclCoopBcast(ncclCoopWarp(), (long long)threadIdx.x, 5);
  Pair pair = ncclCoopBcast(ncclCoopTile<8>(), Pair{(int)threadIdx.x, 0.5f}, 3, false);
  long long lanes = 0, span = 0;
  if (threadIdx.x < 32 && ((0xf0f0f0f0u >> threadIdx.x) & 1u))
    lanes = ncclCoopBcast(ncclCoopLanes(0xf0f0f0f0u), (long long)threadIdx.x, 2);
  if (threadIdx.x >= 32 && threadIdx.x < 96) span = ncclCoopBcast(ncclCoopWarpSpan(1, 2, 4), (long long)threadIdx.x, 33);
  out[threadIdx.x] = cta + warp + pair.a + lanes + span + (q - p) + (long long)bytes.offset + same +
                     (local == viaLsa) + (viaLsa == viaWorld) + (viaTeam != nullptr) + (q.multimemPtr({}) == nullptr) +
                     (q.lsaMultimemPtr(devComm) == nullptr);
}

// The LL all-to-all as an MoE dispatch would use it (a value to one peer, a bcast, a
// reduction over what arrived, an epoch a round), the LSA form of ncclBarrierSession, and
// nccl::utility's helpers.
struct Pair3 {
  float a, b, c;
};
__global__ void llA2AKernel(ncclDevComm devComm, ncclLLA2AHandle h, int rounds, float* out) {
  using nccl::utility::divUp;
  ncclCoopCta cta;
  ncclTeam lsa = ncclTeamLsa(devComm);
  ncclLLA2ASession<ncclCoopCta> a2a(cta, devComm, lsa, h, blockIdx.x, /*maxElts=*/2 * lsa.nRanks);
  for (int r = 0; r < rounds; r++) {
    if ((int)threadIdx.x < lsa.nRanks) a2a.send(threadIdx.x, lsa.rank, float(r + lsa.rank));
    if (threadIdx.x == 0) a2a.bcast(lsa.nRanks + lsa.rank, Pair3{1.f, 2.f, float(r)});
    if ((int)threadIdx.x < lsa.nRanks) out[threadIdx.x] += a2a.recv<float>(threadIdx.x);
    if (threadIdx.x == 0) {
      float sum = a2a.recvReduce<4, float>(0, lsa.nRanks, 1, [](float v) { return double(v); },
                                           [](double x, double y) { return x + y; });
      Pair3 p[2];
      a2a.recvUnrolled<1, 2>(lsa.nRanks, lsa.nRanks < 2 ? lsa.nRanks : 2, 1, p);
      out[32] = sum + p[0].c;
    }
    a2a.endEpoch(cta);
  }
  ncclBarrierSession<ncclCoopCta> bar(cta, ncclTeamTagLsa(), devComm, blockIdx.x);
  bar.sync(cta, cuda::memory_order_acq_rel, ncclGinFenceLevel::Relaxed);
  bar.lsaBarrier().arrive(cta, cuda::memory_order_release);
  bar.lsaBarrier().wait(cta, cuda::memory_order_acquire);
  if (threadIdx.x == 0)
    out[33] = float(divUp(7, 2) + nccl::utility::roundUp(5, 4) + nccl::utility::alignUp(9u, 8u) +
                    nccl::utility::rollingLessThan(0xffffffffu, 1u) +
                    nccl::utility::idivFast32(100u, 7u, nccl::utility::idivRcp32(7u)) + nccl::utility::lane());
}

#define CHECK(call)                                                                     \
  do {                                                                                  \
    ncclResult_t r_ = (call);                                                           \
    if (r_ != ncclSuccess) {                                                            \
      std::fprintf(stderr, "%s: %s\n", #call, ncclGetErrorString(r_));                 \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

// The host side of the examples: windows, requirements (zeroed as nccl-tests does, or with
// the initializer), a resource buffer and an extra barrier set, launches, teardown.
int runExample(ncclComm_t comm, size_t count, cudaStream_t stream) {
  float *send = nullptr, *recv = nullptr;
  CHECK(ncclMemAlloc((void**)&send, count * sizeof(float)));
  CHECK(ncclMemAlloc((void**)&recv, count * sizeof(float)));
  ncclWindow_t sendWin, recvWin;
  CHECK(ncclCommWindowRegister(comm, send, count * sizeof(float), &sendWin, NCCL_WIN_COLL_SYMMETRIC));
  CHECK(ncclCommWindowRegister(comm, recv, count * sizeof(float), &recvWin, NCCL_WIN_COLL_SYMMETRIC));

  ncclDevCommRequirements reqs;
  std::memset(&reqs, 0, sizeof reqs);
  ncclDevCommRequirements zero = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  if (std::memcmp(&zero, &reqs, sizeof reqs) != 0) return 2;
  reqs.lsaBarrierCount = 16;
  ncclLsaBarrierHandle extra;
  ncclDevResourceRequirements barReq;
  CHECK(ncclLsaBarrierCreateRequirement(ncclTeamLsa(comm), 2, &extra, &barReq));
  ncclDevResourceHandle bufHandle;
  ncclDevResourceRequirements bufReq;
  std::memset(&bufReq, 0, sizeof bufReq);
  bufReq.bufferSize = 4096;
  bufReq.bufferAlign = 256;
  bufReq.outBufferHandle = &bufHandle;
  bufReq.next = &barReq;
  ncclLLA2AHandle a2aHandle;
  ncclDevResourceRequirements a2aReq;
  const int nLsa = ncclTeamLsa(comm).nRanks;
  CHECK(ncclLLA2ACreateRequirement(4, ncclLLA2ACalcSlots(2 * nLsa, sizeof(Pair3)), &a2aHandle, &a2aReq));
  barReq.next = &a2aReq;
  reqs.resourceRequirementsList = &bufReq;
  ncclDevComm devComm;
  CHECK(ncclDevCommCreate(comm, &reqs, &devComm));
  int nWorld = ncclTeamWorld(comm).nRanks;
  int lsaOfWorld0 = ncclTeamRankToLsa(comm, ncclTeamWorld(comm), 0);
  (void)nWorld;
  (void)lsaOfWorld0;

  lsaAllReduceKernel<float><<<16, 512, 0, stream>>>(sendWin, 0, recvWin, 0, count, devComm);
  lsaAlltoAllKernel<float><<<16, 512, 0, stream>>>(sendWin, 0, recvWin, 0, count / devComm.nRanks, 0, devComm);
  int* out;
  cudaMalloc(&out, 64 * sizeof(int));
  surfaceKernel<<<1, 64, 0, stream>>>(sendWin, devComm, extra, bufHandle, out);
  long long* out2;
  cudaMalloc(&out2, 128 * sizeof(long long));
  symPtrAndBcastKernel<<<1, 128, 0, stream>>>(sendWin, devComm, out2);
  float* out3;
  cudaMalloc(&out3, 64 * sizeof(float));
  llA2AKernel<<<4, 64, 0, stream>>>(devComm, a2aHandle, 3, out3);
  cudaStreamSynchronize(stream);
  cudaFree(out);
  cudaFree(out2);
  cudaFree(out3);

  CHECK(ncclDevCommDestroy(comm, &devComm));
  CHECK(ncclCommWindowDeregister(comm, sendWin));
  CHECK(ncclCommWindowDeregister(comm, recvWin));
  CHECK(ncclMemFree(send));
  CHECK(ncclMemFree(recv));
  return 0;
}
