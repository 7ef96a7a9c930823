// The data path of GPU communicators: plans a group's operations, connects the peers they
// need over CUDA IPC, and launches one kernel for the whole group on the user's stream.
// GpuDataPath's members that are not inline in gpu_datapath_impl.h; GpuWork is in gpu_work.cc.
#include "kernels/launch/gpu_datapath_impl.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/completion.h"
#include "core/phase_log.h"

namespace mccl {

// Loads every kernel of the library on device dev, once per process. Under CUDA's lazy
// loading (the default) a kernel is loaded at its first launch, and the load waits for the
// kernels running on the device: when ranks share a GPU (MCCL_SHARED_GPU), one rank's first
// launch of a kernel while a peer's kernel on that GPU spins for it never returns (seen
// with one thread driving two ranks: a Gather under LL). cudaFuncGetAttributes loads a
// kernel, as NCCL loads its kernels at init.
void preloadKernels(int dev) {
  static std::mutex mu;
  static std::set<int> loaded;
  std::lock_guard<std::mutex> lock(mu);
  if (!loaded.insert(dev).second) return;
  (void)kernelStackBytesMax();
}

GpuDataPath::~GpuDataPath() {
  if (memOpsWatched_.load()) unwatchMemOpWaits(this);
  CudaDeviceGuard guard(comm_->cudaDev);
  if (prof_.n > 0)
    std::fprintf(stderr,
                 "mccl profile: rank %d, %llu launches (%llu from the plan cache); host us per "
                 "launch: API call to launch %.2f (to the "
                 "plan %.2f, plan %.2f, plan to launch %.2f), kernel launch %.2f (in the runtime %.2f), "
                 "after launch %.2f\n",
                 comm_->rank, static_cast<unsigned long long>(prof_.n), static_cast<unsigned long long>(cacheHits_),
                 prof_.plan / 1e3 / prof_.n,
                 prof_.toPlan / 1e3 / prof_.n, prof_.planning / 1e3 / prof_.n,
                 (prof_.plan - prof_.toPlan - prof_.planning) / 1e3 / prof_.n, prof_.launch / 1e3 / prof_.n,
                 prof_.runtime / 1e3 / prof_.n, prof_.after / 1e3 / prof_.n);
  if (devProf_) {
    waitLast(5);
    unsigned long long p[kProfAllWords] = {};
    if (cudaMemcpy(p, devProf_, sizeof p, cudaMemcpyDeviceToHost) == cudaSuccess) printKernelProfile(p);
    cudaFree(devProf_);
    comm_->mem.sub(MemKind::Tables, sizeof(unsigned long long) * kProfAllWords);
  }
  // The flag block goes back to the pool only when no kernel of this communicator can
  // still read or write it (never launched, or the last launch finished).
  bool quiet = !launched_;
  if (lastEvent_) {
    // Kernels still running use what is freed below: they end (or were aborted) first.
    waitLast(static_cast<double>(knobInt(Knob::Timeout)));
    quiet = quiet || cudaEventQuery(lastEvent_) == cudaSuccess;
    cudaGetLastError();
    cudaEventDestroy(lastEvent_);
  }
  lanes_.release();
  if (dRing_) cudaFree(dRing_);
  if (claims_) cudaFree(claims_);
  for (void* s : scratch_) cudaFree(s);
  // Otherwise the block stays out of the pool: a kernel that never ended may still use it.
  if (hostFlags_ && quiet) hostFlagBlocks().put(hostFlags_);
  comm_->mem.sub(MemKind::Tables, ringBytes_);
  if (claims_) comm_->mem.sub(MemKind::Tables, sizeof(uint32_t) * kClaimAllocWords);
  comm_->mem.sub(MemKind::Scratch, scratchTotal_);
  if (hostFlags_) comm_->mem.sub(MemKind::HostMapped, kHostFlagBytes);
}

// Host-mapped flag blocks (abort flag, error words: DevComm::abortFlag) of kHostFlagBytes,
// carved from pinned chunks that live as long as the process and handed from a destroyed
// communicator to the next one: pinning a fresh page cost 0.9 ms of the first GPU
// communicator's init after the others were destroyed, against 0.01 ms for a block from a
// chunk already pinned (2 x H100, MCCL_PROFILE_INIT "gpu-host-flags",
// bench/results/gpu-2xH200-2026-11-26e). Portable: a block serves any device.
HostFlagBlocks& hostFlagBlocks() {
  static HostFlagBlocks* pool = new HostFlagBlocks;  // never destroyed: blocks outlive main
  return *pool;
}

ncclResult_t HostFlagBlocks::get(ncclComm* comm, int32_t** out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) {
    void* chunk = nullptr;
    cudaError_t e = cudaHostAlloc(&chunk, kChunkBytes, cudaHostAllocMapped | cudaHostAllocPortable);
    if (e != cudaSuccess)
      return MCCL_ERR(ncclUnhandledCudaError, comm, "cudaHostAlloc(flags, %zu bytes): %s", kChunkBytes,
                      cudaGetErrorString(e));
    for (size_t off = kChunkBytes; off >= kBlockBytes; off -= kBlockBytes)
      free_.push_back(reinterpret_cast<int32_t*>(static_cast<uint8_t*>(chunk) + off - kBlockBytes));
    chunks_.push_back(chunk);
  }
  *out = free_.back();
  free_.pop_back();
  return ncclSuccess;
}

