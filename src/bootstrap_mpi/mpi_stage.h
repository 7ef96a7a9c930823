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
#include <utility>
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
// The same with MPI_Aint byte displacements (MPI_Neighbor_alltoallw's form).
MpiSpan mpiSpanOfTypedBlocks(const int* counts, const MPI_Aint* displs, const MPI_Datatype* types, int n);
// count elements of dt from the buffer (the true extent of the last, as MPI reads it).
MpiSpan mpiSpan(MPI_Datatype dt, size_t count);
// Blocks of counts[q] elements at displs[q] extents (q < n): from the first to the end of
// the last; a NULL array or count 0 everywhere is nothing.
MpiSpan mpiSpanOfBlocks(MPI_Datatype dt, const int* counts, const int* displs, int n);

class HostStage {
 public:
  HostStage() = default;
  ~HostStage();
  HostStage(HostStage&& o) noexcept : bufs_(std::move(o.bufs_)), ok_(o.ok_) { o.bufs_.clear(); }
  HostStage(const HostStage&) = delete;
  HostStage& operator=(const HostStage&) = delete;
  HostStage& operator=(HostStage&&) = delete;

  // The pointer to hand MPI for p: p itself where it is MPI_IN_PLACE, NULL, no device
  // memory or an empty span; else a host copy of its span (at the same offsets). written:
  // copied back by finish(). False in ok() when a copy failed.
  const void* in(const void* p, MpiSpan s) { return stage(const_cast<void*>(p), s, Use::Read); }
  void* out(void* p, MpiSpan s) { return stage(p, s, Use::ReadWrite); }
  // A receive's buffer of count elements of dt: where dt is a predefined type with no gaps,
  // a message fills the copy from its start and nothing else changes it, so the copy is not
  // filled first and finish() copies back only what received() says arrived (nothing before
  // it is called). Other types: as out() (the gaps and what a short message leaves keep
  // their values by the copy in).
  void* into(void* p, MPI_Datatype dt, size_t count);
  // The message of a receive staged by into() has arrived: st's byte count goes back.
  void received(const MPI_Status* st);
  bool ok() const { return ok_; }
  // Copies the written buffers back (and waits until they have landed). MPI_SUCCESS or
  // MPI_ERR_OTHER.
  int finish();
  // Copies every buffer to its host copy again (a persistent request's MPI_Start; into()'s
  // buffers wait for their next message instead). MPI_SUCCESS or MPI_ERR_OTHER.
  int refresh();
  // Whether any buffer was copied (a device buffer among those handed in).
  bool staged() const { return !bufs_.empty(); }

 private:
  enum class Use { Read, ReadWrite, Receive };
  struct Buf {
    char* dev;
    char* host;
    size_t bytes;
    size_t cap;   // the pinned block's size (0: host memory of malloc's)
    size_t back;  // bytes finish() copies back
    int device;
    Use use;
  };
  void* stage(void* p, MpiSpan s, Use use);
  std::vector<Buf> bufs_;
  bool ok_ = true;
};

// A nonblocking collective posted on host copies (mpi_route.cc's fallback, PMPI_I* returned
// rc): MPI's own request goes to the program and, with the copies, into the table of staged
// requests (mpi_stage_p2p.cc), whose completion calls copy the written buffers back to the
// device when it completes. Nothing is kept unless rc is MPI_SUCCESS. Returns rc, or
// MPI_ERR_OTHER where a copy failed.
int mpiStageKeepRequest(HostStage&& st, MPI_Comm comm, int rc, MPI_Request* req);

}  // namespace mccl
