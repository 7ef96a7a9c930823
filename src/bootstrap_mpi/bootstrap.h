// The Bootstrap: how the ranks of one communicator find each other and exchange small
// messages before (and besides) the data path. Three implementations:
//   MpiBootstrap     a duplicate of the user's MPI_Comm (mcclCommInitFromMpi and splits)
//   TcpBootstrap     the unique-id path: a root address and secret carried in the id
//   InProcBootstrap  several ranks that are threads of one process (ncclCommInitAll, tests)
//
// Every wait is bounded (MCCL_BOOTSTRAP_TIMEOUT) and ends early after abort(). Messages are
// matched by (peer, tag); a receive must name the exact size that was sent.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nccl.h"

struct ncclComm;

namespace mccl {

class Bootstrap {
 public:
  Bootstrap(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~Bootstrap() = default;
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual const char* kind() const = 0;

  // True while setting up is still under way (MPI_Comm_idup pending). Non-blocking.
  virtual ncclResult_t testReady(bool* ready) {
    *ready = true;
    return ncclSuccess;
  }

  // data holds size()*bytes; this rank's slot (rank()*bytes) is filled in. Blocking.
  virtual ncclResult_t allGather(void* data, size_t bytes) = 0;

  // Split-phase allgather: start, then test until done. The default runs it at start.
  virtual ncclResult_t startAllGather(void* data, size_t bytes) { return allGather(data, bytes); }
  virtual ncclResult_t testAllGather(bool* done) {
    *done = true;
    return ncclSuccess;
  }

  // Point to point. send returns once the message is buffered or delivered (it never
  // waits for the matching recv); recv waits for a message with this tag from peer.
  virtual ncclResult_t send(int peer, uint64_t tag, const void* data, size_t bytes) = 0;
  virtual ncclResult_t recv(int peer, uint64_t tag, void* data, size_t bytes) = 0;
  // Non-blocking recv: *received tells whether the message was there.
  virtual ncclResult_t tryRecv(int peer, uint64_t tag, void* data, size_t bytes, bool* received) = 0;

  virtual ncclResult_t barrier();

  // A new bootstrap for the ranks that passed the same color; ranks ordered by (key,
  // parent rank). color < 0: this rank takes part in the exchange but gets no child.
  // Collective over all ranks of this bootstrap.
  virtual ncclResult_t split(int color, int key, std::unique_ptr<Bootstrap>* child);

  // A new bootstrap for members (ascending ranks of this bootstrap, this rank among them),
  // ranked in that order. Only the members call it and only they talk to each other, so
  // ranks outside (dead ones included) are never waited for. index is equal on every
  // member (the parent's count of shrinks) and keeps concurrent exchanges apart.
  virtual ncclResult_t shrink(const std::vector<int>& members, uint64_t index,
                              std::unique_ptr<Bootstrap>* child);

  // Makes every current and future wait return ncclRemoteError promptly.
  virtual void abort() { aborted_.store(true); }
  bool aborted() const { return aborted_.load(); }

  // The communicator whose errors this bootstrap reports (for ncclGetLastError).
  void setOwner(ncclComm* comm) { owner_ = comm; }
  ncclComm* owner() const { return owner_; }

  // True when every rank is a thread of this process (the in-process bootstrap).
  virtual bool allRanksInProcess() const { return false; }

  // True for the MPI bootstrap: only the thread MPI allows may call it.
  virtual bool usesMpi() const { return false; }

 protected:
  // Used by the generic split: a blob that lets the members of a child find each other.
  // The child's rank 0 creates it; the others receive it through this bootstrap.
  virtual ncclResult_t newChildSeed(int childSize, std::string* seed);
  virtual ncclResult_t joinChild(const std::string& seed, int childRank, int childSize,
                                 std::unique_ptr<Bootstrap>* child);
  // The seed of a child made of members (childRank 0 creates it and sends it to the
  // others with tag): point to point among the members only.
  ncclResult_t shareChildSeed(const std::vector<int>& members, int childRank, uint64_t tag,
                              std::string* seed);

  int rank_;
  int size_;
  std::atomic<bool> aborted_{false};
  ncclComm* owner_ = nullptr;
};

// Seconds every bootstrap wait may take (MCCL_BOOTSTRAP_TIMEOUT).
double bootstrapTimeoutSeconds();

// Reserved tags (high bits) so library-internal exchanges never collide.
constexpr uint64_t kTagBarrier = 0xB0000000ull << 32;
constexpr uint64_t kTagSplit = 0xB1000000ull << 32;
constexpr uint64_t kTagShrink = 0xB3000000ull << 32;
constexpr uint64_t kTagAllGather = 0xB2000000ull << 32;
constexpr uint64_t kTagConnect = 0xC0000000ull << 32;

}  // namespace mccl