void HostFlagBlocks::put(int32_t* block) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(block);
}

ncclResult_t GpuDataPath::setup() {
  CudaDeviceGuard guard(comm_->cudaDev);
  if (knobInt(Knob::SharedGpu) > 0) preloadKernels(comm_->cudaDev);
  MCCL_CHECK(ipc_.setup(kGpuMaxChannels));
  phaseMark("gpu-connection-table");  // MCCL_PROFILE_INIT: the parts of datapath-setup
  for (int p = 0; p < comm_->nranks; ++p) comm_->gpuNet |= !ipc_.canReach(p);
  phaseMark("gpu-peer-reach");
  MCCL_CHECK(hostFlagBlocks().get(comm_, &hostFlags_));
  comm_->mem.add(MemKind::HostMapped, kHostFlagBytes);
  std::memset(hostFlags_, 0, kHostFlagBytes);
  int32_t* dFlags = nullptr;
  CUDA_TRY(cudaHostGetDevicePointer(&dFlags, hostFlags_, 0), "cudaHostGetDevicePointer");
  phaseMark("gpu-host-flags");
  const int n = comm_->nranks;
  // The ring tables the schedules read (Schedule::ring, ringPos: null for the identity
  // ring, what every contiguous mapping has, so nothing per rank is kept on the device
  // then; issue 17), and nodeFirst (a word per node).
  const bool ringTable = comm_->topo.ringTable() != nullptr;
  const size_t nodeEntries = comm_->topo.nodeFirst().size();
  ringEntries_ = ringTable ? 2 * static_cast<size_t>(n) : 0;
  ringBytes_ = sizeof(int32_t) * std::max<size_t>(ringEntries_ + nodeEntries, 1);
  CUDA_TRY(cudaMalloc(&dRing_, ringBytes_), "cudaMalloc(ring)");
  comm_->mem.add(MemKind::Tables, ringBytes_);
  if (nodeEntries > 0)
    CUDA_TRY(cudaMemcpy(dRing_ + ringEntries_, comm_->topo.nodeFirst().data(), sizeof(int32_t) * nodeEntries,
                        cudaMemcpyHostToDevice),
             "cudaMemcpy");
  if (ringTable) {
    CUDA_TRY(cudaMemcpy(dRing_, comm_->topo.ringTable(), sizeof(int32_t) * n, cudaMemcpyHostToDevice), "cudaMemcpy");
    CUDA_TRY(cudaMemcpy(dRing_ + n, comm_->topo.ringPosTable(), sizeof(int32_t) * n, cudaMemcpyHostToDevice),
             "cudaMemcpy");
  }
  DevComm h;
  std::memset(&h, 0, sizeof h);
  h.rank = comm_->rank;
  h.nranks = n;
  h.maxChannels = kGpuMaxChannels;
  h.abortFlag = dFlags;
  h.error = dFlags + 1;
  h.errorPeer = dFlags + 2;
  doneHost_ = reinterpret_cast<volatile uint32_t*>(hostFlags_ + kDoneFlagWord);
  int64_t timeout = knobInt(Knob::Timeout);
  h.timeoutNs = timeout > 0 ? static_cast<uint64_t>(timeout) * 1000000000ull : 0;
  h.fence = knobStr(Knob::GpuFence) == "sc" ? 1 : 0;
  int64_t slices = knobInt(Knob::GpuSlices);
  h.slices = static_cast<int32_t>(slices < 1 ? 1 : slices > 16 ? 16 : slices);
  h.postWarp = knobBool(Knob::SimplePostWarp) ? 1 : 0;
  h.ring = devRing();
  h.ringPos = devRingPos();
  CUDA_TRY(cudaMalloc(&claims_, sizeof(uint32_t) * kClaimAllocWords), "cudaMalloc(unit claims)");
  comm_->mem.add(MemKind::Tables, sizeof(uint32_t) * kClaimAllocWords);
  CUDA_TRY(cudaMemset(claims_, 0, sizeof(uint32_t) * kClaimAllocWords), "cudaMemset(unit claims)");
  h.claims = claims_;
  h.ringPosition = comm_->topo.ringPos(comm_->rank);
  h.ringPrev = comm_->topo.ringRank(h.ringPosition - 1);
  h.ringNext = comm_->topo.ringRank(h.ringPosition + 1);
  h.table = ipc_.devTable();
  h.peerBytes = ipc_.peerBytes();
  if (knobBool(Knob::Profile)) {
    CUDA_TRY(cudaMalloc(&devProf_, sizeof(unsigned long long) * kProfAllWords), "cudaMalloc(profile)");
    comm_->mem.add(MemKind::Tables, sizeof(unsigned long long) * kProfAllWords);
    CUDA_TRY(cudaMemset(devProf_, 0, sizeof(unsigned long long) * kProfAllWords), "cudaMemset(profile)");
    h.prof = devProf_;
  }
  hComm_ = h;
  phaseMark("gpu-tables");
  CUDA_TRY(cudaEventCreateWithFlags(&lastEvent_, cudaEventDisableTiming), "cudaEventCreate");
  return ncclSuccess;
}

