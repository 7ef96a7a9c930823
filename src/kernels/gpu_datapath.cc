// The data path of GPU communicators: plans a group's operations, connects the peers they
// need over CUDA IPC, and launches one kernel for the whole group on the user's stream.
#include "kernels/gpu_datapath.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "algorithms/schedule_dump.h"
#include "core/comm.h"
#include "core/cuda_guard.h"
#include "core/cuda_util.h"
#include "core/enqueue.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/planner.h"
#include "core/types.h"
#include "core/window.h"
#include "ipc_transport/ipc.h"
#include "kernels/direct_plan.h"
#include "kernels/driver_launch.h"
#include "kernels/gpu_plan.h"
#include "kernels/prof_channels.h"
#include "kernels/launch.h"
#include "kernels/launch_fn.h"

namespace mccl {
namespace {

#define CUDA_TRY(call, what) MCCL_CUDA_TRY(comm_, call, what)

constexpr int kGpuMaxChannels = 128;

class GpuDataPath;


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

class GpuWork : public Work {
 public:
  GpuWork(ncclComm* comm, GpuDataPath* dp) : comm_(comm), dp_(dp) {}
  ncclResult_t init(std::vector<OpDesc>& ops);
  ncclResult_t progress(bool* done) override;
  std::string describe() const override {
    return "connecting the GPU peers of " + std::to_string(p_.ops.size()) + " op(s)";
  }

 private:
  bool planCopies();
  std::vector<int> pairSelf(const std::vector<OpDesc>& ops, size_t slotBytes);
  ncclComm* comm_;
  GpuDataPath* dp_;
  GpuPlan p_;
  uint64_t planNs_[2] = {0, 0};  // MCCL_PROFILE: init's start and end
  std::chrono::steady_clock::time_point start_;
};

class GpuDataPath : public DataPath {
 public:
  explicit GpuDataPath(ncclComm* comm) : DataPath(comm), ipc_(comm) {}
  ~GpuDataPath() override {
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
    if (lastEvent_) {
      // Kernels still running use what is freed below: they end (or were aborted) first.
      waitLast(static_cast<double>(knobInt(Knob::Timeout)));
      cudaEventDestroy(lastEvent_);
    }
    lanes_.release();
    if (dRing_) cudaFree(dRing_);
    if (claims_) cudaFree(claims_);
    for (void* s : scratch_) cudaFree(s);
    if (hostFlags_) cudaFreeHost(hostFlags_);
    comm_->mem.sub(MemKind::Tables, ringBytes_);
    if (claims_) comm_->mem.sub(MemKind::Tables, sizeof(uint32_t) * kClaimWords);
    comm_->mem.sub(MemKind::Scratch, scratchTotal_);
    if (hostFlags_) comm_->mem.sub(MemKind::HostMapped, kHostFlagBytes);
  }

  ncclResult_t prepare(PeerInfo* mine) override {
    CudaDeviceGuard guard(comm_->cudaDev);
    return ipc_.prepare(mine, !comm_->bootstrap->allRanksInProcess());
  }

