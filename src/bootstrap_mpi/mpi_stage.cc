#include "bootstrap_mpi/mpi_stage.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

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

namespace {
template <class Displ>
MpiSpan typedBlocks(const int* counts, const Displ* displs, const MPI_Datatype* types, int n) {
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
}  // namespace

MpiSpan mpiSpanOfTypedBlocks(const int* counts, const int* displs, const MPI_Datatype* types, int n) {
  return typedBlocks(counts, displs, types, n);
}

MpiSpan mpiSpanOfTypedBlocks(const int* counts, const MPI_Aint* displs, const MPI_Datatype* types, int n) {
  return typedBlocks(counts, displs, types, n);
}

namespace {
std::atomic<bool> gStageHost{false};
constexpr int kHostForTests = -2;

#ifdef MCCL_HAVE_CUDA
// The device a copy or an allocation is made on, current while it lives (the program's
// current device again after): pinned memory is allocated in the buffer's device's context,
// never one made on device 0 for it.
class OnDevice {
 public:
  explicit OnDevice(int device) {
    cudaGetDevice(&prev_);
    if (prev_ != device) cudaSetDevice(device);
    device_ = device;
  }
  ~OnDevice() {
    if (prev_ >= 0 && prev_ != device_) cudaSetDevice(prev_);
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int prev_ = -1, device_ = -1;
};

// Pinned host memory for the copies of device buffers. A cudaMemcpy between device memory
// and pinned memory is one DMA the call waits for; from pageable memory the driver copies
// through a staging buffer of its own, and an upload must wait for the legacy stream
// besides. Pinning is slow (every page locked and mapped: milliseconds a megabyte), so
// blocks are kept for the next call: powers of two from 4 KiB to 16 MiB, at most 64 MiB of
// free ones in all. Larger copies take malloc'ed memory (pinning them would cost more than
// it saves once).
class PinnedPool {
 public:
  static constexpr size_t kMin = 4096, kMax = size_t{16} << 20, kKeep = size_t{64} << 20;

  // A block of at least bytes (its size in *cap), or nullptr: take malloc'ed memory.
  char* get(size_t bytes, size_t* cap) {
    if (bytes > kMax) return nullptr;
    const int k = classOf(bytes);
    const size_t c = kMin << k;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_[k].empty()) {
        char* p = free_[k].back();
        free_[k].pop_back();
        kept_ -= c;
        *cap = c;
        return p;
      }
    }
    void* p = nullptr;
    if (cudaHostAlloc(&p, c, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    *cap = c;
    return static_cast<char*>(p);
  }
  void put(char* p, size_t cap) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (kept_ + cap <= kKeep) {
        free_[classOf(cap)].push_back(p);
        kept_ += cap;
        return;
      }
    }
    cudaFreeHost(p);
  }