void GpuDataPath::printKernelProfile(const unsigned long long* p) const {
  auto perBlock = [p](int word) { return p[kProfSimpleBlocks] ? p[word] / 1e3 / p[kProfSimpleBlocks] : 0.0; };
  if (p[kProfSimpleSteps])
    std::fprintf(stderr,
                 "mccl profile: rank %d Simple: %llu block-steps of %.0f KiB avg; us per step: wait for flags %.2f, "
                 "move data %.2f, fence and post %.2f (%.2f GB/s per block while moving), from a post to the next "
                 "step %.2f; us per block: start to first step %.2f (parameters to shared memory %.2f, to the work's "
                 "step loop %.2f), last post to end %.2f (%llu blocks)\n",
                 comm_->rank, p[kProfSimpleSteps], p[kProfSimpleBytes] / 1024.0 / p[kProfSimpleSteps],
                 p[kProfSimpleWait] / 1e3 / p[kProfSimpleSteps], p[kProfSimpleMove] / 1e3 / p[kProfSimpleSteps],
                 p[kProfSimplePost] / 1e3 / p[kProfSimpleSteps],
                 p[kProfSimpleMove] ? static_cast<double>(p[kProfSimpleBytes]) / p[kProfSimpleMove] : 0.0,
                 p[kProfSimpleGaps] ? p[kProfSimpleGap] / 1e3 / p[kProfSimpleGaps] : 0.0, perBlock(kProfSimpleStart),
                 perBlock(kProfSimpleArgs), perBlock(kProfSimpleSetup), perBlock(kProfSimpleEnd),
                 p[kProfSimpleBlocks]);
  if (p[kProfSimpleSteps]) {
    // Every block's run time, and the last launch's channels: start and end (us after
    // its first block's start) and SM.
    const double nb = static_cast<double>(p[kProfSimpleBlocks]);
    const double mean = p[kProfBlockRun] / 1e3 / nb, sq = static_cast<double>(p[kProfBlockRunSq]) / nb;
    std::fprintf(stderr, "mccl profile: rank %d Simple blocks: run %.1f us avg, %.1f sd, %.1f most; last launch:",
                 comm_->rank, mean, std::sqrt(std::max(0.0, sq - mean * mean)),
                 p[kProfBlockRunMax] / 1e3);
    unsigned long long first = ~0ull;
    for (int c = 0; c < kProfChannels; ++c)
      if (p[kProfChanEnd + c]) first = std::min(first, p[kProfChanEntry + c]);
    for (int c = 0; c < kProfChannels; ++c)
      if (p[kProfChanEnd + c])
        std::fprintf(stderr, " ch%d %.1f-%.1f sm%llu", c, (p[kProfChanEntry + c] - first) / 1e3,
                     (p[kProfChanEnd + c] - first) / 1e3, p[kProfChanSm + c]);
    std::fprintf(stderr, "\n");
  }
  if (p[kProfLlSteps])
    std::fprintf(stderr,
                 "mccl profile: rank %d LL: %llu block-steps of %.1f KiB avg; us per step: setup %.2f, send %.2f, "
                 "receive %.2f, step barrier and credits %.2f; block start to first setup %.2f us (%llu blocks)\n",
                 comm_->rank, p[kProfLlSteps], p[kProfLlBytes] / 1024.0 / p[kProfLlSteps],
                 p[kProfLlSetup] / 1e3 / p[kProfLlSteps], p[kProfLlSend] / 1e3 / p[kProfLlSteps],
                 p[kProfLlRecv] / 1e3 / p[kProfLlSteps], p[kProfLlEnd] / 1e3 / p[kProfLlSteps],
                 p[kProfLlStarts] ? p[kProfLlStart] / 1e3 / p[kProfLlStarts] : 0.0, p[kProfLlStarts]);
  if (p[kProfLlStamped]) {  // a measurement build's parts of that start (MCCL_LL_PROFILE)
    const double nb = static_cast<double>(p[kProfLlStamped]);
    std::fprintf(stderr,
                 "mccl profile: rank %d LL block start in parts (first instruction on, %llu blocks), us: first "
                 "parameter %.2f, queue entry %.2f, work's range %.2f, grid wait %.2f, to the setup's start %.2f\n",
                 comm_->rank, p[kProfLlStamped], p[kProfLlStartParam] / 1e3 / nb, p[kProfLlStartQueue] / 1e3 / nb,
                 p[kProfLlStartRange] / 1e3 / nb, p[kProfLlStartWait] / 1e3 / nb, p[kProfLlStartRest] / 1e3 / nb);
  }
  if (p[kProfDirectWorks]) {
    const double works = static_cast<double>(p[kProfDirectWorks]);
    std::fprintf(stderr,
                 "mccl profile: rank %d direct: %llu block-works (%llu on plain buffers), %llu blocks; us per "
                 "block-work: entry barrier%s %.2f, work %.2f, exit barrier%s %.2f; us per block: start to first "
                 "work %.2f\n",
                 comm_->rank, p[kProfDirectWorks], p[kProfDirectPlain], p[kProfDirectBlocks],
                 p[kProfDirectPlain] ? " (offers)" : "", p[kProfDirectEntry] / 1e3 / works, p[kProfDirectRun] / 1e3 / works,
                 p[kProfDirectPlain] ? " (done lines)" : "", p[kProfDirectExit] / 1e3 / works,
                 p[kProfDirectBlocks] ? p[kProfDirectStart] / 1e3 / p[kProfDirectBlocks] : 0.0);
    if (p[kProfDirectPlain])
      std::fprintf(stderr,
                   "mccl profile: rank %d direct plain entry, us per block-work: first barrier %.2f, connection "
                   "words %.2f, offers out and in %.2f, the rest (staged inputs, closing barrier) %.2f\n",
                   comm_->rank, p[kProfDirectEntrySync] / 1e3 / p[kProfDirectPlain],
                   p[kProfDirectEntryConn] / 1e3 / p[kProfDirectPlain], p[kProfDirectEntryOffer] / 1e3 / p[kProfDirectPlain],
                   (p[kProfDirectEntry] - p[kProfDirectEntrySync] - p[kProfDirectEntryConn] - p[kProfDirectEntryOffer]) /
                       1e3 / p[kProfDirectPlain]);
  }
}

