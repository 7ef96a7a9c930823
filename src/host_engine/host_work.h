// The host engine: runs one group's operations on a host communicator by walking their
// schedules (src/algorithms) over the host transport. Every channel of collectives and
// every (peer, direction) of point-to-point operations is a queue that advances on its
// own, so a group can never deadlock on the order of calls inside it; within a queue,
// operations run in call order, which is the same on every rank.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "core/datapath.h"
#include "core/op.h"
#include "core/planner.h"
#include "host_engine/mpi_coll.h"
#include "host_engine/shm_coll.h"
#include "host_engine/transport.h"

namespace mccl {

class HostWork : public Work {
 public:
  // shm: which operations run in shared memory (host_engine/shm_coll.h); route: which go
  // to MPI's collectives (host_engine/mpi_coll.h).
  HostWork(ncclComm* comm, HostTransport* transport, const std::atomic<bool>* aborted, ShmColls* shm,
           const MpiCollRoute& route);
  // Plans every operation and starts the connections they need; starts the operations
  // the route gives to MPI.
  ncclResult_t init(std::vector<OpDesc>& ops);
  ncclResult_t progress(bool* done) override;
  std::string describe() const override;

 private:
  struct OpExec {
    OpDesc op;
    Schedule sched;
    size_t esize = 0;
    const char* in = nullptr;
    char* out = nullptr;
    bool premul = false;
    uint64_t scalarBits = 0;
    std::vector<std::vector<char>> scratch;  // per channel and lane
  };
  struct Lane {
    int64_t next = 0;
    int64_t total = 0;
  };
  struct Queue {
    std::vector<int> ops;  // indexes into ops_, in call order
    size_t cur = 0;
    int channel = 0;
    bool started = false;
    std::vector<Lane> lanes;
  };

  // Runs one step if its data and credits are there; *ran tells whether it did.
  ncclResult_t tryStep(OpExec& op, int channel, int lane, const Step& st, bool* ran);
  ncclResult_t advance(Queue& q, bool* progressed);

  ncclComm* comm_;
  HostTransport* tr_;
  const std::atomic<bool>* aborted_;
  const MpiCollRoute& route_;
  ShmColls* shm_;
  ShmBatch shmOps_;  // operations in shared memory
  MpiColls mpi_;  // operations on MPI's collectives
  std::vector<OpExec> ops_;
  std::vector<Queue> queues_;
  std::chrono::steady_clock::time_point lastProgress_;
  bool warned_ = false;
  int idlePasses_ = 0;
  std::string blocked_;  // what the last blocked step waited for
};

}  // namespace mccl
