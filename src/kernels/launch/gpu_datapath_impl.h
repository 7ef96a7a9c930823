// The GPU data path's two classes, shared by its two files: GpuDataPath (per
// communicator: the IPC transport, the device state every launch carries, the plan cache,
// launches and their completion; gpu_datapath.cc) and GpuWork (one submitted group: planned
// at submit, launched once its peers are connected; gpu_work.cc). Private to src/kernels.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <atomic>
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
#include "ipc_transport/p2p_engine.h"
#include "ipc_transport/ipc.h"
#include "ipc_transport/mem_ops.h"
#include "ipc_transport/user_buffers.h"
#include "kernels/plan/direct_plan.h"
#include "kernels/launch/driver_launch.h"
#include "kernels/plan/gpu_plan.h"
#include "kernels/work/prof_channels.h"
#include "kernels/launch/launch.h"
#include "kernels/launch/launch_fn.h"
#include "kernels/launch/launch_graph.h"
#include "kernels/launch/gpu_datapath.h"

namespace mccl {

#define CUDA_TRY(call, what) MCCL_CUDA_TRY(comm_, call, what)

constexpr int kGpuMaxChannels = 128;

class GpuDataPath;

// The host-mapped flag blocks of GPU communicators (gpu_datapath.cc hostFlagBlocks()).
class HostFlagBlocks {
 public:
  static constexpr size_t kBlockBytes = 64;
  static constexpr size_t kChunkBytes = 4096;
  ncclResult_t get(ncclComm* comm, int32_t** out);  // a block, not cleared
  void put(int32_t* block);

 private:
  std::mutex mu_;
  std::vector<int32_t*> free_;
  std::vector<void*> chunks_;  // pinned, mapped, portable; never freed
};
HostFlagBlocks& hostFlagBlocks();

// Loads every kernel of the library on device dev, once per process (gpu_datapath.cc).
void preloadKernels(int dev);

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
  bool selfCopyEngine(size_t bytes) const;
  void cutForEngines();
  void markUserBuffers(const OpDesc& op, const Schedule& s, DevWork* w, bool bothWays);
  ncclComm* comm_;
  GpuDataPath* dp_;
  GpuPlan p_;
  uint64_t planNs_[2] = {0, 0};  // MCCL_PROFILE: init's start and end
  std::chrono::steady_clock::time_point start_;
};

class GpuDataPath : public DataPath, private MemOpWatched {
 public:
  explicit GpuDataPath(ncclComm* comm) : DataPath(comm), ipc_(comm) {}
  ~GpuDataPath() override;

  ncclResult_t prepare(PeerInfo* mine) override {
    CudaDeviceGuard guard(comm_->cudaDev);
    return ipc_.prepare(mine, !comm_->bootstrap->allRanksInProcess());
  }

  ncclResult_t setup() override;

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
  // Launches a planned group on its first stream (eager, or into the graph being captured);
  // graph: the launch graph of the plan's cache entry (a repeat, runCached), else null.
  ncclResult_t launch(const GpuPlan& p, uint64_t planStart, uint64_t planEnd, LaunchGraph* graph = nullptr);
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
    // The copy engines' barriers wait in the stream, where no abort flag is read.
    if (comm_->sym) comm_->sym->releaseCeWaits();
    peers_.release();
  }
  void peerLost() override { abort(); }

  // The copy engines' waits, watched by the host from the first launch that has any
  // (mem_ops.h MemOpWatched): the windows' barriers, then a pair's Send/Recv words.
  uint64_t memOpWaitToken(int* peer) override {
    SymState* sym = ceSym_.load(std::memory_order_acquire);
    const uint64_t t = sym ? sym->ceWaitingAt(peer) : 0;
    if (t) return t << 1;
    const uint64_t q = peers_.waitingAt(peer);
    return q ? (q << 1 | 1) : 0;
  }
  void memOpWaitTimedOut(int peer, double seconds) override;

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

  ncclResult_t asyncStatus() override;

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
  void printKernelProfile(const unsigned long long* p) const;

  IpcTransport& ipc() { return ipc_; }
  CopyEngineLanes* copyLanes() { return &lanes_; }
  PeerEngines& peerEngines() { return peers_; }
  const DevComm& devCommHost() const { return hComm_; }
  // The device's ring tables (null: the identity ring) and nodeFirst (null: none).
  const int32_t* devRing() const { return ringEntries_ ? dRing_ : nullptr; }
  const int32_t* devRingPos() const { return ringEntries_ ? dRing_ + ringEntries_ / 2 : nullptr; }
  const int32_t* devNodeFirst() const { return comm_->topo.nodeFirst().empty() ? nullptr : dRing_ + ringEntries_; }

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
  void launchGraphCounters(uint64_t* made, uint64_t* replayed) const override {
    *made = graphsMade_.load(std::memory_order_relaxed);
    *replayed = graphReplays_.load(std::memory_order_relaxed);
  }

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
  ncclResult_t waitLast(double seconds);

  IpcTransport ipc_;
  DevComm hComm_{};  // passed by value in every launch
  static constexpr size_t kHostFlagBytes = HostFlagBlocks::kBlockBytes;
  int32_t* dRing_ = nullptr;
  size_t ringBytes_ = 0;
  size_t ringEntries_ = 0;  // 2 N with ring tables, 0 for the identity ring
  uint32_t* claims_ = nullptr;  // DevComm::claims
  std::vector<void*> scratch_;  // the last is the largest
  size_t scratchBytes_ = 0, scratchTotal_ = 0;
  int32_t* hostFlags_ = nullptr;
  std::atomic<SymState*> ceSym_{nullptr};   // the windows of the first copy-engine barriers
  std::atomic<bool> memOpsWatched_{false};  // watchMemOpWaits(this) done
  // The completion word of launches a waiting host asked to raise it (core/completion.h):
  // word kDoneFlagWord of the flag block.
  volatile uint32_t* doneHost_ = nullptr;
  CopyEngineLanes lanes_;  // side streams of the copy-engine path (direct_plan.h)
  PeerEngines peers_{comm_};  // a user's Send/Recv on the copy engines (p2p_engine.h)
  int64_t selfBacklog_ = 0;
  // The plans of the last eager launches (runCached, remember), valid while the knobs and
  // the symmetric windows they were made under stay.
  struct CachedPlan {
    bool valid = false;
    uint64_t symGen = 0;
    GpuPlan plan;
    LaunchGraph graph;  // its eager launch replayed (MCCL_LAUNCH_GRAPH_BYTES)
  };
  static constexpr int kPlanCache = 8;       // plans
  static constexpr int kPlanCacheOps = 64;   // operations of a plan the cache keeps
  CachedPlan cache_[kPlanCache];
  int cacheNext_ = 0;
  const bool cacheOn_ = knobBool(Knob::PlanCache);
  uint64_t cacheKnobs_ = knobsGeneration();
  uint64_t cacheHits_ = 0;
  std::atomic<uint64_t> graphsMade_{0}, graphReplays_{0};  // launchGraphCounters
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

}  // namespace mccl
