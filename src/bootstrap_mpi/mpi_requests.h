// MPI requests for work that mccl finishes on its own.
//
// libmccl_mpi's nonblocking collectives (MPI_Iallreduce and friends on device buffers) run
// on a stream and hand the program a generalized request (MPI_Grequest_start). MPI's own
// progress engine completes it: a callback registered with Open MPI's opal_progress, which
// every MPI_Wait, MPI_Test and their Fortran forms turn, polls each pending piece of work
// and calls MPI_Grequest_complete for those done. So the request is an MPI request in every
// respect (MPI_Waitall over it and the program's own requests, MPI_Request_free, Fortran's
// MPI_WAIT, which calls PMPI_Wait directly), no thread of mccl's ever calls MPI, and a
// program that does not wait pays nothing but the callback's one atomic load per turn.
//
// Where no such hook exists (an MPI other than Open MPI), mpiRequestsAvailable() is false:
// the preload leaves nonblocking collectives to an MPI that takes device buffers, and on one
// that does not runs them to the end inside the call (completedMpiRequest).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>

namespace mccl {

class MpiPendingWork {
 public:
  static constexpr int kNotYet = -1;  // MPI error codes are >= 0
  virtual ~MpiPendingWork() = default;
  // Called from MPI's progress engine (and progressMpiRequests) until it returns other than
  // kNotYet: MPI_SUCCESS once the work is done, else the MPI error class the request
  // completes with. Never called again after that.
  virtual int poll() = 0;
};

// Whether requests can be completed here (Open MPI's progress hook was found).
bool mpiRequestsAvailable();

// Hands work to MPI as a request. From here the request owns the work: it is destroyed when
// MPI frees the completed request (MPI_Wait, a successful MPI_Test, or MPI_Request_free,
// which in Open MPI defers the free to completion). Returns MPI_SUCCESS, or MPI's error (the
// work destroyed, *req untouched).
int startMpiRequest(std::unique_ptr<MpiPendingWork> work, MPI_Request* req);

// A request that is complete when handed out, with MPI error class result (MPI_SUCCESS or
// another): for a nonblocking call that ran to its end inside the call, where no progress
// hook exists or MCCL_MPI_NONBLOCKING=0. Needs no hook. Returns MPI_SUCCESS or MPI's error.
int completedMpiRequest(int result, MPI_Request* req);

// Polls every pending work once and completes the requests of those done; what the progress
// hook runs. Returns how many it completed. wait: take the lock even if another thread holds
// it (the hook only tries, so it never blocks inside MPI's progress).
int progressMpiRequests(bool wait = true);

// Requests handed out and not yet freed by MPI, and those not yet complete (tests).
size_t liveMpiRequests();
size_t pendingMpiRequests();

}  // namespace mccl
