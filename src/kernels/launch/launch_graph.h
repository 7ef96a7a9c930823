// An eager launch that repeats, replayed from a CUDA graph of its one kernel
// (MCCL_LAUNCH_GRAPH_BYTES; GpuDataPath::launch, the plans of its cache).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>

#include "core/cuda_guard.h"
#include "kernels/launch/launch_fn.h"
#include "kernels/plan/gpu_plan.h"
#include "kernels/work/dev_work.h"

namespace mccl {

// Much of a small eager call is the host's, and the driver's kernel launch is the larger
// part of that (MCCL_PROFILE, one H100: 3.1 us of an 8-byte AllReduce's 4.87 in
// cudaGraphLaunch or cuLaunchKernel, figures below). A plan of the cache
// (GpuDataPath::runCached) whose launch is one small LL kernel (TinyArgs, LeanOneArgs,
// LeanTwoArgs) and nothing else launches the same kernel with the same parameters each time
// it repeats on the same stream: from its kAlike-th such launch in a row the plan replays a
// graph of that one kernel instead, made then. The replay runs what the launch would (the parameters
// are the launch's bytes; the LL kernels keep their state in device memory, so replays and
// launches follow each other on a communicator, as in libmccl_mpi's replays), ordered on the
// stream as the launch is, but without the overlap with the kernel before it that
// programmatic dependent launch gives (launches only), which is worth more: one H100, two
// processes under MPS, back-to-back eager 8-byte AllReduce with that overlap (MCCL_PDL=2)
// 3.49 us a call launched against 4.54 replayed; without it 4.87 launched against 4.51
// replayed (Broadcast 4.22 against 3.89, Send/Recv 4.55 against 4.29; cudaGraphLaunch took
// the host 3.1 us a call where cuLaunchKernel took 3.55; bench/results/gpu-1x-2026-12-07d).
// So only launches without the overlap replay (GpuDataPath's launchGraphs): GPUs before
// sm_90, MCCL_PDL=0, ranks sharing a GPU. Launches with other parameters or another stream
// start the count again (the graph goes). One per plan of the cache, used under the
// communicator's launch order (one thread at a time).
class LaunchGraph {
 public:
  static constexpr int kAlike = 2;  // launches alike in a row before the graph is made

  LaunchGraph() = default;
  LaunchGraph(const LaunchGraph&) = delete;
  LaunchGraph& operator=(const LaunchGraph&) = delete;
  ~LaunchGraph() { reset(); }

  // Forgets the launch and destroys its graph (a replay still running ends first: CUDA
  // frees an executable graph in flight when it completes). A plan whose graph could not be
  // made keeps launching (never_ stays): it would fail the same way again.
  void reset() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
    alike_ = 0;
  }

  // Runs the plan's one launch (part, with args) on stream from the graph where it repeats:
  // true when it did (*err: the replay's result; *made: the graph was made for it), false
  // when the caller launches the kernel. The kernel and its blocks are the plan's (the graph
  // goes with it: GpuDataPath::remember).
  // args: the launch's parameters (a TinyArgs, LeanOneArgs or LeanTwoArgs: part.spec), of which
  // bytes are set (usedBytes).
  bool replay(const GpuPlan::LaunchPart& part, const void* args, size_t bytes, cudaStream_t stream, cudaError_t* err,
              bool* made) {
    *made = false;
    if (!same(args, bytes, stream)) {
      reset();
      stream_ = stream;
      bytes_ = bytes < sizeof args_ ? bytes : sizeof args_;
      std::memcpy(args_, args, bytes_);
      alike_ = 1;
      return false;
    }
    if (exec_ == nullptr) {
      if (never_ || ++alike_ < kAlike) return false;
      if (!make(part)) {
        never_ = true;  // the kernel launches as before
        return false;
      }
      *made = true;
    }
    *err = cudaGraphLaunch(exec_, stream);
    return true;
  }

  // The parameters' bytes a launch sets (fillArgs: the works past nworks are not).
  static size_t usedBytes(const TinyArgs& a) {
    return offsetof(TinyArgs, works) + sizeof(DevWork) * static_cast<size_t>(a.nworks < TinyArgs::kWorks ? a.nworks : TinyArgs::kWorks);
  }
  static size_t usedBytes(const LeanOneArgs&) { return sizeof(LeanOneArgs); }
  static size_t usedBytes(const LeanTwoArgs&) { return sizeof(LeanTwoArgs); }

 private:
  bool same(const void* args, size_t bytes, cudaStream_t stream) const {
    return alike_ > 0 && stream == stream_ && bytes == bytes_ && std::memcmp(args, args_, bytes) == 0;
  }

  // The graph of the one kernel node, uploaded to the stream. Relaxed: another thread may be
  // capturing in the global mode (no call here is one it forbids, but the mode is kept out).
  bool make(const GpuPlan::LaunchPart& part) {
    CaptureModeRelaxed relaxed;
    cudaGraph_t g = nullptr;
    void* params[] = {args_};
    cudaKernelNodeParams np = {};
    np.func = const_cast<void*>(kernelFunction(part.spec, part.works.data(), static_cast<int>(part.works.size())));
    np.gridDim = dim3(static_cast<unsigned>(part.spec.blocks));
    np.blockDim = dim3(static_cast<unsigned>(part.spec.threads));
    np.kernelParams = params;
    cudaGraphNode_t node = nullptr;
    bool ok = np.func != nullptr && cudaGraphCreate(&g, 0) == cudaSuccess &&
              cudaGraphAddKernelNode(&node, g, nullptr, 0, &np) == cudaSuccess &&
              cudaGraphInstantiate(&exec_, g, 0) == cudaSuccess;
    if (g != nullptr) cudaGraphDestroy(g);
    ok = ok && cudaGraphUpload(exec_, stream_) == cudaSuccess;
    if (!ok) {
      cudaGetLastError();  // (not sticky) the launch goes on without the graph
      if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
      exec_ = nullptr;
    }
    return ok;
  }

  cudaGraphExec_t exec_ = nullptr;
  cudaStream_t stream_ = nullptr;
  static_assert(sizeof(TinyArgs) >= sizeof(LeanTwoArgs) && sizeof(TinyArgs) >= sizeof(LeanOneArgs), "args_ holds each");
  alignas(8) unsigned char args_[sizeof(TinyArgs)];  // the launch's parameters (bytes_ of them set;
                                                     // the kernel reads its own type's size)
  size_t bytes_ = 0;
  int alike_ = 0;      // launches of these parameters in a row (0: none yet)
  bool never_ = false;  // making the graph failed once: launch
};

}  // namespace mccl
