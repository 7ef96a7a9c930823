// GPU helpers for the tests labelled "gpu": they skip themselves where no GPU is usable.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "coll_check.h"
#include "thread_barrier.h"

namespace mccl_test {

inline int gpuCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

#define SKIP_WITHOUT_GPUS(n)                                                         \
  do {                                                                               \
    if (::mccl_test::gpuCount() < (n)) GTEST_SKIP() << "needs " << (n) << " GPU(s)"; \
  } while (0)

#define CUDA_OK(call)                                                                  \
  do {                                                                                 \
    cudaError_t e_ = (call);                                                           \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorString(e_);             \
  } while (0)

// Copies host data to the device on `s` and waits for it. A plain cudaMemcpy from pageable
// memory may return before its DMA lands, and the legacy stream it runs on does not order a
// non-blocking stream; cudaDeviceSynchronize instead would wait for the kernels of ranks
// that share the GPU as threads, which may be waiting for this one.
inline cudaError_t uploadOn(cudaStream_t s, void* dst, const void* src, size_t bytes) {
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s);
  return e != cudaSuccess ? e : cudaStreamSynchronize(s);
}

// Buffers in device memory of `dev`, operations on a stream of their own.
class GpuMemory : public Memory {
 public:
  explicit GpuMemory(int dev) : dev_(dev), shared_(getenv("MCCL_SHARED_GPU") != nullptr) {
    cudaSetDevice(dev_);
    cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    if (shared_) {  // keep what the pool holds: giving it back may wait for the device
      cudaMemPool_t pool;
      uint64_t keep = ~uint64_t{0};
      if (cudaDeviceGetDefaultMemPool(&pool, dev_) == cudaSuccess)
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
  }
  ~GpuMemory() override {
    cudaSetDevice(dev_);
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  // Ranks sharing a GPU (MCCL_SHARED_GPU): cudaMalloc and cudaFree may wait for the whole
  // device, so a rank allocating or freeing between cases would wait for a peer's kernel
  // that waits for this rank's next launch. Their buffers come from the stream-ordered
  // allocator instead, which orders against this rank's stream only.
  void* alloc(size_t bytes) override {
    cudaSetDevice(dev_);
    void* p = nullptr;
    if (shared_) {
      if (cudaMallocAsync(&p, bytes ? bytes : 1, stream_) != cudaSuccess || cudaStreamSynchronize(stream_) != cudaSuccess)
        return nullptr;
      return p;
    }
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) return nullptr;
    return p;
  }
  void release(void* p) override {
    cudaSetDevice(dev_);
    if (shared_) {
      cudaFreeAsync(p, stream_);
      return;
    }
    cudaFree(p);
  }
  void upload(void* dst, const void* src, size_t bytes) override {
    // On this stream and waited for (uploadOn: a self Send/Recv once read zeros after a
    // plain cudaMemcpy).
    cudaSetDevice(dev_);
    cudaError_t e = uploadOn(stream_, dst, src, bytes);
    if (e != cudaSuccess) ADD_FAILURE() << "upload: " << cudaGetErrorString(e);
  }
  void download(void* dst, const void* src, size_t bytes) override {
    // On this stream too: the legacy stream of a plain cudaMemcpy waits for every blocking
    // stream of the context, which ranks sharing a GPU share.
    cudaSetDevice(dev_);
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_);
    cudaError_t e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) ADD_FAILURE() << "download: " << cudaGetErrorString(e);
  }
  cudaStream_t stream() override { return stream_; }
  void synchronize() override {
    cudaSetDevice(dev_);
    cudaError_t e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) ADD_FAILURE() << "cudaStreamSynchronize: " << cudaGetErrorString(e);
  }

 private:
  int dev_;
  bool shared_;
  cudaStream_t stream_ = nullptr;
};

// Buffers handed out from one region, last taken first given back (each case frees what it
// took, last first), so every rank that takes the same sizes in the same order gets the
// same offsets.
class StackMemory : public GpuMemory {
 public:
  explicit StackMemory(int dev) : GpuMemory(dev) {}
  void* alloc(size_t bytes) override {
    const size_t at = top_;
    if (!base_ || at + bytes > bytes_) return nullptr;
    top_ = (at + bytes + 255) / 256 * 256;
    return static_cast<char*>(base_) + at;
  }
  void release(void* p) override {
    const size_t at = static_cast<size_t>(static_cast<char*>(p) - static_cast<char*>(base_));
    if (at < top_) top_ = at;
  }
  std::string error;