 private:
  static constexpr int kClasses = 13;  // 4 KiB << 12 = 16 MiB
  // The class of the smallest block that holds bytes (<= kMax): kMin << class.
  static int classOf(size_t bytes) {
    int k = 0;
    while ((kMin << k) < bytes) ++k;
    return k;
  }
  std::mutex mu_;
  std::vector<char*> free_[kClasses];
  size_t kept_ = 0;
};

PinnedPool& pinnedPool() {
  static PinnedPool* pool = new PinnedPool();  // outlives MPI_Finalize and static destructors
  return *pool;
}
#endif

// A copy between a device buffer (device >= 0) and its host copy, on the legacy stream:
// after what the program queued there (and on blocking streams). An upload from pageable
// memory may return before its DMA lands: the legacy stream's end says it has; from pinned
// memory cudaMemcpy returns when it has landed.
bool copy(void* dst, const void* src, size_t bytes, int device, bool toDevice, bool pinned) {
  if (device == kHostForTests) {
    std::memcpy(dst, src, bytes);
    return true;
  }
#ifdef MCCL_HAVE_CUDA
  OnDevice on(device);
  bool ok = cudaMemcpy(dst, src, bytes, toDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost) == cudaSuccess &&
            (!toDevice || pinned || cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess);
  if (!ok) cudaGetLastError();
  return ok;
#else
  (void)toDevice;
  (void)pinned;
  return false;
#endif
}

// Host memory for a copy of bytes from device's memory: pinned (*cap its size) where the
// pool has it, else malloc's (*cap 0).
char* hostFor(size_t bytes, int device, size_t* cap) {
  *cap = 0;
#ifdef MCCL_HAVE_CUDA
  if (device >= 0) {
    OnDevice on(device);
    if (char* p = pinnedPool().get(bytes, cap)) return p;
  }
#else
  (void)device;
#endif
  return static_cast<char*>(std::malloc(bytes));
}

void release(char* host, size_t cap) {
#ifdef MCCL_HAVE_CUDA
  if (cap > 0) {
    pinnedPool().put(host, cap);
    return;
  }
#else
  (void)cap;
#endif
  std::free(host);
}

// Whether count elements of dt lie packed from the pointer in the order a message fills
// them: a predefined type with no gaps (not MPI_DOUBLE_INT's padding).
bool packed(MPI_Datatype dt) {
  int ni = 0, na = 0, nd = 0, combiner = 0, size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, tex = 0;
  return dt != MPI_DATATYPE_NULL && MPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
         combiner == MPI_COMBINER_NAMED && MPI_Type_size(dt, &size) == MPI_SUCCESS &&
         MPI_Type_get_extent(dt, &lb, &extent) == MPI_SUCCESS &&
         MPI_Type_get_true_extent(dt, &tlb, &tex) == MPI_SUCCESS && size > 0 && lb == 0 && tlb == 0 &&
         extent == size && tex == size;
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

HostStage::~HostStage() {
  for (Buf& b : bufs_) release(b.host, b.cap);
}

void* HostStage::stage(void* p, MpiSpan s, Use use) {
  int device = -1;
  if (s.bytes == 0 || !mpiStageable(p, &device)) return p;
  char* const dev = static_cast<char*>(p) + s.lb;
  for (Buf& b : bufs_) {  // one buffer passed twice (an in-place form spelled out)
    if (b.dev != dev || b.bytes != s.bytes) continue;
    if (b.use == Use::Receive && use != Use::Receive && !copy(b.host, b.dev, b.bytes, b.device, false, b.cap > 0))
      ok_ = false;  // now read too: its data first
    if (b.use != use) {
      b.use = Use::ReadWrite;
      b.back = b.bytes;
    }
    return b.host - s.lb;
  }
  Buf b{dev, nullptr, s.bytes, 0, use == Use::ReadWrite ? s.bytes : 0, device, use};
  b.host = hostFor(s.bytes, device, &b.cap);
  if (b.host == nullptr) {
    ok_ = false;
    return p;
  }
  if (use != Use::Receive && !copy(b.host, b.dev, b.bytes, b.device, false, b.cap > 0)) ok_ = false;
  bufs_.push_back(b);
  return b.host - s.lb;
}

void* HostStage::into(void* p, MPI_Datatype dt, size_t count) {
  if (!packed(dt)) return out(p, mpiSpan(dt, count));
  int size = 0;
  MPI_Type_size(dt, &size);
  return stage(p, MpiSpan{0, static_cast<size_t>(size) * count}, Use::Receive);
}

void HostStage::received(const MPI_Status* st) {
  MPI_Count n = 0;
  const bool known = st != nullptr && st != MPI_STATUS_IGNORE &&
                     MPI_Get_elements_x(st, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0;
  for (Buf& b : bufs_)
    if (b.use == Use::Receive)  // (every caller has a status: unknown is the whole copy)
      b.back = known ? std::min(b.bytes, static_cast<size_t>(n)) : b.bytes;
}

int HostStage::refresh() {
  for (Buf& b : bufs_) {
    if (b.use == Use::Receive)
      b.back = 0;  // the next message fills it
    else if (!copy(b.host, b.dev, b.bytes, b.device, false, b.cap > 0))
      ok_ = false;
  }
  return ok_ ? MPI_SUCCESS : MPI_ERR_OTHER;
}

int HostStage::finish() {
  for (const Buf& b : bufs_)
    if (b.use != Use::Read && b.back > 0 && !copy(b.dev, b.host, b.back, b.device, true, b.cap > 0)) ok_ = false;
  return ok_ ? MPI_SUCCESS : MPI_ERR_OTHER;
}

}  // namespace mccl
