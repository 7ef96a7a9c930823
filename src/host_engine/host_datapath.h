// The data path of host communicators: the host engine over the host transport.
#pragma once

#include <atomic>
#include <memory>

#include "core/datapath.h"
#include "host_engine/mpi_coll.h"
#include "host_engine/shm_coll.h"
#include "host_engine/transport.h"

namespace mccl {

class HostDataPath : public DataPath {
 public:
  explicit HostDataPath(ncclComm* comm);
  ~HostDataPath() override;
  ncclResult_t prepare(PeerInfo* mine) override;
  // Decides the MPI route (the bootstrap's MPI_Comm is ready by now).
  ncclResult_t setup() override;
  ncclResult_t submit(std::vector<OpDesc>& ops, std::unique_ptr<Work>* work) override;
  // A lone collective the shared-memory path or the MPI route takes, run to completion.
  bool runAlone(const OpDesc& op, ncclResult_t* result) override;
  // A group whose every operation the shared-memory path takes, run to completion.
  bool runGroupAlone(const std::vector<OpDesc>& ops, ncclResult_t* result) override;
  // AlltoAll, Gather, Scatter whole where the shared-memory path takes them (one-shot: a
  // rank writes its blocks once, each reader takes its own), else where the MPI route does.
  bool runsWhole(const OpDesc& op) override { return shm_.use(op) || route_.takes(comm_, op); }
  void abort() override { aborted_.store(true); }

 private:
  std::unique_ptr<HostTransport> transport_;
  std::atomic<bool> aborted_{false};
  ShmColls shm_;        // small collectives and messages in shared memory (every rank on this node)
  MpiCollRoute route_;  // small collectives on MPI's own (MPI-backed, several nodes)
};

}  // namespace mccl
