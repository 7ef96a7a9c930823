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
  // A rank's Sends to itself and Recvs from itself among ops, matched in call order as NCCL
  // matches a pair's messages: the first `pairs` of each are copies from the Send's buffer
  // into the Recv's (no FIFO, one copy instead of two). None while a message to itself from
  // an earlier group waits (it is matched first); none where no Send and Recv meet.
  struct SelfPairs {
    std::vector<size_t> sends, recvs;  // indices into ops, in call order
    size_t pairs = 0;
  };
  SelfPairs selfPairsOf(const std::vector<OpDesc>& ops) const;
  // Copies the pairs' data and counts the unpaired ones (they travel as messages); an error
  // where a pair's sizes differ, before anything is copied.
  ncclResult_t copySelfPairs(const std::vector<OpDesc>& ops, const SelfPairs& p);
  // ops less the paired Sends and Recvs.
  static std::vector<OpDesc> withoutPairs(const std::vector<OpDesc>& ops, const SelfPairs& p);

  std::unique_ptr<HostTransport> transport_;
  std::atomic<bool> aborted_{false};
  ShmColls shm_;        // small collectives and messages in shared memory (every rank on this node)
  MpiCollRoute route_;  // small collectives on MPI's own (MPI-backed, several nodes)
  // Messages to itself sent and received as messages (in the segment or a FIFO), not
  // copied as pairs: while they differ, one waits and pairs would overtake it.
  uint64_t selfSent_ = 0, selfReceived_ = 0;
};

// Send/Recv pairs of a rank with itself run as copies, process-wide (tests).
uint64_t hostSelfCopyCount();

}  // namespace mccl
