// Waiting on the caller's thread for a lone operation of a host communicator (the lean
// paths next to the engine: the shared-memory one-shot and MPI's collectives). The engine's
// checks run every 16 empty polls (from the 1,024th where every rank has a CPU, below):
// abort, a peer the watchdog lost, MCCL_TIMEOUT from the first check on, and MPI progress on
// an MPI-backed communicator (guide section "MPI Progress": a peer may need this rank's MPI
// calls before it reaches the collective); after the first empty poll every poll yields the
// core where ranks outnumber the node's CPUs, past 65,536 elsewhere (core/idle.h).
#pragma once

#include <mpi.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "core/comm.h"
#include "core/error.h"
#include "core/idle.h"
#include "core/knobs.h"
#include "bootstrap_mpi/bootstrap_mpi.h"

namespace mccl {


class LoneWait {
 public:
  // mpiComm: the communicator's MPI_Comm to keep progressing, or MPI_COMM_NULL.
  LoneWait(ncclComm* comm, const std::atomic<bool>& aborted, MPI_Comm mpiComm = MPI_COMM_NULL)
      : comm_(comm),
        aborted_(aborted),
        mpiComm_(mpiComm),
        firstCheck_(comm->idleYieldSoon ? 16 : kSpinPolls) {}

  // After a poll that moved something (a group's operations): the count starts again.
  void progressed() { idle_ = 0; }

  // After a poll that found nothing; describe() says what the operation waits for.
  template <typename Describe>
  ncclResult_t idle(Describe describe) {
    ++idle_;
    if ((idle_ & 15) == 0 && idle_ >= firstCheck_) {
      if (idle_ == firstCheck_) {
        since_ = std::chrono::steady_clock::now();
        timeout_ = knobInt(Knob::Timeout);
        if (mpiComm_ != MPI_COMM_NULL && !MpiBootstrap::callerMayUseMpi()) mpiComm_ = MPI_COMM_NULL;
      }
      if (mpiComm_ != MPI_COMM_NULL) MpiBootstrap::progress(mpiComm_);
      MCCL_CHECK(comm_->checkPeers());
      if (aborted_.load()) return MCCL_ERR(ncclRemoteError, comm_, "the communicator was aborted");
      if (timeout_ > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count() >
                              static_cast<double>(timeout_))
        return MCCL_ERR(ncclRemoteError, comm_, "rank %d timed out after %lld s (MCCL_TIMEOUT): %s", comm_->rank,
                        static_cast<long long>(timeout_), describe().c_str());
    }
    if (idle_ > idlePollsBeforeYield(comm_->idleYieldSoon)) sched_yield();
    return ncclSuccess;
  }

 private:
  ncclComm* comm_;
  const std::atomic<bool>& aborted_;
  MPI_Comm mpiComm_;
  // Where every rank has a CPU, the checks begin after this many empty polls (a few
  // microseconds): a peer a moment behind is seen without them. Their MPI_Iprobe and clock
  // read cost more than a small message's whole wait, and 2-7 % of 8-byte Send/Recv groups
  // on 2 ranks waited past 16 polls and paid them with the message already there. Where
  // ranks outnumber CPUs every poll yields the core, and they begin at 16 as before.
  static constexpr uint32_t kSpinPolls = 1024;
  uint32_t firstCheck_;
  uint32_t idle_ = 0;
  int64_t timeout_ = 0;
  std::chrono::steady_clock::time_point since_;
};

}  // namespace mccl
