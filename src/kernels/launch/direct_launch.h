// Host entry to the direct kernels (direct_kernel.cu): collectives read and written in place.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/work/direct.h"
#include "nccl.h"

namespace mccl {

struct DirectLaunch {
  bool small = false;    // args is a DirectArgs<kDirectSmallLaunch>, else <kDirectLaunch>
  bool reduces = false;  // the works reduce type (else they only move data)
  int type = 0;
  int blocks = 0;
  int threads = 0;
};

ncclResult_t launchDirectKernel(const DirectLaunch& l, const void* args, cudaStream_t stream, const char** error);

// The largest per-thread stack of the direct kernels (loading them, as kernelStackBytesMax).
size_t directKernelStackBytesMax();

}  // namespace mccl
