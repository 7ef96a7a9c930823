// Communicator initialisation as a task of phases, so that one code path serves blocking
// init (run to the end in the caller), nonblocking init on a thread (TCP and in-process
// bootstraps, or MPI with MPI_THREAD_MULTIPLE), and nonblocking init over MPI below
// MPI_THREAD_MULTIPLE (phases advanced by the user's own calls, so only the user's thread
// ever calls MPI).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap_mpi/bootstrap.h"
#include "bootstrap_mpi/wire.h"
#include "core/peer_info.h"
#include "core/phase_log.h"
#include "core/watchdog.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

class NodeExchange;

struct InitParams {
  enum class Source { UniqueIds, InProc, Ready };
  Source source = Source::UniqueIds;
  int rank = 0;
  int nranks = 0;
  int cudaDev = -2;  // resolved device (MCCL_DEVICE_HOST for a host communicator)
  std::vector<UniqueIdFields> ids;      // UniqueIds
  std::string inprocKey;                // InProc
  std::unique_ptr<Bootstrap> bootstrap; // Ready: already created (MPI, split children)
  uint64_t commHash = 0;
  const char* call = "ncclCommInitRank";
  PhaseLog prof;  // MCCL_PROFILE_INIT: started by the API call, printed when init ends
};

class InitTask {
 public:
  InitTask(ncclComm* comm, InitParams params);
  ~InitTask();

  // Advances as far as possible without waiting on a remote rank when polled, or to the
  // end when blocking. Returns ncclInProgress while phases remain.
  ncclResult_t step(bool blocking);

  // True when the task may run on a background thread (it never calls MPI there).
  bool threadSafe() const;
  void startThread();
  // Polled: advanced by the user's calls (MPI below MPI_THREAD_MULTIPLE).
  void setPolled() { polled_ = true; }
  bool polled() const { return polled_; }
  bool started() const { return polled_ || thread_.joinable() || done_.load(); }
  void join();
  bool done() const { return done_.load(); }
  ncclResult_t result() const { return result_.load(); }
  void abort();

 private:
  enum class Phase {
    CreateBootstrap, WaitBootstrap, LocalSetup, Exchange, WaitAgree, WaitExchange, Finish, WaitLive, StartWatchdog,
    Done
  };
  ncclResult_t runPhase(bool blocking, bool* progressed);
  ncclResult_t createBootstrap();
  ncclResult_t localSetup();
  ncclResult_t startFullExchange(bool blocking);
  ncclResult_t finish();
  ncclResult_t receiveLive(bool blocking, bool* all);
  ncclResult_t startWatchdog();
  void tellWatchPeersFailed();

  ncclComm* comm_;
  InitParams p_;
  Phase phase_ = Phase::CreateBootstrap;
  PeerInfo me_;                         // this rank's record
  std::vector<PeerInfo> exchange_;      // every rank's record (the full exchange only)
  size_t agreeBytes_ = 0;               // received by the MPI agreement (core/node_exchange.h)
  std::unique_ptr<NodeExchange> byNode_;  // MPI bootstraps: the exchange by node (core/node_exchange.h)
  int liveFd_ = -1;  // the watchdog's listening socket until startWatchdog() hands it over
  LiveRecord liveMine_;            // sent to each watch peer
  std::vector<int> watch_;         // Watchdog::watchPeers()
  std::vector<LiveRecord> liveIn_; // their records, by index in watch_
  std::vector<uint8_t> liveGot_;
  std::thread thread_;
  std::mutex mu_;  // guards comm_->bootstrap against abort() while it is being created
  std::atomic<bool> done_{false};
  std::atomic<ncclResult_t> result_{ncclInProgress};
  bool polled_ = false;
};

// Starts init for comm: blocking configs run it to the end now; nonblocking ones return
// ncclInProgress and finish in the background (or through progressInit).
ncclResult_t launchInit(ncclComm* comm, InitParams params, bool deferToGroup);

// Advances a pending nonblocking init (from ncclCommGetAsyncError and other calls).
// Returns ncclInProgress, ncclSuccess, or the init's error.
ncclResult_t progressInit(ncclComm* comm);

// Resolves the device a new communicator uses: the current CUDA device when a GPU is
// usable and MCCL_DEVICE does not say "host"; else a host communicator. An explicit
// device number (requested >= 0) that names no usable device is ncclInvalidArgument.
ncclResult_t resolveInitDevice(int requested, int localRank, const char* call, int* dev);

}  // namespace mccl
