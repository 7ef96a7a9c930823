// Ranks that are threads of one process: shared memory and a condition variable.
#pragma once

#include <memory>
#include <string>

#include "bootstrap_mpi/bootstrap.h"

namespace mccl {

struct InProcGroup;

class InProcBootstrap : public Bootstrap {
 public:
  // A fresh key for a new group of ranks.
  static std::string newGroupKey();
  // Joins the group called key as rank of size ranks (created by the first to join).
  static ncclResult_t join(const std::string& key, int rank, int size,
                           std::unique_ptr<Bootstrap>* out);

  ~InProcBootstrap() override;
  const char* kind() const override { return "inproc"; }
  bool allRanksInProcess() const override { return true; }
  ncclResult_t allGather(void* data, size_t bytes) override;
  ncclResult_t send(int peer, uint64_t tag, const void* data, size_t bytes) override;
  ncclResult_t recv(int peer, uint64_t tag, void* data, size_t bytes) override;
  ncclResult_t tryRecv(int peer, uint64_t tag, void* data, size_t bytes, bool* received) override;
  void abort() override;

 protected:
  ncclResult_t newChildSeed(int childSize, std::string* seed) override;
  ncclResult_t joinChild(const std::string& seed, int childRank, int childSize,
                         std::unique_ptr<Bootstrap>* child) override;

 private:
  InProcBootstrap(std::shared_ptr<InProcGroup> g, int rank, int size);
  std::shared_ptr<InProcGroup> group_;
  uint64_t gatherRound_ = 0;
};

}  // namespace mccl
