// Host entry to the kernels (implemented in coll_kernel.cu).
#pragma once

#include <cuda_runtime.h>

#include "kernels/dev_work.h"
#include "nccl.h"

namespace mccl {

constexpr int kMaxThreads = 512;  // launch bounds: 128 registers a thread

// Which kernel a launch uses. Generic runs any mix of protocols, types and operators;
// the LL kernels are compiled for sums of one type (LlSum) or for data movement only
// (LlCopy), and take KernelArgs<kSmallLaunch>.
enum class LaunchKind : uint8_t { Generic, LlSum, LlCopy };

struct LaunchSpec {
  LaunchKind kind = LaunchKind::Generic;
  bool large = false;  // Generic: args is a KernelArgs<kLargeLaunch>, else <kSmallLaunch>
  int type = 0;        // LlSum: the ncclDataType_t of every reducing work
  int blocks = 0;
  int threads = 0;
};

ncclResult_t launchKernel(const LaunchSpec& spec, const void* args, cudaStream_t stream, const char** error);

// The LL kernels (ll_kernel.cu); launchKernel calls it for LlSum and LlCopy.
void launchLlKernel(const LaunchSpec& spec, const KernelArgs<kSmallLaunch>& args, cudaStream_t stream);

}  // namespace mccl