ncclResult_t GpuDataPath::waitLast(double seconds) {
  if (!launched_) return ncclSuccess;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds > 0 ? seconds : 30);
  for (;;) {
    cudaError_t e = cudaEventQuery(lastEvent_);
    if (e == cudaSuccess) return ncclSuccess;
    if (e != cudaErrorNotReady)
      return MCCL_ERR(ncclUnhandledCudaError, comm_, "a kernel of this communicator failed: %s",
                      cudaGetErrorString(e));
    if (comm_->checkPeers() != ncclSuccess) {
      abort();  // kernels waiting on the lost rank leave
      return ncclRemoteError;
    }
    ncclResult_t net = ipc_.netStatus();
    if (net != ncclSuccess) {
      abort();
      return net;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      abort();  // the kernels see the flag and leave
      return MCCL_ERR(ncclRemoteError, comm_, "operations did not complete within MCCL_TIMEOUT; aborted them");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// As a kernel's timeout: the error word with the peer (kernels queued behind stop at their
// first check, asyncStatus reports it), then every copy-engine wait let go.
void GpuDataPath::memOpWaitTimedOut(int peer, double seconds) {
  logReport("rank %d: a copy-engine wait for rank %d (%s) has not moved for %.1f s (MCCL_TIMEOUT): the communicator "
       "fails and its waits are let go", comm_->rank, peer, comm_->hosts.name(peer).c_str(), seconds);
  if (hostFlags_) {
    volatile int32_t* f = reinterpret_cast<volatile int32_t*>(hostFlags_);
    if (__sync_bool_compare_and_swap(&f[1], kDevOk, kDevTimeout)) f[2] = peer;
  }
  if (SymState* sym = ceSym_.load(std::memory_order_acquire)) sym->releaseCeWaits();
  peers_.release();
}

ncclResult_t GpuDataPath::asyncStatus() {
  MCCL_CHECK(comm_->checkPeers());
  ncclResult_t net = ipc_.netStatus();
  if (net != ncclSuccess) {
    abort();  // kernels waiting on the network leave
    comm_->fail(net);
    return net;
  }
  int32_t e = hostFlags_ ? reinterpret_cast<volatile int32_t*>(hostFlags_)[1] : 0;
  if (e == kDevOk) return ncclSuccess;
  int32_t peer = reinterpret_cast<volatile int32_t*>(hostFlags_)[2];
  ncclResult_t r = e == kDevTimeout
                       ? MCCL_ERR(ncclRemoteError, comm_,
                                  "rank %d waited on the GPU (a kernel or a copy-engine wait) longer than "
                                  "MCCL_TIMEOUT for rank %d (%s)",
                                  comm_->rank, peer, comm_->hosts.name(peer).c_str())
                       : MCCL_ERR(ncclRemoteError, comm_, "the communicator was aborted while a kernel ran");
  comm_->fail(r);
  return r;
}

// Whether a plan's eager launch may be replayed from a graph when it repeats (LaunchGraph):
// one small LL kernel (TinyArgs, LeanOneArgs or LeanTwoArgs: spec.tiny) and nothing else (no copies,
// direct or copy-engine works), launched without programmatic dependent launch
// (LaunchPart::pdl: a launch that overlaps the kernel before it beats a replay,
// launch_graph.h), its operations of at most MCCL_LAUNCH_GRAPH_BYTES.
static bool launchGraphs(const GpuPlan& p) {
  // The overlap first: on sm_90 GPUs of their own every launch has it, and the rest is not read.
  if (p.parts.size() != 1 || p.parts[0].pdl || !p.parts[0].spec.tiny || !p.copies.empty() || !p.selfCopies.empty() ||
      !p.direct.empty() || !p.engine.empty() || p.engineP2pOps != 0 || !p.peerEngine.empty())
    return false;
  const int64_t most = knobInt(Knob::LaunchGraphBytes);
  if (most <= 0) return false;
  for (const OpDesc& op : p.ops)
    if (op.bytes() > static_cast<uint64_t>(most)) return false;
  return true;
}

ncclResult_t GpuDataPath::launch(const GpuPlan& p, uint64_t planStart, uint64_t planEnd, LaunchGraph* graph) {
  const int blocks = static_cast<int>(p.queues.size());
  if (blocks == 0 && p.copies.empty() && p.selfCopies.empty() && p.direct.empty() && p.engine.empty() &&
      p.engineP2pOps == 0 && p.peerEngine.empty())
    return ncclSuccess;  // nothing moves
  CudaDeviceGuard guard(comm_->cudaDev);
  cudaStream_t stream = p.ops.empty() ? nullptr : p.ops[0].stream;
  const bool capturing = p.capturing;
  // Other streams of the group: the launch waits for them, and they wait for the launch.
  std::vector<cudaStream_t> others;
  for (const OpDesc& op : p.ops)
    if (op.stream != stream && std::find(others.begin(), others.end(), op.stream) == others.end())
      others.push_back(op.stream);
  // One event per other stream, destroyed on every return (a launch that fails returns
  // early; destroying an event that streams still wait for is allowed).
  struct Events {
    std::vector<cudaEvent_t> v;
    ~Events() {
      for (cudaEvent_t e : v) cudaEventDestroy(e);
    }
  } events;
  for (cudaStream_t s : others) {
    cudaEvent_t e;
    CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    events.v.push_back(e);
    CUDA_TRY(cudaEventRecord(e, s), "cudaEventRecord");
    CUDA_TRY(cudaStreamWaitEvent(stream, e, 0), "cudaStreamWaitEvent");
  }
  // A waiting host's completion word (core/completion.h): the plan's one LL-family kernel
  // raises it when nothing of the plan runs after that kernel (the kernels that raise it).
  // Not in a capture, but one made for replay (libmccl_mpi's graphs of its small calls).
  CompletionWord* cw = threadCompletion();
  if (cw != nullptr) cw->taken = false;  // a second launch of the scope: the stream tells
  const bool raise = cw != nullptr && cw->armed && (!capturing || cw->replay) && p.parts.size() == 1 &&
                     !p.parts[0].spec.large &&
                     (p.parts[0].spec.kind == LaunchKind::LlReduce || p.parts[0].spec.kind == LaunchKind::LlCopy) &&
                     p.direct.empty() && p.engine.empty() && p.engineP2pOps == 0 && p.selfCopies.empty() &&
                     p.peerEngine.empty() && others.empty();
  // The word is raised to the launch's blocks, the count of claims[kDoneWord] its last
  // block sees (and zeroes); cleared here first, so only this launch's raise ends the wait.
  const uint32_t doneTarget = raise ? static_cast<uint32_t>(p.parts[0].spec.blocks) : 0;
  // A repeated eager plan that is one small LL kernel and nothing else replays it from a
  // graph (LaunchGraph, MCCL_LAUNCH_GRAPH_BYTES).
  if (graph != nullptr && !(launchGraphs(p) && !capturing && others.empty())) graph = nullptr;
  if (raise && !capturing) *doneHost_ = 0;
  auto setDone = [&](DevComm* c) { c->doneTarget = doneTarget; };
  MCCL_CHECK(beforeLaunch(stream, capturing));
  const uint64_t tLaunch = p.ops.front().enqueueNs ? steadyNs() : 0;
  uint64_t tRuntime = 0;
  for (const GpuPlan::Copy& c : p.copies)
    CUDA_TRY(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDefault, stream), "cudaMemcpyAsync");
  // A user's Sends and Recvs on the copy engines: beside the kernels, on a side stream
  // forked here and joined after them (ipc_transport/p2p_engine.h).
  MCCL_CHECK(peers_.launch(p.peerEngine, stream));
  // A rank's copies to itself on the copy engines, beside the kernels: after what came
  // before on the stream, and before what comes after (GpuPlan::selfCopies).
  if (!p.selfCopies.empty()) {
    MCCL_CHECK(lanes_.forkFrom(comm_, stream, 1));
    for (const GpuPlan::Copy& c : p.selfCopies)
      CUDA_TRY(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, lanes_.side[0]),
               "cudaMemcpyAsync(to itself)");
  }
  for (const GpuPlan::LaunchPart& part : p.parts) {
    const char* err = nullptr;
    ncclResult_t r;
    // The launch of args (tinyBytes: the bytes set of a TinyArgs, LeanOneArgs or LeanTwoArgs, which the
    // plan's graph may replay); MCCL_PROFILE: the runtime's own part.
    auto timed = [&](const void* args, size_t tinyBytes = 0) {
      const uint64_t t0 = tLaunch ? steadyNs() : 0;
      ncclResult_t rc;
      cudaError_t ge = cudaSuccess;
      bool made = false;
      if (tinyBytes != 0 && graph != nullptr && graph->replay(part, args, tinyBytes, stream, &ge, &made)) {
        if (made) graphsMade_.fetch_add(1, std::memory_order_relaxed);
        if (ge == cudaSuccess) graphReplays_.fetch_add(1, std::memory_order_relaxed);
        else err = cudaGetErrorString(ge);
        rc = ge == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
      } else if (part.func) {
        const CUresult cr = driverCalls().launchKernel(part.func, static_cast<unsigned>(part.spec.blocks),
                                                       static_cast<unsigned>(part.spec.threads), args, stream,
                                                       part.pdl);
        if (cr != CUDA_SUCCESS) err = driverCalls().describe(cr);
        rc = cr == CUDA_SUCCESS ? ncclSuccess : ncclUnhandledCudaError;
      } else {
        rc = launchKernel(part.spec, args, stream, &err);
      }
      if (t0) tRuntime += steadyNs() - t0;
      return rc;
    };
    if (part.spec.large) {
      auto args = std::make_unique<KernelArgs<kLargeLaunch>>();
      fillArgs(args.get(), hComm_, part.queues.empty() ? p.queues : part.queues, part.works);
      r = timed(args.get());
    } else if (part.spec.leanOne) {
      LeanOneArgs args;
      args.comm = hComm_;
      args.works[0] = part.works[0];
      setDone(&args.comm);
      r = timed(&args, LaunchGraph::usedBytes(args));
    } else if (part.spec.leanTwo) {
      LeanTwoArgs args;
      std::memset(&args, 0, sizeof args);  // a lone work's second: no channels; bytes compared whole
      args.comm = hComm_;
      for (size_t i = 0; i < part.works.size() && i < 2; ++i) {
        args.first[i] = part.spec.leanFirst[i];
        args.works[i] = part.works[i];
      }
      setDone(&args.comm);
      r = timed(&args, LaunchGraph::usedBytes(args));
    } else if (part.spec.tiny) {
      TinyArgs args;
      fillArgs(&args, hComm_, part.queues.empty() ? p.queues : part.queues, part.works);
      setDone(&args.comm);
      r = timed(&args, LaunchGraph::usedBytes(args));
    } else {
      KernelArgs<kSmallLaunch> args;
      fillArgs(&args, hComm_, part.queues.empty() ? p.queues : part.queues, part.works);
      setDone(&args.comm);
      r = timed(&args);
    }
    if (r != ncclSuccess) return MCCL_ERR(r, comm_, "kernel launch failed: %s", err ? err : "?");
  }
  if (!p.selfCopies.empty()) MCCL_CHECK(lanes_.joinInto(comm_, stream, 1));
  if (raise) {
    cw->armed = false;
    cw->taken = true;
    cw->word = doneHost_;
    cw->value = doneTarget;
  }
  MCCL_CHECK(launchDirect(comm_, hComm_, p.direct, launchThreads(), stream));
  MCCL_CHECK(launchCopyEngines(comm_, hComm_, p.engine, p.engineP2p, p.engineP2pOps, &lanes_, stream, capturing));
  if (!p.peerEngine.empty()) MCCL_CHECK(peers_.join(stream));
  if (!p.engine.empty() && comm_->sym && comm_->sym->ceSync()) ceSym_.store(comm_->sym.get(), std::memory_order_release);
  if ((!p.engine.empty() || !p.peerEngine.empty()) && !memOpsWatched_.exchange(true)) watchMemOpWaits(this);
  const uint64_t tKernel = tLaunch ? steadyNs() : 0;
  if (!capturing) {
    const OpDesc& first = p.ops.front();
    noteLaunch({p.ops.size(), first.kind, first.seq, first.count, first.datatype});
  }
  MCCL_CHECK(afterLaunch(stream, capturing));
  for (size_t i = 0; i < others.size(); ++i) {
    CUDA_TRY(cudaEventRecord(events.v[i], stream), "cudaEventRecord");
    CUDA_TRY(cudaStreamWaitEvent(others[i], events.v[i], 0), "cudaStreamWaitEvent");
  }
  if (tLaunch) profile(p.ops.front().enqueueNs, planStart, planEnd, tLaunch, tKernel, tRuntime, steadyNs());
  return ncclSuccess;
}