  ncclResult_t setup() override {
    CudaDeviceGuard guard(comm_->cudaDev);
    if (knobInt(Knob::SharedGpu) > 0) preloadKernels(comm_->cudaDev);
    MCCL_CHECK(ipc_.setup(kGpuMaxChannels));
    for (int p = 0; p < comm_->nranks; ++p) comm_->gpuNet |= !ipc_.canReach(p);
    CUDA_TRY(cudaHostAlloc(&hostFlags_, kHostFlagBytes, cudaHostAllocMapped), "cudaHostAlloc(flags)");
    comm_->mem.add(MemKind::HostMapped, kHostFlagBytes);
    std::memset(hostFlags_, 0, kHostFlagBytes);
    int32_t* dFlags = nullptr;
    CUDA_TRY(cudaHostGetDevicePointer(&dFlags, hostFlags_, 0), "cudaHostGetDevicePointer");
    const int n = comm_->nranks;
    // ring, ringPos, nodeFirst
    const size_t nodeEntries = comm_->topo.nodeFirst().size();
    const std::vector<int32_t> ring = comm_->topo.ringVector(), ringPos = comm_->topo.ringPosVector();
    CUDA_TRY(cudaMalloc(&dRing_, sizeof(int32_t) * (2 * static_cast<size_t>(n) + nodeEntries)), "cudaMalloc(ring)");
    ringBytes_ = sizeof(int32_t) * (2 * static_cast<size_t>(n) + nodeEntries);
    comm_->mem.add(MemKind::Tables, ringBytes_);
    if (nodeEntries > 0)
      CUDA_TRY(cudaMemcpy(dRing_ + 2 * n, comm_->topo.nodeFirst().data(), sizeof(int32_t) * nodeEntries,
                          cudaMemcpyHostToDevice),
               "cudaMemcpy");
    CUDA_TRY(cudaMemcpy(dRing_, ring.data(), sizeof(int32_t) * n, cudaMemcpyHostToDevice), "cudaMemcpy");
    CUDA_TRY(cudaMemcpy(dRing_ + n, ringPos.data(), sizeof(int32_t) * n, cudaMemcpyHostToDevice),
             "cudaMemcpy");
    DevComm h;
    std::memset(&h, 0, sizeof h);
    h.rank = comm_->rank;
    h.nranks = n;
    h.maxChannels = kGpuMaxChannels;
    h.abortFlag = dFlags;
    h.error = dFlags + 1;
    h.errorPeer = dFlags + 2;
    int64_t timeout = knobInt(Knob::Timeout);
    h.timeoutNs = timeout > 0 ? static_cast<uint64_t>(timeout) * 1000000000ull : 0;
    h.fence = knobStr(Knob::GpuFence) == "sc" ? 1 : 0;
    int64_t slices = knobInt(Knob::GpuSlices);
    h.slices = static_cast<int32_t>(slices < 1 ? 1 : slices > 16 ? 16 : slices);
    h.ring = dRing_;
    h.ringPos = dRing_ + n;
    CUDA_TRY(cudaMalloc(&claims_, sizeof(uint32_t) * kClaimWords), "cudaMalloc(unit claims)");
    comm_->mem.add(MemKind::Tables, sizeof(uint32_t) * kClaimWords);
    CUDA_TRY(cudaMemset(claims_, 0, sizeof(uint32_t) * kClaimWords), "cudaMemset(unit claims)");
    h.claims = claims_;
    h.ringPosition = comm_->topo.ringPos(comm_->rank);
    h.ringPrev = comm_->topo.ringRank(h.ringPosition - 1);
    h.ringNext = comm_->topo.ringRank(h.ringPosition + 1);
    h.conns = ipc_.devConns();
    h.ctrl = ipc_.devCtrl();
    if (knobBool(Knob::Profile)) {
      CUDA_TRY(cudaMalloc(&devProf_, sizeof(unsigned long long) * kProfAllWords), "cudaMalloc(profile)");
      comm_->mem.add(MemKind::Tables, sizeof(unsigned long long) * kProfAllWords);
      CUDA_TRY(cudaMemset(devProf_, 0, sizeof(unsigned long long) * kProfAllWords), "cudaMemset(profile)");
      h.prof = devProf_;
    }
    hComm_ = h;
    CUDA_TRY(cudaEventCreateWithFlags(&lastEvent_, cudaEventDisableTiming), "cudaEventCreate");
    return ncclSuccess;
  }

  bool runAlone(const OpDesc& op, ncclResult_t* result) override { return runCached(&op, 1, result); }
  bool runGroupAlone(const std::vector<OpDesc>& ops, ncclResult_t* result) override {
    return runCached(ops.data(), ops.size(), result);
  }
  bool runCached(const OpDesc* ops, size_t n, ncclResult_t* result);
  // Sends to this rank minus Recvs from it that went through its connection to itself, over
  // every plan so far (GpuPlan::selfBacklog): a Send and a Recv of one group are paired
  // only while none is outstanding, so each Recv still takes the oldest Send's data.
  int64_t selfBacklog() const { return selfBacklog_; }
  void addSelfBacklog(int d) { selfBacklog_ += d; }
  // Launches a planned group on its first stream (eager, or into the graph being captured).
  ncclResult_t launch(const GpuPlan& p, uint64_t planStart, uint64_t planEnd);
  void remember(GpuPlan&& p);

  ncclResult_t submit(std::vector<OpDesc>& ops, std::unique_ptr<Work>* work) override {
    MCCL_CHECK(asyncStatus());
    std::unique_ptr<GpuWork> w(new GpuWork(comm_, this));
    MCCL_CHECK(w->init(ops));
    *work = std::move(w);
    return ncclSuccess;
  }

