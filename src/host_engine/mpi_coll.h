// Small collectives of a host communicator made from an MPI_Comm, on MPI's own collectives.
//
// On such a communicator, AllReduce, Broadcast, Reduce, AllGather and ReduceScatter of at
// most MCCL_HOST_MPI_MAX_BYTES (the larger of the send and receive buffers) go to MPI's
// nonblocking collectives on the communicator's duplicated MPI_Comm, where Open MPI's
// shared-memory collectives beat the engine's FIFO round trips (up to a few hundred bytes:
// Open MPI's nonblocking collectives are slow from 4 KiB; docs/DESIGN.md). Only what MPI computes the
// same way stays there: the datatypes MPI has (not half, bfloat16, fp8) and the operators
// sum, prod, max and min (ncclAvg and PreMulSum stay on the engine). AlltoAll, Gather and
// Scatter, whole (DataPath::runsWhole, where shared memory does not take them), go to
// MPI_Ialltoall, MPI_Igather and MPI_Iscatter as bytes, any datatype. Nothing ever blocks in
// MPI: the requests are tested from the engine's progress loop, which keeps its abort,
// lost-peer and MCCL_TIMEOUT checks. See docs/DESIGN.md, "Host engine".
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/op.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

// Operations run on MPI collectives so far in this process (tests check the route).
uint64_t hostMpiCollCount();

// The MPI route of one host communicator; mpiComm is MPI_COMM_NULL when the communicator
// is not MPI-backed or the route is off (maxBytes 0).
struct MpiCollRoute {
  MPI_Comm mpiComm = MPI_COMM_NULL;
  size_t maxBytes = 0;
  bool threadMultiple = false;  // MPI_THREAD_MULTIPLE: any thread may call MPI
  // Whether op goes to MPI: the same answer on every rank for the same call (count,
  // datatype, operator and the knob are equal everywhere), given that the calling thread
  // may use MPI (MPI_THREAD_MULTIPLE, or MPI's main thread; MPI must not be finalized
  // while the communicator is used, as for any communicator made from an MPI_Comm).
  bool takes(const ncclComm* comm, const OpDesc& op) const;
};

// One operation on an MPI collective.
struct MpiCollOp {
  OpDesc op;
  MPI_Request req = MPI_REQUEST_NULL;
  std::vector<char> tmp;  // in-place ReduceScatter: MPI's result, copied when done; in-place AlltoAll: the input
  char* copyTo = nullptr;
  bool done = false;

  // Starts op (one MpiCollRoute::takes) on mpiComm.
  ncclResult_t start(ncclComm* comm, MPI_Comm mpiComm);
  // Tests the request without blocking.
  ncclResult_t test(ncclComm* comm);
  // A request still pending (abort, lost peer, timeout) cannot be freed (MPI forbids
  // freeing a collective's request): it and the scratch it writes are left to MPI.
  void abandon();
  std::string describe() const;
};

// A lone operation the route takes, run to completion on the caller's thread with the
// engine's checks (abort, lost peer, MCCL_TIMEOUT). The fast path of ncclAllReduce & co.
ncclResult_t runMpiCollAlone(ncclComm* comm, MPI_Comm mpiComm, const OpDesc& op, const std::atomic<bool>& aborted);

// The MPI operations of one group on one communicator.
class MpiColls {
 public:
  MpiColls() = default;
  ~MpiColls();
  MpiColls(const MpiColls&) = delete;
  MpiColls& operator=(const MpiColls&) = delete;

  ncclResult_t start(ncclComm* comm, MPI_Comm mpiComm, const OpDesc& op);
  // Tests the pending requests without blocking; *progressed when one completed.
  ncclResult_t test(ncclComm* comm, bool* allDone, bool* progressed);
  bool empty() const { return ops_.empty(); }
  std::string describe() const;

 private:
  std::vector<MpiCollOp> ops_;
  size_t left_ = 0;
};

}  // namespace mccl