// Lone eager operations, or a group's on this communicator alone, that repeat a plan of
// the cache: no planning, no group bookkeeping, no connection check (the plan's connections
// were ready when it first launched).
bool GpuDataPath::runCached(const OpDesc* ops, size_t n, ncclResult_t* result) {
  if (!cacheOn_ || n == 0 || knobsGeneration() != cacheKnobs_) return false;
  const uint64_t symGen = comm_->sym ? comm_->sym->generation() : 0;
  CachedPlan* hit = nullptr;
  for (CachedPlan& c : cache_) {
    if (!c.valid || c.symGen != symGen || c.plan.ops.size() != n) continue;
    size_t i = 0;
    while (i < n && samePlan(c.plan.ops[i], ops[i])) ++i;
    if (i == n) {
      hit = &c;
      break;
    }
  }
  if (hit == nullptr || (hit->plan.selfPaired && selfBacklog_ != 0)) return false;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && ops[i].stream == ops[i - 1].stream) continue;
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(ops[i].stream, &st) != cudaSuccess || st != cudaStreamCaptureStatusNone) return false;
  }
  *result = asyncStatus();
  if (*result != ncclSuccess) return true;
  for (size_t i = 0; i < n; ++i) {
    hit->plan.ops[i].seq = ops[i].seq;
    hit->plan.ops[i].enqueueNs = ops[i].enqueueNs;
  }
  for (const GpuPlan::PlainDirect& pd : hit->plan.plainDirect)
    offerPlainBuffers(comm_, hit->plan.ops[pd.op], false, &hit->plan.direct[pd.work]);
  ++cacheHits_;
  selfBacklog_ += hit->plan.selfBacklog;
  *result = launch(hit->plan, 0, 0, &hit->graph);
  return true;
}

