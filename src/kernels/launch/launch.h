// Host entry to the kernels (implemented in coll_kernel.cu).
#pragma once

#include <cuda_runtime.h>

#include "kernels/work/dev_work.h"
#include "nccl.h"

namespace mccl {

constexpr int kMaxThreads = 512;  // launch bounds: 128 registers a thread

// Which kernel a launch uses. Generic runs every protocol, for works that reduce one type
// (any operator; `type`) or none (reduces false): a group whose works reduce several types
// is launched once per type. The LL-family kernels are compiled for reductions of one type
// (LlReduce: any operator, chosen per work at run time) or for data movement only (LlCopy),
// for one protocol (every work's: LL or LL128), and take KernelArgs<kSmallLaunch>. The
// Simple kernels (reduces: of `type`, else data movement only) run launches of Simple ring,
// chain and point-to-point works (simpleKernelFits) and take KernelArgs<kSmallLaunch>.
enum class LaunchKind : uint8_t { Generic, LlReduce, LlCopy, Simple };

struct LaunchSpec {
  LaunchKind kind = LaunchKind::Generic;
  bool large = false;    // Generic: args is a KernelArgs<kLargeLaunch>, else <kSmallLaunch>
  bool tiny = false;     // LlReduce, LlCopy: args is a TinyArgs, else KernelArgs<kSmallLaunch>
  bool leanOne = false;  // tiny, and the lean LL kernel of one work runs it (leanOneLaunch):
                         // args is a LeanOneArgs
  bool leanTwo = false;  // tiny, not leanOne, and the lean LL kernel's two-work form runs it
                         // (leanTwoLayout): args is a LeanTwoArgs, first blocks leanFirst
  int32_t leanFirst[2] = {0, 0};
  bool ll128 = false;    // LlReduce, LlCopy: every work is LL128 (else every work is LL)
  bool reduces = false;  // Generic, Simple: some work reduces (type)
  bool unaligned = false;  // Simple: some work's data is not all 16-byte aligned (simpleWorkUnaligned)
  bool channelBlocks = false;  // block i runs channel i (queue i's channel is i: the lean LL
                               // kernel of one work reads no queue, llLeanOne)
  int type = 0;          // the ncclDataType_t of every reducing work
  int blocks = 0;
  int threads = 0;
};

ncclResult_t launchKernel(const LaunchSpec& spec, const void* args, cudaStream_t stream, const char** error);

// The largest per-thread stack (local memory) of the kernels, from the CUDA runtime.
size_t kernelStackBytesMax();
size_t llKernelStackBytesMax();

// The LL kernels (ll_kernel.cu); launchKernel calls it for LlReduce and LlCopy (args: a
// LeanOneArgs when spec.leanOne, a LeanTwoArgs when spec.leanTwo, a TinyArgs when spec.tiny,
// else a KernelArgs<kSmallLaunch>).
void launchLlKernel(const LaunchSpec& spec, const void* args, cudaStream_t stream);
// Whether a tiny launch of these works runs the lean LL kernel of one work, whose parameters
// are a LeanOneArgs (host side; spec.channelBlocks set).
bool leanOneLaunch(const LaunchSpec& spec, const DevWork* works, int nworks);
// Whether the lean LL kernel takes a tiny launch of these works at all (its lines a thread
// within its forms'): in its one-work form (leanOneLaunch) or its two-work form, where the
// group's queues allow it (leanTwoLayout, gpu_plan.h).
bool leanLlLaunch(const LaunchSpec& spec, const DevWork* works, int nworks);

// The Simple kernels (simple_kernel.cuh): whether they run a work (host side, gpu_plan.cc),
// their launch (args: a KernelArgs<kSmallLaunch>) and their largest stack.
bool simpleKernelFits(const DevWork& w);
// Whether a work of the Simple kernel moves data that is not all 16-byte aligned: its
// buffers, or a ring AllGather's or ReduceScatter's blocks (count a rank) at offsets that
// are no multiple of 16 bytes. Such launches run the kernels compiled with wide unaligned
// paths (simple_kernel.cuh).
bool simpleWorkUnaligned(const DevWork& w);
void launchSimpleKernel(const LaunchSpec& spec, const void* args, cudaStream_t stream);
size_t simpleKernelStackBytesMax();

}  // namespace mccl
