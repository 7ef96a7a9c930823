// Scoped CUDA state for library calls made from the user's thread (CUDA builds only).
#pragma once

#include <cuda_runtime.h>

namespace mccl {

// Makes dev current for the scope and restores the caller's device. bindContext: also when
// dev is already the thread's device, so that its primary context is current for driver
// calls (cuMemGetAddressRange) on a thread that has made no runtime call yet, such as the
// threads of a group's deferred setup calls (cudaGetDevice answers 0 there without one).
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int dev, bool bindContext = false) {
    if (cudaGetDevice(&prev_) != cudaSuccess) prev_ = -1;
    if (dev >= 0 && (dev != prev_ || bindContext)) {
      cudaSetDevice(dev);
      changed_ = dev != prev_;
    }
  }
  ~CudaDeviceGuard() {
    if (changed_ && prev_ >= 0) cudaSetDevice(prev_);
  }
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int prev_ = -1;
  bool changed_ = false;
};

// Lets setup calls (cudaMalloc, cudaMemcpy) run while the user's stream is being captured
// into a CUDA graph, as NCCL does.
class CaptureModeRelaxed {
 public:
  CaptureModeRelaxed() {
    mode_ = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  ~CaptureModeRelaxed() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  CaptureModeRelaxed(const CaptureModeRelaxed&) = delete;
  CaptureModeRelaxed& operator=(const CaptureModeRelaxed&) = delete;

 private:
  cudaStreamCaptureMode mode_;
};

}  // namespace mccl
