// Which kernel function a launch runs, for launching through the driver (gpu_datapath.cc:
// cuLaunchKernel on the CUfunction of driverFunction costs the host less than the
// runtime's launch of the same kernel; bench/micro/launch_args.cu). Kept out of launch.h,
// which every kernel source includes.
#pragma once

#include "kernels/launch/launch.h"

namespace mccl {

// The host-side handle (the kernel's symbol) of the kernel launchKernel runs for spec and
// the launch's works: Generic in coll_kernel_copy.cu, LlReduce and LlCopy (llKernelFunction)
// in ll_kernel.cu, Simple (simpleKernelFunction) in simple_kernel.cu (kernels in simple_kernel.cuh). Its one parameter is the launch's args struct, by value.
const void* kernelFunction(const LaunchSpec& spec, const DevWork* works, int nworks);
const void* llKernelFunction(const LaunchSpec& spec, const DevWork* works, int nworks);
const void* simpleKernelFunction(const LaunchSpec& spec);

// Whether the kernel launchKernel runs for spec waits for the previous grid on the stream
// before its first dependent access (kernels/primitives/grid_dep.cuh), so that the driver may start it
// before that grid ends (GpuPlan::LaunchPart::pdl): the LL-family and Simple kernels, when
// device dev runs their sm_90 code (its current context need not be dev's). Not the generic
// kernel.
bool kernelWaitsForGrid(const LaunchSpec& spec, int dev);

}  // namespace mccl
