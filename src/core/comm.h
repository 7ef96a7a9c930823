// The communicator: who the ranks are, how they reach each other, and its state.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap_mpi/bootstrap.h"
#include "core/config.h"
#include "core/mem_ledger.h"
#include "core/memory.h"
#include "core/peer_info.h"
#include "core/redop.h"
#include "mccl.h"

namespace mccl {
class DataPath;   // per-communicator data path (host engine or GPU), core/datapath.h
class InitTask;   // nonblocking init, core/init.h
class Watchdog;   // liveness of the other ranks, core/watchdog.h
class Work;       // one group's execution, core/datapath.h
class SymState;   // memory windows and device communicators, core/window.h
struct OpRecord;  // what the comm is doing now, for hang reports
}  // namespace mccl

struct ncclComm {
  static constexpr uint64_t kMagic = 0x6d63636c436f6d6dull;  // "mcclComm"

  ncclComm();
  ~ncclComm();

  uint64_t magic = kMagic;

  // Identity.
  int rank = 0;
  int nranks = 0;
  int cudaDev = MCCL_DEVICE_HOST;  // >= 0: a GPU communicator
  uint64_t commHash = 0;           // equal on every rank of the communicator
  bool isHost() const { return cudaDev < 0; }

  mccl::CommConfig config;
  std::unique_ptr<mccl::Bootstrap> bootstrap;
  mccl::Topology topo;                // nodes, this node's records, the ring (filled by init)
  mccl::PeerHosts hosts;              // peers' host names, as far as this rank learnt them
  bool gpuNet = false;                // a GPU comm with peers reached over the network
  // Host waits yield the core after a few empty polls, not only after long waits
  // (core/idle.h; set when a host data path is made).
  bool idleYieldSoon = true;

  // Life cycle.
  std::atomic<ncclResult_t> asyncError{ncclSuccess};
  std::atomic<bool> aborted{false};
  std::atomic<bool> finalized{false};
  // ncclCommRevoke (or ncclCommShrink with NCCL_SHRINK_ABORT): in-flight operations were
  // stopped; only split, shrink, destroy and abort are accepted (core/shrink.cc).
  std::atomic<bool> revoked{false};
  std::unique_ptr<mccl::InitTask> initTask;  // while a nonblocking init runs

  // Reduction operators made by ncclRedOpCreatePreMulSum, buffers from ncclCommRegister.
  mccl::RedOpTable redOps;
  mccl::RegTable regs;
  // Every allocation of the data path, by kind (mcclCommMemoryInfo).
  mccl::MemLedger mem;
  // Memory windows (ncclCommWindowRegister) and device communicators (ncclDevCommCreate),
  // made on first use; freed before the data path.
  std::unique_ptr<mccl::SymState> sym;

  // Data path, created at the end of init.
  std::unique_ptr<mccl::DataPath> dataPath;
  // Liveness of the ranks of other processes (null when all ranks are in this process).
  std::unique_ptr<mccl::Watchdog> watchdog;

  // The works ncclGroupEnd is driving now, for hang reports (mcclDumpState). A work is
  // described under its own stateMu, which its progress holds.
  std::mutex activeMu;
  std::vector<mccl::Work*> activeWorks;

  // Sequence numbers, equal on all ranks for collectives and splits.
  std::atomic<uint64_t> collSeq{0};
  uint64_t splitCount = 0;
  // ncclCommShrink calls per set of survivors (keyed by its hash): every member of a set
  // calls each of its shrinks, so the count is equal on all of them.
  std::map<uint64_t, uint64_t> shrinkCounts;

  void setLastError(const char* msg);
  std::string lastError() const;
  // Puts the communicator into error state r (the first failure wins and keeps its
  // message, which later calls repeat).
  void fail(ncclResult_t r);
  std::string failureMessage() const;

  // Fails with ncclInvalidUsage while the comm cannot take operations (init running,
  // aborted, finalized, revoked), or with the asynchronous error it already has.
  // management (split, shrink): a revoked comm is accepted, whatever error it had.
  ncclResult_t checkUsable(const char* call, bool management = false);
  // ncclRemoteError, naming the rank and host, once the watchdog has lost a peer.
  ncclResult_t checkPeers();
  // A data-path wait failed with r. When r is ncclRemoteError, gives the watchdog a
  // moment (at most 1 s) to find which rank is gone, and names it in the error.
  ncclResult_t attributeRemoteError(ncclResult_t r);

 private:
  mutable std::mutex errMu_;
  std::string lastError_;
  std::string failure_;
};

namespace mccl {

// A new communicator object (registered, not yet initialised).
ncclComm* createComm(const CommConfig& config);
// Frees comm and everything it owns; abortFirst stops every wait first (ncclCommAbort).
void destroyComm(ncclComm* comm, bool abortFirst);

// Prints the library version once per process (NCCL_DEBUG=VERSION and above).
void printVersionOnce();

// Registry of live communicators: validating a handle never touches freed memory.
void registerComm(ncclComm* comm);
void unregisterComm(ncclComm* comm);
bool isLiveComm(const ncclComm* comm);
// Changes whenever a communicator is registered or unregistered.
uint64_t commRegistryGeneration();
// Calls f for every live communicator with the registry locked (f must not destroy one).
void forEachLiveComm(void (*f)(ncclComm*, void*), void* arg);

// Validates a communicator argument: NULL and unknown/destroyed handles are
// ncclInvalidArgument with a sentence naming the call.
ncclResult_t checkCommArg(const ncclComm* comm, const char* call, const char* argName = "comm");

}  // namespace mccl
