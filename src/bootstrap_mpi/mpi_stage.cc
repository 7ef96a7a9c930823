#include "bootstrap_mpi/mpi_stage.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#ifdef MCCL_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>

#include "core/cuda_util.h"
#endif

namespace mccl {

namespace {
bool extents(MPI_Datatype dt, MPI_Aint* extent, MPI_Aint* trueLb, MPI_Aint* trueExtent) {
  MPI_Aint lb = 0;
  if (dt == MPI_DATATYPE_NULL || MPI_Type_get_extent(dt, &lb, extent) != MPI_SUCCESS ||
      MPI_Type_get_true_extent(dt, trueLb, trueExtent) != MPI_SUCCESS)
    return false;
  return *extent >= 0 && *trueExtent >= 0;  // negative strides: not staged (MPI gets the pointer)
}
}  // namespace

MpiSpan mpiSpan(MPI_Datatype dt, size_t count) {
  MPI_Aint extent = 0, tlb = 0, tex = 0;
  if (count == 0 || !extents(dt, &extent, &tlb, &tex)) return {};
  return {static_cast<ptrdiff_t>(tlb), static_cast<size_t>(extent) * (count - 1) + static_cast<size_t>(tex)};
}

namespace {
// The span from the first to the end of the last of some blocks of elements.
class Hull {
 public:
  // count > 0 elements of extent and true extent tex from start (its true lower bound).
  void add(ptrdiff_t start, int count, MPI_Aint extent, MPI_Aint tex) {
    const ptrdiff_t end = start + static_cast<ptrdiff_t>(count - 1) * extent + tex;
    lo_ = any_ ? std::min(lo_, start) : start;
    hi_ = any_ ? std::max(hi_, end) : end;
    any_ = true;
  }
  MpiSpan span() const { return any_ ? MpiSpan{lo_, static_cast<size_t>(hi_ - lo_)} : MpiSpan{}; }

 private:
  bool any_ = false;
  ptrdiff_t lo_ = 0, hi_ = 0;
};
}  // namespace

MpiSpan mpiSpanOfBlocks(MPI_Datatype dt, const int* counts, const int* displs, int n) {
  MPI_Aint extent = 0, tlb = 0, tex = 0;
  if (counts == nullptr || displs == nullptr || !extents(dt, &extent, &tlb, &tex)) return {};
  Hull h;
  for (int q = 0; q < n; ++q)
    if (counts[q] > 0) h.add(static_cast<ptrdiff_t>(displs[q]) * extent + tlb, counts[q], extent, tex);
  return h.span();
}

HostStage::~HostStage() {
  for (Buf& b : bufs_) std::free(b.host);
}

MpiSpan mpiSpanOfTypedBlocks(const int* counts, const int* displs, const MPI_Datatype* types, int n) {
  if (counts == nullptr || displs == nullptr || types == nullptr) return {};
  Hull h;
  for (int q = 0; q < n; ++q) {
    MPI_Aint extent = 0, tlb = 0, tex = 0;
    if (counts[q] <= 0) continue;
    if (!extents(types[q], &extent, &tlb, &tex)) return {};  // not staged: MPI gets the buffer
    h.add(static_cast<ptrdiff_t>(displs[q]) + tlb, counts[q], extent, tex);
  }
  return h.span();
}

namespace {
std::atomic<bool> gStageHost{false};
constexpr int kHostForTests = -2;

// A copy between a device buffer (device >= 0) and its host copy, on the legacy stream:
// after what the program queued there (and on blocking streams). A pageable copy to the
// device may return before its DMA lands: the legacy stream's end says it has.
bool copy(void* dst, const void* src, size_t bytes, int device, bool toDevice) {
  if (device == kHostForTests) {
    std::memcpy(dst, src, bytes);
    return true;
  }
#ifdef MCCL_HAVE_CUDA
  int prev = -1;
  cudaGetDevice(&prev);
  if (prev != device) cudaSetDevice(device);
  bool ok = cudaMemcpy(dst, src, bytes, toDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost) == cudaSuccess &&
            (!toDevice || cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess);
  if (!ok) cudaGetLastError();
  if (prev >= 0 && prev != device) cudaSetDevice(prev);
  return ok;
#else
  (void)toDevice;
  return false;
#endif
}
}  // namespace

void mpiStageHostForTests(bool on) { gStageHost.store(on); }

int mpiBufferDevice(const void* p) {
#ifdef MCCL_HAVE_CUDA
  if (p == nullptr || p == MPI_IN_PLACE) return -1;
  // The driver's query, not cudaPointerGetAttributes: every MPI call on host buffers under the
  // preload asks, and the driver answers without the runtime's bookkeeping, a current context
  // or making one (a program that never touched CUDA: not initialised, so no device memory).
  using Fn = CUresult (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
  static const auto query = reinterpret_cast<Fn>(cudaDriverFunction("cuPointerGetAttributes"));
  if (query == nullptr) return -1;
  unsigned type = 0, managed = 0;  // IS_MANAGED writes a bool: the other bytes stay 0
  int ordinal = -1;
  CUpointer_attribute which[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* data[3] = {&type, &managed, &ordinal};
  if (query(3, which, data, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return -1;
  // Host, pinned and managed memory: MPI reads it itself.
  return type == CU_MEMORYTYPE_DEVICE && !managed && ordinal >= 0 ? ordinal : -1;
#else
  (void)p;
  return -1;
#endif
}

bool mpiStageable(const void* p, int* device) {
  if (p == nullptr || p == MPI_IN_PLACE || p == MPI_BOTTOM) return false;
  if (gStageHost.load(std::memory_order_relaxed)) {
    *device = kHostForTests;
    return true;
  }
  *device = mpiBufferDevice(p);
  return *device >= 0;
}

void* HostStage::stage(void* p, MpiSpan s, bool written) {
  int device = -1;
  if (s.bytes == 0 || !mpiStageable(p, &device)) return p;
  for (const Buf& b : bufs_)  // one buffer passed twice (an in-place form spelled out)
    if (b.dev == static_cast<char*>(p) + s.lb && b.bytes == s.bytes) return b.host - s.lb;
  Buf b{static_cast<char*>(p) + s.lb, static_cast<char*>(std::malloc(s.bytes)), s.bytes, device, written};
  if (b.host == nullptr) {
    ok_ = false;
    return p;
  }
  if (!copy(b.host, b.dev, b.bytes, b.device, false)) ok_ = false;
  bufs_.push_back(b);
  return b.host - s.lb;
}

int HostStage::refresh() {
  for (const Buf& b : bufs_)
    if (!copy(b.host, b.dev, b.bytes, b.device, false)) ok_ = false;
  return ok_ ? MPI_SUCCESS : MPI_ERR_OTHER;
}

int HostStage::finish() {
  for (const Buf& b : bufs_)
    if (b.written && !copy(b.dev, b.host, b.bytes, b.device, true)) ok_ = false;
  return ok_ ? MPI_SUCCESS : MPI_ERR_OTHER;
}

}  // namespace mccl