 protected:
  void* base_ = nullptr;
  size_t bytes_ = 0;

 private:
  size_t top_ = 0;
};

// Buffers from one window per rank, registered with NCCL_WIN_COLL_SYMMETRIC: each buffer
// lies at the same offset of every rank's window, as that flag promises.
class WindowMemory : public StackMemory {
 public:
  WindowMemory(ncclComm_t comm, int dev, size_t bytes) : StackMemory(dev), comm_(comm) {
    bytes_ = bytes;
    if (ncclMemAlloc(&base_, bytes) != ncclSuccess) {
      error = std::string("ncclMemAlloc: ") + ncclGetLastError(nullptr);
      base_ = nullptr;
    }
    // Collective: every rank takes part, a failed allocation as an unusable buffer.
    if (ncclCommWindowRegister(comm, base_ ? base_ : reinterpret_cast<void*>(1), bytes, &win_,
                               NCCL_WIN_COLL_SYMMETRIC) != ncclSuccess && error.empty())
      error = std::string("ncclCommWindowRegister: ") + ncclGetLastError(comm);
  }
  ~WindowMemory() override {
    if (win_ && ncclCommWindowDeregister(comm_, win_) != ncclSuccess)
      ADD_FAILURE() << "ncclCommWindowDeregister: " << ncclGetLastError(comm_);
    if (base_) ncclMemFree(base_);
  }

 private:
  ncclComm_t comm_;
  ncclWindow_t win_ = nullptr;
};

// Buffers from one cudaMalloc'ed region per rank, registered with the communicator
// (ncclCommRegister): what a peer's process or GPU can import (legacy IPC capable), where
// GpuMemory's stream-ordered pool under MCCL_SHARED_GPU is not. Ranks sharing a GPU make
// and free it while no kernel of theirs runs (ThreadBarrier before their first call and
// before they free).
class RegisteredRegion : public StackMemory {
 public:
  RegisteredRegion(ncclComm_t comm, int dev, size_t bytes) : StackMemory(dev), comm_(comm) {
    cudaSetDevice(dev);
    bytes_ = bytes;
    if (cudaMalloc(&base_, bytes) != cudaSuccess) {
      error = "cudaMalloc of " + std::to_string(bytes) + " bytes failed";
      base_ = nullptr;
    } else if (ncclCommRegister(comm, base_, bytes, &handle_) != ncclSuccess) {
      error = std::string("ncclCommRegister: ") + ncclGetLastError(comm);
    }
  }
  ~RegisteredRegion() override {
    if (handle_ && ncclCommDeregister(comm_, handle_) != ncclSuccess)
      ADD_FAILURE() << "ncclCommDeregister: " << ncclGetLastError(comm_);
    if (base_) cudaFree(base_);
  }

 private:
  ncclComm_t comm_;
  void* handle_ = nullptr;
};

// Buffers of their own, each registered with the communicator (ncclCommRegister, local)
// while a case uses it: the outputs the user-buffer path writes into under
// MCCL_USER_BUFFERS=1.
class RegisteredMemory : public GpuMemory {
 public:
  RegisteredMemory(ncclComm_t comm, int dev) : GpuMemory(dev), comm_(comm) {}
  void* alloc(size_t bytes) override {
    void* p = GpuMemory::alloc(bytes);
    void* h = nullptr;
    if (p && ncclCommRegister(comm_, p, bytes ? bytes : 1, &h) != ncclSuccess) {
      ADD_FAILURE() << "ncclCommRegister: " << ncclGetLastError(comm_);
      return p;
    }
    handles_.push_back({p, h});
    return p;
  }
  void release(void* p) override {
    for (size_t i = 0; i < handles_.size(); ++i)
      if (handles_[i].first == p) {
        if (ncclCommDeregister(comm_, handles_[i].second) != ncclSuccess)
          ADD_FAILURE() << "ncclCommDeregister: " << ncclGetLastError(comm_);
        handles_.erase(handles_.begin() + static_cast<long>(i));
        break;
      }
    GpuMemory::release(p);
  }

 private:
  ncclComm_t comm_;
  std::vector<std::pair<void*, void*>> handles_;
};

}  // namespace mccl_test