  ncclResult_t flush() override {
    CudaDeviceGuard guard(comm_->cudaDev);
    MCCL_CHECK(waitLast(static_cast<double>(knobInt(Knob::Timeout))));
    return asyncStatus();
  }

  void abort() override {
    if (hostFlags_) reinterpret_cast<volatile int32_t*>(hostFlags_)[0] = 1;
  }
  void peerLost() override { abort(); }

  std::string describeInFlight() const override {
    std::lock_guard<std::mutex> lock(launchMu_);
    if (!launched_) return "";
    if (cudaEventQuery(lastEvent_) != cudaErrorNotReady) return "";
    char what[192];
    std::snprintf(what, sizeof what, "kernel still running: %zu op(s) from %s seq %llu (%zu x %s)", last_.nops,
                  opKindName(last_.kind), static_cast<unsigned long long>(last_.seq), last_.count,
                  datatypeName(last_.type));
    return what;
  }
  // What the last eager launch ran (formatted only by a hang report).
  struct LaunchNote {
    size_t nops = 0;
    OpKind kind = OpKind::AllReduce;
    uint64_t seq = 0;
    size_t count = 0;
    ncclDataType_t type = ncclFloat32;
  };
  void noteLaunch(const LaunchNote& n) {
    std::lock_guard<std::mutex> lock(launchMu_);
    last_ = n;
  }

  ncclResult_t asyncStatus() override {
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
                                    "a kernel of rank %d waited longer than MCCL_TIMEOUT for rank %d (%s)",
                                    comm_->rank, peer, comm_->hosts.name(peer).c_str())
                         : MCCL_ERR(ncclRemoteError, comm_, "the communicator was aborted while a kernel ran");
    comm_->fail(r);
    return r;
  }

  // MCCL_PROFILE: host time of each launch, from the first operation's API call.
  // planStart/planEnd: GpuWork::init (0 when not stamped).
  // runtime: of the launch, the time inside the kernel launch calls (cudaLaunchKernel).
  void profile(uint64_t enqueueNs, uint64_t planStart, uint64_t planEnd, uint64_t beforeLaunch, uint64_t afterKernel,
               uint64_t runtime, uint64_t done) {
    if (!enqueueNs || ++profSeen_ <= kProfileWarmup) return;  // connection setup, module load
    prof_.n += 1;
    prof_.plan += beforeLaunch - enqueueNs;
    if (planStart && planEnd) {
      prof_.toPlan += planStart - enqueueNs;
      prof_.planning += planEnd - planStart;
    }
    prof_.launch += afterKernel - beforeLaunch;
    prof_.runtime += runtime;
    prof_.after += done - afterKernel;
  }

  // Per step of one block (thread 0), averaged over every block and step run.
  void printKernelProfile(const unsigned long long* p) const {
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
  }

  IpcTransport& ipc() { return ipc_; }
  CopyEngineLanes* copyLanes() { return &lanes_; }
  const DevComm& devCommHost() const { return hComm_; }
  const int32_t* devRing() const { return dRing_; }

  // Scratch of at least bytes (binomial Reduce: a chunk per channel and lane of the plan).
  // It grows with the plans that need it; a smaller one stays allocated until destroy, as
  // captured CUDA graphs may still use it.
  ncclResult_t scratch(size_t bytes, void** p) {
    if (bytes > scratchBytes_) {
      CudaDeviceGuard guard(comm_->cudaDev);
      CaptureModeRelaxed relaxed;
      void* s = nullptr;
      CUDA_TRY(cudaMalloc(&s, bytes), "cudaMalloc(scratch)");
      scratch_.push_back(s);
      scratchBytes_ = bytes;
      scratchTotal_ += bytes;
      comm_->mem.add(MemKind::Scratch, bytes);
    }
    *p = scratch_.back();
    return ncclSuccess;
  }

  size_t kernelStackBytes() const override { return kernelStackBytesMax(); }

