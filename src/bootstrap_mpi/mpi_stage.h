// Host copies of an MPI call's device buffers (libmccl_mpi's fallback, mpi_route.cc): a
// collective on device buffers that mccl does not run (a datatype or operator it has no
// kernel for: MPI_MAXLOC on MPI_2INT, MPI_LAND, a derived datatype; send and receive
// signatures that differ) would crash inside an MPI that cannot take device buffers
// (MPIX_Query_cuda_support 0). There the route copies each device buffer to host memory,
// calls PMPI_* on the copies and copies the written ones back, as a CUDA-aware MPI does
// inside itself. Each rank decides alone: it calls the same PMPI_* collective either way.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace mccl {

// What the MPI library itself says of device buffers (its own MPIX_Query_cuda_support, told
// by the shim; -1 before): 0 means they must never reach it.
int mpiLibraryCudaAware();

// The CUDA device whose memory p points into, or -1: host memory (pageable, pinned or
// registered), managed memory, no CUDA at all. What the preload asks of every buffer.
int mpiBufferDevice(const void* p);

// Whether HostStage copies p: device memory, or any buffer while tests have the host
// staged too (mpiStageHostForTests, which proves the staging path on machines without a
// GPU). *device: its CUDA device (-2: host memory staged for tests).
bool mpiStageable(const void* p, int* device);
void mpiStageHostForTests(bool on);

// Where a buffer's data lies, relative to the pointer passed: [lb, lb + bytes).
struct MpiSpan {
  ptrdiff_t lb = 0;
  size_t bytes = 0;
};
// Blocks of counts[q] elements of types[q] at displs[q] bytes (q < n; MPI_Alltoallw's
// form): from the first to the end of the last.
MpiSpan mpiSpanOfTypedBlocks(const int* counts, const int* displs, const MPI_Datatype* types, int n);
// count elements of dt from the buffer (the true extent of the last, as MPI reads it).
MpiSpan mpiSpan(MPI_Datatype dt, size_t count);
// Blocks of counts[q] elements at displs[q] extents (q < n): from the first to the end of
// the last; a NULL array or count 0 everywhere is nothing.
MpiSpan mpiSpanOfBlocks(MPI_Datatype dt, const int* counts, const int* displs, int n);

class HostStage {
 public:
  HostStage() = default;
  ~HostStage();
  HostStage(const HostStage&) = delete;
  HostStage& operator=(const HostStage&) = delete;

  // The pointer to hand MPI for p: p itself where it is MPI_IN_PLACE, NULL, no device
  // memory or an empty span; else a host copy of its span (at the same offsets). written:
  // copied back by finish(). False in ok() when a copy failed.
  const void* in(const void* p, MpiSpan s) { return stage(const_cast<void*>(p), s, false); }
  void* out(void* p, MpiSpan s) { return stage(p, s, true); }
  bool ok() const { return ok_; }
  // Copies the written buffers back (and waits until they have landed). MPI_SUCCESS or
  // MPI_ERR_OTHER.
  int finish();
  // Copies every buffer to its host copy again (a persistent request's MPI_Start).
  // MPI_SUCCESS or MPI_ERR_OTHER.
  int refresh();
  // Whether any buffer was copied (a device buffer among those handed in).
  bool staged() const { return !bufs_.empty(); }

 private:
  struct Buf {
    char* dev;
    char* host;
    size_t bytes;
    int device;
    bool written;
  };
  void* stage(void* p, MpiSpan s, bool written);
  std::vector<Buf> bufs_;
  bool ok_ = true;
};

}  // namespace mccl
