// The driver's kernel launch and event record, for the launches of an eager call
// (gpu_datapath.cc, direct_kernel.cu). Header-only: one DriverCalls per process.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>

#include "core/cuda_util.h"
#include "core/knobs.h"

namespace mccl {

// The driver's kernel launch and event record, reached through the runtime (mccl does not
// link libcuda): each costs the host less than the runtime's call for the same thing
// (bench/micro/launch_args.cu, one H100 host: a launch with 512 B of parameters 2.60
// against 2.83 us, and the event record after it 0.14 against 0.36 us). Null members
// (MCCL_DRIVER_LAUNCH=0, or a driver without them): the runtime's calls. launchEx, the
// launch with attributes, is what programmatic dependent launch needs (GpuPlan::LaunchPart::
// pdl); a driver without it launches without the overlap.
struct DriverCalls {
  using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void**, void**);
  using LaunchExFn = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
  using RecordFn = CUresult (*)(CUevent, CUstream);
  using ErrorFn = CUresult (*)(CUresult, const char**);
  LaunchFn launch = nullptr;
  LaunchExFn launchEx = nullptr;
  RecordFn record = nullptr;
  ErrorFn errorString = nullptr;

  // f on blocks x threads with its one by-value parameter at args; afterGrid (launchEx
  // present): with programmatic stream serialization, so it may start before the kernel
  // before it on the stream ends (it must wait for it on the device, grid_dep.cuh).
  CUresult launchKernel(CUfunction f, unsigned blocks, unsigned threads, const void* args, cudaStream_t stream,
                        bool afterGrid) const {
    void* params[] = {const_cast<void*>(args)};
    if (!afterGrid || launchEx == nullptr)
      return launch(f, blocks, 1, 1, threads, 1, 1, 0, reinterpret_cast<CUstream>(stream), params, nullptr);
    CUlaunchAttribute attr[1] = {};
    attr[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr[0].value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg = {};
    cfg.gridDimX = blocks;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = threads;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = reinterpret_cast<CUstream>(stream);
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return launchEx(&cfg, f, params, nullptr);
  }

  // The driver's sentence for r, or its number when the driver has none (once seen after a
  // timeout with ranks sharing a GPU: "cuEventRecord: unknown driver error").
  const char* describe(CUresult r) const {
    const char* s = nullptr;
    if (errorString != nullptr && errorString(r, &s) == CUDA_SUCCESS && s != nullptr) return s;
    thread_local char unknown[48];
    std::snprintf(unknown, sizeof unknown, "driver error %d (no description)", static_cast<int>(r));
    return unknown;
  }
};

inline const DriverCalls& driverCalls() {
  static const DriverCalls calls = [] {
    DriverCalls c;
    if (!knobBool(Knob::DriverLaunch)) return c;
    c.launch = reinterpret_cast<DriverCalls::LaunchFn>(cudaDriverFunction("cuLaunchKernel"));
    c.record = reinterpret_cast<DriverCalls::RecordFn>(cudaDriverFunction("cuEventRecord"));
    c.errorString = reinterpret_cast<DriverCalls::ErrorFn>(cudaDriverFunction("cuGetErrorString"));
    if (c.launch == nullptr || c.record == nullptr || c.errorString == nullptr) return DriverCalls{};
    c.launchEx = reinterpret_cast<DriverCalls::LaunchExFn>(cudaDriverFunction("cuLaunchKernelEx"));
    return c;
  }();
  return calls;
}

// Programmatic dependent launch (MCCL_PDL, kernels/primitives/grid_dep.cuh) for this process's launches:
// the knob, not where ranks may share a GPU (their kernels wait for each other's and could not
// all hold SMs with a waiting launch behind each) unless MCCL_PDL=2 says they fit, and a
// driver with the launch it needs.
inline bool gridDepAllowed() {
  const int64_t pdl = knobInt(Knob::Pdl);
  return pdl > 0 && (knobInt(Knob::SharedGpu) <= 0 || pdl >= 2) && driverCalls().launchEx != nullptr;
}

// Whether each device runs a kernel's sm_90 code, where the kernels wait for the previous grid
// (grid_dep.cuh; compiled for other architectures they do not): asked once per device
// (cudaFuncAttributes::binaryVersion of fn, a kernel compiled as the others are).
struct GridDepDevices {
  static constexpr int kDevices = 64;  // devices beyond launch without the overlap
  std::atomic<int> known[kDevices] = {};  // 0 not asked, 1 yes, 2 no
  bool runs(const void* fn, int dev) {
    if (dev < 0 || dev >= kDevices) return false;
    int k = known[dev].load(std::memory_order_relaxed);
    if (k == 0) {
      cudaFuncAttributes a{};
      const bool ok = cudaFuncGetAttributes(&a, fn) == cudaSuccess && a.binaryVersion >= 90;
      cudaGetLastError();
      k = ok ? 1 : 2;
      known[dev].store(k, std::memory_order_relaxed);
    }
    return k == 1;
  }
};

// fn's CUfunction (cuLaunchKernel's handle for a kernel's host symbol) in the current
// device's context, or null (the caller launches through the runtime). A CUfunction belongs
// to the context that was current when it was looked up, and one process may drive
// communicators on several devices (one thread may launch on each in one group): looked up
// on another device, it fails with CUDA_ERROR_INVALID_HANDLE (2 x H200, 2026-11-24). The
// context-less CUkernel (cudaGetKernel) would serve every device, but its launch cost the
// host as much as the runtime's (bench/micro/launch_args.cu, H100: 3.87 us against the
// CUfunction's 3.38), so callers keep a CUfunction per device.
inline CUfunction driverFunction(const void* fn) {
  if (driverCalls().launch == nullptr) return nullptr;
  cudaFunction_t g = nullptr;
  if (cudaGetFuncBySymbol(&g, fn) != cudaSuccess || g == nullptr) {
    cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<CUfunction>(g);
}

// One kernel's CUfunction on each device, looked up on first use there.
struct DriverFunctions {
  static constexpr int kDevices = 64;  // devices beyond launch through the runtime
  CUfunction perDevice[kDevices] = {};
};

// Launches fn (a kernel's host symbol, one by-value parameter at args) through the driver
// on the current device: CUDA_ERROR_NOT_SUPPORTED when the driver calls are off or fn has no
// CUfunction there, so the caller launches through the runtime. gridDep (a kernel that waits
// for the previous grid on the device, grid_dep.cuh): with programmatic stream serialization
// where gridDepAllowed() and gridDep->runs(fn, device).
inline CUresult driverLaunch(const void* fn, DriverFunctions* cache, unsigned blocks, unsigned threads,
                             const void* args, cudaStream_t stream, GridDepDevices* gridDep = nullptr) {
  const DriverCalls& d = driverCalls();
  int dev = -1;
  if (d.launch == nullptr || cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= DriverFunctions::kDevices)
    return CUDA_ERROR_NOT_SUPPORTED;
  CUfunction* slot = &cache->perDevice[dev];
  CUfunction f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (f == nullptr) {
    if ((f = driverFunction(fn)) == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
  }
  const bool afterGrid = gridDep != nullptr && gridDepAllowed() && gridDep->runs(fn, dev);
  return d.launchKernel(f, blocks, threads, args, stream, afterGrid);
}

}  // namespace mccl
