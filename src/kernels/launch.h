// Host entry to the kernels (implemented in coll_kernel.cu).
#pragma once

#include "kernels/dev_work.h"
#include "nccl.h"

namespace mccl {

constexpr int kMaxThreads = 512;  // launch bounds: 128 registers a thread

// args points to a KernelArgs<kLargeLaunch> when large, else KernelArgs<kSmallLaunch>.
ncclResult_t launchCollKernel(const void* args, bool large, int blocks, int threads, cudaStream_t stream,
                              const char** error);

}  // namespace mccl
