#include "bootstrap_mpi/mpi_stage.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#ifdef MCCL_HAVE_CUDA
#include <cuda_runtime.h>
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

MpiSpan mpiSpanOfBlocks(MPI_Datatype dt, const int* counts, const int* displs, int n) {
  MPI_Aint extent = 0, tlb = 0, tex = 0;
  if (counts == nullptr || displs == nullptr || !extents(dt, &extent, &tlb, &tex)) return {};
  bool any = false;
  ptrdiff_t lo = 0, hi = 0;
  for (int q = 0; q < n; ++q) {
    if (counts[q] <= 0) continue;
    const ptrdiff_t start = static_cast<ptrdiff_t>(displs[q]) * extent + tlb;
    const ptrdiff_t end = start + static_cast<ptrdiff_t>(counts[q] - 1) * extent + tex;
    lo = any ? std::min(lo, start) : start;
    hi = any ? std::max(hi, end) : end;
    any = true;
  }
  if (!any) return {};
  return {lo, static_cast<size_t>(hi - lo)};
}

HostStage::~HostStage() {
  for (Buf& b : bufs_) std::free(b.host);
}

void* HostStage::stage(void* p, MpiSpan s, bool written) {
#ifdef MCCL_HAVE_CUDA
  if (p == nullptr || p == MPI_IN_PLACE || s.bytes == 0) return p;
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return p;
  }
  if (a.type != cudaMemoryTypeDevice) return p;  // host, pinned and managed memory: MPI reads it
  for (const Buf& b : bufs_)  // one buffer passed twice (an in-place form spelled out)
    if (b.dev == static_cast<char*>(p) + s.lb && b.bytes == s.bytes) return b.host - s.lb;
  Buf b{static_cast<char*>(p) + s.lb, static_cast<char*>(std::malloc(s.bytes)), s.bytes, a.device, written};
  int prev = -1;
  cudaGetDevice(&prev);
  if (prev != b.device) cudaSetDevice(b.device);
  // On the legacy stream: after what the program queued there (and on blocking streams).
  if (b.host == nullptr || cudaMemcpy(b.host, b.dev, b.bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
    cudaGetLastError();
    ok_ = false;
  }
  if (prev >= 0 && prev != b.device) cudaSetDevice(prev);
  if (b.host == nullptr) return p;
  bufs_.push_back(b);
  return b.host - s.lb;
#else
  (void)s;
  (void)written;
  return p;
#endif
}

int HostStage::finish() {
#ifdef MCCL_HAVE_CUDA
  int prev = -1;
  cudaGetDevice(&prev);
  for (const Buf& b : bufs_) {
    if (!b.written) continue;
    cudaSetDevice(b.device);
    // A pageable copy may return before its DMA lands: the legacy stream's end says it has.
    if (cudaMemcpy(b.dev, b.host, b.bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaStreamSynchronize(cudaStreamLegacy) != cudaSuccess) {
      cudaGetLastError();
      ok_ = false;
    }
  }
  if (prev >= 0) cudaSetDevice(prev);
#endif
  return ok_ ? MPI_SUCCESS : MPI_ERR_OTHER;
}

}  // namespace mccl
