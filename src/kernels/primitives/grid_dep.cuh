// Programmatic dependent launch (sm_90; MCCL_PDL, GpuPlan::LaunchPart::pdl): a launch the
// host makes with programmatic stream serialization may start while the kernel before it
// on the stream still runs; it must not read anything that kernel or the user wrote before
// gridDepWait, and lets the launch after it start with gridDepLaunchDependents.
//
// gridDepWait: until the previous grid on the stream has completed and its memory is
// visible (at once when this launch did not ask to overlap it). gridDepLaunchDependents:
// the next grid on the stream, if launched to overlap, may start once every block of this
// one has called it or ended (it waits for this one to complete before it reads anything).
// Both are nothing below sm_90, where kernelWaitsForGrid says no and the host never asks
// for the overlap.
#pragma once

namespace mccl {

__device__ __forceinline__ void gridDepWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void gridDepLaunchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The LL-family kernels' (short launches): wait, then let the next launch start at once, so
// its parameters and block start overlap this one. Triggered only once this kernel's own
// wait is over, so at most two launches of a stream hold SMs at a time (one running, one
// waiting), never a cascade of waiting ones.
__device__ __forceinline__ void gridDepWaitThenRelease() {
  gridDepWait();
  gridDepLaunchDependents();
}

}  // namespace mccl
