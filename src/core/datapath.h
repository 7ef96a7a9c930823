// The data path of one communicator: what moves the bytes. A host communicator's is the
// host engine over UCX / loopback; a GPU communicator's launches kernels. Created at the
// end of init; the group code hands it the work of each ncclGroupEnd.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/op.h"
#include "core/peer_info.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

// The execution of one group's operations on one communicator. ncclGroupEnd advances the
// works of all its communicators together, so ranks that are threads of one process, or
// several communicators driven from one thread, never wait on each other in turn.
class Work {
 public:
  virtual ~Work() = default;
  // Makes what progress it can without blocking; sets *done when complete.
  virtual ncclResult_t progress(bool* done) = 0;
  // What the work waits for (a sentence for hang reports and timeouts).
  virtual std::string describe() const { return ""; }
  // Held by whoever drives progress(); describe() from another thread takes it too.
  std::mutex stateMu;
};

class DataPath {
 public:
  explicit DataPath(ncclComm* comm) : comm_(comm) {}
  virtual ~DataPath() = default;
  DataPath(const DataPath&) = delete;
  DataPath& operator=(const DataPath&) = delete;

  // Local resources before the init exchange; may fill mine->addr (transport address).
  virtual ncclResult_t prepare(PeerInfo* mine) {
    (void)mine;
    return ncclSuccess;
  }
  // After the exchange: comm->peers and comm->topo are set.
  virtual ncclResult_t setup() { return ncclSuccess; }
  // Takes the operations of one group (in call order) and returns the work that runs them.
  virtual ncclResult_t submit(std::vector<OpDesc>& ops, std::unique_ptr<Work>* work) = 0;
  // A lone operation (no group around it) the data path runs on a lean path of its own:
  // returns true and sets *result when it took op, false to go the group's way.
  virtual bool runAlone(const OpDesc& op, ncclResult_t* result) {
    (void)op;
    (void)result;
    return false;
  }
  // The same for the operations of a group whose only communicator this is (in call order).
  virtual bool runGroupAlone(const std::vector<OpDesc>& ops, ncclResult_t* result) {
    (void)ops;
    (void)result;
    return false;
  }
  // Whether op, an AlltoAll, Gather or Scatter (OpDesc::isWholeP2pCall), runs here as one
  // operation: the same answer on every rank for the same call, asked once per call in call
  // order. False (the default): the API queues its Sends and Recvs instead.
  virtual bool runsWhole(const OpDesc& op) {
    (void)op;
    return false;
  }
  // ncclCommRegister: attach what the transport needs to use buff without copies.
  virtual ncclResult_t registerBuffer(void* buff, size_t size, void** transportHandle) {
    (void)buff;
    (void)size;
    *transportHandle = nullptr;
    return ncclSuccess;
  }
  virtual void deregisterBuffer(void* transportHandle) { (void)transportHandle; }
  // An error found after the fact (a GPU kernel that timed out), else ncclSuccess.
  virtual ncclResult_t asyncStatus() { return ncclSuccess; }
  // Completes everything issued so far (ncclCommFinalize).
  virtual ncclResult_t flush() { return ncclSuccess; }
  // Stops waits promptly; later calls fail.
  virtual void abort() {}
  // The watchdog lost a peer (called from its thread): stop waits that depend on peers.
  virtual void peerLost() {}
  // The largest per-thread stack of the kernels this data path launches (mcclCommMemoryInfo).
  virtual size_t kernelStackBytes() const { return 0; }
  // Eager launches replayed from graphs when they repeat (GPU: MCCL_LAUNCH_GRAPH_BYTES):
  // graphs made, launches replayed.
  virtual void launchGraphCounters(uint64_t* made, uint64_t* replayed) const { *made = *replayed = 0; }
  // What was issued and may still be running (GPU kernels), for hang reports.
  virtual std::string describeInFlight() const { return ""; }

 protected:
  ncclComm* comm_;
};

// The data path for comm (host or GPU, from comm->cudaDev).
ncclResult_t createDataPath(ncclComm* comm, std::unique_ptr<DataPath>* out);

}  // namespace mccl