  // Orders launches of this communicator across the user's streams (eager mode only).
  ncclResult_t beforeLaunch(cudaStream_t stream, bool capturing) {
    if (!capturing && launched_ && stream != lastStream_)
      CUDA_TRY(cudaStreamWaitEvent(stream, lastEvent_, 0), "cudaStreamWaitEvent");
    return ncclSuccess;
  }
  ncclResult_t afterLaunch(cudaStream_t stream, bool capturing) {
    if (capturing) return ncclSuccess;
    if (driverCalls().record) {
      const CUresult r = driverCalls().record(reinterpret_cast<CUevent>(lastEvent_), reinterpret_cast<CUstream>(stream));
      if (r != CUDA_SUCCESS)
        return MCCL_ERR(ncclUnhandledCudaError, comm_, "cuEventRecord: %s", driverCalls().describe(r));
    } else {
      CUDA_TRY(cudaEventRecord(lastEvent_, stream), "cudaEventRecord");
    }
    lastStream_ = stream;
    std::lock_guard<std::mutex> lock(launchMu_);
    launched_ = true;
    return ncclSuccess;
  }

 private:
  ncclResult_t waitLast(double seconds) {
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

  IpcTransport ipc_;
  DevComm hComm_{};  // passed by value in every launch
  static constexpr size_t kHostFlagBytes = 64;
  int32_t* dRing_ = nullptr;
  size_t ringBytes_ = 0;
  uint32_t* claims_ = nullptr;  // DevComm::claims
  std::vector<void*> scratch_;  // the last is the largest
  size_t scratchBytes_ = 0, scratchTotal_ = 0;
  int32_t* hostFlags_ = nullptr;
  CopyEngineLanes lanes_;  // side streams of the copy-engine path (direct_plan.h)
  int64_t selfBacklog_ = 0;
  // The plans of the last eager launches (runCached, remember), valid while the knobs and
  // the symmetric windows they were made under stay.
  struct CachedPlan {
    bool valid = false;
    uint64_t symGen = 0;
    GpuPlan plan;
  };
  static constexpr int kPlanCache = 8;       // plans
  static constexpr int kPlanCacheOps = 64;   // operations of a plan the cache keeps
  CachedPlan cache_[kPlanCache];
  int cacheNext_ = 0;
  const bool cacheOn_ = knobBool(Knob::PlanCache);
  uint64_t cacheKnobs_ = knobsGeneration();
  uint64_t cacheHits_ = 0;
  unsigned long long* devProf_ = nullptr;
  static constexpr uint64_t kProfileWarmup = 10;
  uint64_t profSeen_ = 0;
  cudaEvent_t lastEvent_ = nullptr;
  cudaStream_t lastStream_ = nullptr;
  bool launched_ = false;
  mutable std::mutex launchMu_;  // last_ is read by hang reports from other threads
  LaunchNote last_;
  struct {
    uint64_t n = 0, plan = 0, launch = 0, after = 0;
    uint64_t toPlan = 0, planning = 0;  // parts of plan: API call to GpuWork::init, and init
    uint64_t runtime = 0;               // part of launch: in the kernel launch calls
  } prof_;
};

// One rank: every collective but PreMulSum is a copy of its input (or nothing in place),
// and each Send to itself pairs with the Recv of the same place in call order. When the
// whole group is such copies, the copy engine does them at the memory's bandwidth (a
// memcpy node in a graph), as NCCL does; no kernel, no connection.
bool GpuWork::planCopies() {
  if (comm_->nranks != 1) return false;
  std::vector<const OpDesc*> sends, recvs;
  for (const OpDesc& op : p_.ops) {
    if (op.kind == OpKind::Send) sends.push_back(&op);
    else if (op.kind == OpKind::Recv) recvs.push_back(&op);
    else if (op.hasReduction() && op.red.kind == RedKind::PreMulSum) return false;
    else if (op.count > 0 && op.sendbuff != op.recvbuff)
      p_.copies.push_back(GpuPlan::Copy{op.recvbuff, op.sendbuff, op.bytes()});
  }
  if (sends.size() != recvs.size()) return false;
  for (size_t i = 0; i < sends.size(); ++i) {
    if (sends[i]->bytes() != recvs[i]->bytes()) return false;  // the kernel path reports it
    if (sends[i]->count > 0 && sends[i]->sendbuff != recvs[i]->recvbuff)
      p_.copies.push_back(GpuPlan::Copy{recvs[i]->recvbuff, sends[i]->sendbuff, sends[i]->bytes()});
  }
  return true;
}

// A rank's Sends to itself and Recvs from itself in one group (Gather's root, Scatter's
// root, AlltoAll's own block, a user's own pairs), matched in call order as NCCL matches
// them: where every pair has the same size on Simple, each Send's work copies its data
// straight into its Recv's buffer (DevWork::selfCopy) and the Recv has no work: one copy
// instead of two through the rank's FIFO to itself, and no block on the receiving side.
// partner[i]: for a paired Send the index of its Recv, for a paired Recv -2, else -1.
// Groups whose self operations do not pair one to one (or that find earlier Sends still in
// that FIFO) keep the connection, as before.
std::vector<int> GpuWork::pairSelf(const std::vector<OpDesc>& ops, size_t slotBytes) {
  std::vector<int> partner(ops.size(), -1);
  if (comm_->nranks < 2) return partner;
  std::vector<int> sends, recvs;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpDesc& op = ops[i];
    if (!op.isP2p() || op.root != comm_->rank) continue;
    (op.kind == OpKind::Send ? sends : recvs).push_back(static_cast<int>(i));
  }
  const int backlog = static_cast<int>(sends.size()) - static_cast<int>(recvs.size());
  bool pair = !sends.empty() && backlog == 0 && dp_->selfBacklog() == 0;
  for (size_t k = 0; pair && k < sends.size(); ++k) {
    const OpDesc& s = ops[static_cast<size_t>(sends[k])];
    pair = s.bytes() == ops[static_cast<size_t>(recvs[k])].bytes() &&
           choosePlan(comm_, s, slotBytes).proto == Proto::Simple;
  }
  if (pair) {
    for (size_t k = 0; k < sends.size(); ++k) {
      partner[static_cast<size_t>(sends[k])] = recvs[k];
      partner[static_cast<size_t>(recvs[k])] = -2;
    }
    p_.selfPaired = true;
  } else {
    p_.selfBacklog = backlog;
  }
  dp_->addSelfBacklog(p_.selfBacklog);
  return partner;
}

ncclResult_t GpuWork::init(std::vector<OpDesc>& ops) {
  if (!ops.empty() && ops.front().enqueueNs) planNs_[0] = steadyNs();  // MCCL_PROFILE
  p_.ops = ops;
  IpcTransport& ipc = dp_->ipc();
  const bool dump = knobBool(Knob::DumpSchedule);
  std::map<std::pair<int, int>, int> p2pQueue;
  int maxCh = 0;
  const bool copyOnly = planCopies();
  if (!copyOnly) p_.copies.clear();
  const std::vector<int> partner = copyOnly ? std::vector<int>() : pairSelf(p_.ops, ipc.slotBytes());
  // Sends and Recvs take units (one Simple launch for all of them, launchParts) on two
  // ranks, where a group's operations with the peer are the same number on both sides (each
  // Send meets a Recv), when they fit one launch; the operations with itself never do.
  size_t peerOps = 0;
  for (const OpDesc& op : p_.ops) peerOps += op.isP2p() && op.root != comm_->rank ? 1 : 0;
  const bool p2pUnits = comm_->nranks == 2 && peerOps <= static_cast<size_t>(kSmallLaunch);
  for (size_t oi = 0; oi < partner.size(); ++oi) {
    const OpDesc& op = p_.ops[oi];
    if (partner[oi] == -2) continue;  // a Recv from itself: its Send's work writes its buffer
    const bool selfCopy = partner[oi] >= 0;
    DirectWork dw;
    if (planDirect(comm_, op, &dw)) {
      const bool engines = dw.algo == kDirectCopyEngine;
      // Which direct path: copy engines, AllReduce one-shot or two-shot, or the one way of
      // the other collectives; in the dump's words and in the TUNING line's.
      const int kind = engines ? 0 : op.kind != OpKind::AllReduce ? 1 : dw.algo == kDirectOneShot ? 2 : 3;
      static const char* const kDumpName[] = {" (copy engines)", "", " (one-shot)", " (two-shot)"};
      static const char* const kTuningName[] = {"copy-engines", "direct", "direct-oneshot", "direct-twoshot"};
      if (dump)
        std::printf("[mccl rank %d] seq %llu %s: direct on symmetric windows%s, %d channel(s)\n", comm_->rank,
                    static_cast<unsigned long long>(op.seq), opKindName(op.kind), kDumpName[kind],
                    engines ? 0 : dw.nchannels);
      if (comm_->rank == 0 && logEnabled(LogLevel::Info, kLogTuning))
        INFO(kLogTuning, "%s: %zu Bytes -> Algo %s channels %d (%s)", opKindName(op.kind), op.bytes(),
             kTuningName[kind], engines ? 0 : dw.nchannels, engines ? "no SM moves data" : "symmetric windows");
      (engines ? p_.engine : p_.direct).push_back(dw);
      continue;
    }
    PlanChoice choice = choosePlan(comm_, op, ipc.slotBytes());
    choice.nchannels = std::min(choice.nchannels, ipc.maxChannels());
    DevWork w;
    std::memset(&w, 0, sizeof w);
    const Schedule hostView = makeSchedule(comm_, op, choice);  // host ring pointers
    w.s = hostView;
    w.s.ring = dp_->devRing();
    w.s.ringPos = dp_->devRing() + comm_->nranks;
    w.s.nodeFirst = comm_->topo.nodeFirst().empty() ? nullptr : dp_->devRing() + 2 * comm_->nranks;
    w.in = op.sendbuff;
    w.out = op.recvbuff;
    w.type = static_cast<uint8_t>(op.datatype);
    w.red = devRed(op.red.kind);
    w.premul = op.hasReduction() && op.red.kind == RedKind::PreMulSum;
    w.scalarBits = op.red.scalarBits;
    w.scalarPtr = op.red.scalarPtr;
    w.postDiv = op.red.kind == RedKind::SumPostDiv ? op.red.postDivisor : 0;
    w.proto = choice.proto == Proto::LL ? kProtoLl : choice.proto == Proto::LL128 ? kProtoLl128 : kProtoSimple;
    const bool llFamily = w.proto != kProtoSimple;
    if (w.proto == kProtoSimple && scratchElems(hostView) > 0)
      MCCL_CHECK(dp_->scratch(static_cast<size_t>(hostView.nchannels) * numLanes(hostView) *
                                  static_cast<size_t>(scratchElems(hostView)) * datatypeSize(op.datatype),
                              &w.scratch));
    if (selfCopy) {
      w.out = p_.ops[static_cast<size_t>(partner[oi])].recvbuff;
      w.selfCopy = 1;
    }
    w.units = takesUnits(w, ipc.slots(), comm_->gpuNet, p2pUnits) ? 1 : 0;
    if (dump) {
      if (selfCopy)
        std::printf("[mccl rank %d] seq %llu %s: to itself, copied into its Recv's buffer, %d channel(s)\n",
                    comm_->rank, static_cast<unsigned long long>(op.seq), opKindName(op.kind), hostView.nchannels);
      else if (llFamily)
        std::printf("[mccl rank %d] seq %llu %s: %s all pairs, %d channel(s)\n", comm_->rank,
                    static_cast<unsigned long long>(op.seq), opKindName(op.kind), w.proto == kProtoLl ? "LL" : "LL128",
                    hostView.nchannels);
      else
        std::printf("[mccl rank %d] seq %llu %s", comm_->rank, static_cast<unsigned long long>(op.seq),
                    dumpSchedule(hostView).c_str());
    }
    // What NCCL prints at NCCL_DEBUG_SUBSYS=TUNING (rank 0), so the two can be read side by
    // side (scripts/channels_table.py): the blocks (SMs) a size takes are the user's.
    if (comm_->rank == 0 && logEnabled(LogLevel::Info, kLogTuning))
      INFO(kLogTuning, "%s: %zu Bytes -> Algo %s proto %s channels %d threads %d", opKindName(op.kind), op.bytes(),
           llFamily ? "allpairs" : algoName(hostView.algo),
           w.proto == kProtoLl ? "LL" : w.proto == kProtoLl128 ? "LL128" : "SIMPLE", hostView.nchannels,
           launchThreads());
    const ConnClass cls = w.proto == kProtoLl     ? (op.isP2p() ? ConnClass::LlP2p : ConnClass::Ll)
                          : w.proto == kProtoLl128 ? (op.isP2p() ? ConnClass::Ll128P2p : ConnClass::Ll128)
                                                   : connClassOf(hostView.algo);
    if (op.isP2p()) {
      // Large messages to a peer are split over several channels, each its own queue
      // (block) and connection; both sides choose the same split from the size.
      bool send = op.kind == OpKind::Send;
      for (int c = 0; c < hostView.nchannels; ++c) {
        int64_t off, cnt;
        scheduleChannelRange(hostView, c, &off, &cnt);
        if (cnt > 0 && !selfCopy) MCCL_CHECK(ipc.need(ConnKey{op.root, c, cls, send}));
        int& have = p2pQueue[{op.root * 2 + (send ? 1 : 0), c}];
        if (have) continue;
        have = 1;
        DevQueue q{};
        q.channel = static_cast<int16_t>(c);
        q.peer = static_cast<int16_t>(op.root);
        q.send = send ? 1 : 0;
        p_.queues.push_back(q);
      }
    } else if (llFamily) {
      maxCh = std::max(maxCh, hostView.nchannels);
      if (op.count > 0)
        for (int c = 0; c < hostView.nchannels; ++c)
          for (int r = 0; r < comm_->nranks; ++r) {
            if (allPairsSendsTo(hostView, r)) MCCL_CHECK(ipc.need(ConnKey{r, c, cls, true}));
            if (allPairsRecvsFrom(hostView, r)) MCCL_CHECK(ipc.need(ConnKey{r, c, cls, false}));
          }
    } else {
      maxCh = std::max(maxCh, hostView.nchannels);
      if (op.count > 0 && hostView.nranks > 1) {
        for (int c = 0; c < hostView.nchannels; ++c)
          for (int lane = 0; lane < numLanes(hostView); ++lane) {
            int64_t steps = numSteps(hostView, c, lane);
            int64_t probe = hostView.algo == Algo::Ring && hostView.coll == Coll::AllReduce ? 2 * hostView.nranks - 1
                            : hostView.algo == Algo::Ring                                   ? hostView.nranks
                            : hostView.algo == Algo::Binomial ? binomialStepsPerChunk(hostView)
                                                              : 1;
            for (int64_t i = 0; i < steps && i < probe; ++i) {
              Step st = stepAt(hostView, c, lane, i);
              for (int k = 0; k < st.nrecv; ++k) MCCL_CHECK(ipc.need(ConnKey{st.recvPeer[k], c, cls, false}));
              for (int k = 0; k < st.nsend; ++k) MCCL_CHECK(ipc.need(ConnKey{st.sendPeer[k], c, cls, true}));
            }
          }
      }
    }
    p_.works.push_back(w);
  }
  for (int c = 0; c < maxCh; ++c) {
    DevQueue q{};
    q.channel = static_cast<int16_t>(c);
    q.peer = -1;
    p_.queues.push_back(q);
  }
  if (p_.works.size() > static_cast<size_t>(kLargeLaunch))
    return MCCL_ERR(ncclInvalidUsage, comm_,
                    "a group holds %zu operations on one GPU communicator; at most %d are supported",
                    p_.works.size(), kLargeLaunch);
  if (p_.queues.size() > static_cast<size_t>(kMaxQueues))
    return MCCL_ERR(ncclInvalidUsage, comm_, "a group needs %zu GPU queues; at most %d are supported",
                    p_.queues.size(), kMaxQueues);
  // Every operation of one launch runs in one stream order; mixing a captured stream with
  // an uncaptured one (or two captures) cannot be ordered.
  cudaStreamCaptureStatus first = cudaStreamCaptureStatusNone;
  for (size_t i = 0; i < p_.ops.size(); ++i) {
    cudaStreamCaptureStatus st;
    if (cudaStreamIsCapturing(p_.ops[i].stream, &st) != cudaSuccess)
      return MCCL_ERR(ncclInvalidArgument, comm_, "stream %p of operation %zu is not a valid CUDA stream",
                      static_cast<void*>(p_.ops[i].stream), i);
    if (i == 0) first = st;
    else if (st != first)
      return MCCL_ERR(ncclInvalidUsage, comm_,
                      "a group mixes streams that are being captured into a CUDA graph with streams that "
                      "are not; capture every stream of the group or none");
  }
  p_.capturing = first == cudaStreamCaptureStatusActive;
  {
    CudaDeviceGuard guard(comm_->cudaDev);  // the kernels' CUfunctions are the device's
    p_.parts = launchParts(p_.works, p_.queues.size());
  }
  start_ = std::chrono::steady_clock::now();
  if (planNs_[0]) planNs_[1] = steadyNs();
  return ncclSuccess;
}

ncclResult_t GpuDataPath::launch(const GpuPlan& p, uint64_t planStart, uint64_t planEnd) {
  const int blocks = static_cast<int>(p.queues.size());
  if (blocks == 0 && p.copies.empty() && p.direct.empty() && p.engine.empty()) return ncclSuccess;  // nothing moves
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
  MCCL_CHECK(beforeLaunch(stream, capturing));
  const uint64_t tLaunch = p.ops.front().enqueueNs ? steadyNs() : 0;
  uint64_t tRuntime = 0;
  for (const GpuPlan::Copy& c : p.copies)
    CUDA_TRY(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDefault, stream), "cudaMemcpyAsync");
  for (const GpuPlan::LaunchPart& part : p.parts) {
    const char* err = nullptr;
    ncclResult_t r;
    auto timed = [&](const void* args) {  // MCCL_PROFILE: the runtime's own part
      const uint64_t t0 = tLaunch ? steadyNs() : 0;
      ncclResult_t rc;
      if (part.func) {
        void* params[] = {const_cast<void*>(args)};
        const CUresult cr = driverCalls().launch(part.func, static_cast<unsigned>(part.spec.blocks), 1, 1,
                                                 static_cast<unsigned>(part.spec.threads), 1, 1, 0,
                                                 reinterpret_cast<CUstream>(stream), params, nullptr);
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
      fillArgs(args.get(), hComm_, p.queues, part.works);
      r = timed(args.get());
    } else if (part.spec.tiny) {
      TinyArgs args;
      fillArgs(&args, hComm_, p.queues, part.works);
      r = timed(&args);
    } else {
      KernelArgs<kSmallLaunch> args;
      fillArgs(&args, hComm_, p.queues, part.works);
      r = timed(&args);
    }
    if (r != ncclSuccess) return MCCL_ERR(r, comm_, "kernel launch failed: %s", err ? err : "?");
  }
  MCCL_CHECK(launchDirect(comm_, hComm_, p.direct, launchThreads(), stream));
  MCCL_CHECK(launchCopyEngines(comm_, hComm_, p.engine, &lanes_, stream));
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
  ++cacheHits_;
  selfBacklog_ += hit->plan.selfBacklog;
  *result = launch(hit->plan, 0, 0);
  return true;
}

// After the eager launch of a new plan: the plan joins the cache (the oldest entry leaves).
// Dumps and TUNING lines are printed per call, so not while either is on.
void GpuDataPath::remember(GpuPlan&& p) {
  if (!cacheOn_ || p.ops.empty() || p.ops.size() > static_cast<size_t>(kPlanCacheOps) || p.capturing) return;
  if (knobBool(Knob::DumpSchedule) || (comm_->rank == 0 && logEnabled(LogLevel::Info, kLogTuning))) return;
  if (knobsGeneration() != cacheKnobs_) {
    for (CachedPlan& c : cache_) c.valid = false;
    cacheKnobs_ = knobsGeneration();
  }
  CachedPlan& c = cache_[cacheNext_];
  cacheNext_ = (cacheNext_ + 1) % kPlanCache;
  c.plan = std::move(p);
  c.symGen = comm_->sym ? comm_->sym->generation() : 0;
  c.valid = true;
}

ncclResult_t GpuWork::progress(bool* done) {
  *done = false;
  IpcTransport& ipc = dp_->ipc();
  MCCL_CHECK(comm_->checkPeers());
  MCCL_CHECK(ipc.progress());
  if (!ipc.allReady()) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (s > bootstrapTimeoutSeconds())
      return MCCL_ERR(ncclRemoteError, comm_, "rank %d: connecting GPU peers took longer than %.0f s",
                      comm_->rank, bootstrapTimeoutSeconds());
    return ncclSuccess;
  }
  MCCL_CHECK(dp_->launch(p_, planNs_[0], planNs_[1]));
  *done = true;
  dp_->remember(std::move(p_));
  return ncclSuccess;
}

}  // namespace

ncclResult_t createGpuDataPath(ncclComm* comm, std::unique_ptr<DataPath>* out) {
  out->reset(new GpuDataPath(comm));
  return ncclSuccess;
}

}  // namespace mccl