// After the eager launch of a new plan: the plan joins the cache (the oldest entry leaves).
// Dumps and TUNING lines are printed per call, so not while either is on.
void GpuDataPath::remember(GpuPlan&& p) {
  if (!cacheOn_ || p.ops.empty() || p.ops.size() > static_cast<size_t>(kPlanCacheOps) || p.capturing ||
      p.userBuffers || p.meets)
    return;
  if (knobBool(Knob::DumpSchedule) || (comm_->rank == 0 && logEnabled(LogLevel::Info, kLogTuning))) return;
  if (knobsGeneration() != cacheKnobs_) {
    for (CachedPlan& c : cache_) c.valid = false;
    cacheKnobs_ = knobsGeneration();
  }
  CachedPlan& c = cache_[cacheNext_];
  cacheNext_ = (cacheNext_ + 1) % kPlanCache;
  c.graph.reset();
  c.plan = std::move(p);
  c.symGen = comm_->sym ? comm_->sym->generation() : 0;
  c.valid = true;
}

ncclResult_t createGpuDataPath(ncclComm* comm, std::unique_ptr<DataPath>* out) {
  // Peers import this rank's outputs through it (user_buffers.h); once per process.
  if (knobInt(Knob::UserBuffers) > 0) startImportService();
  out->reset(new GpuDataPath(comm));
  return ncclSuccess;
}

}  // namespace mccl
