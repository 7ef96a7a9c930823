// The unique-id bootstrap over TCP.
//
// ncclGetUniqueId starts a root service (a thread listening on one socket) and puts its
// address, a random 64-bit secret and a nonce into the id. Each rank listens on a socket
// of its own, says hello to the root with the secret, and learns its successor in a ring;
// one ring allgather then gives every rank every other rank's address. From then on ranks
// talk directly: every connection starts with a Hello that proves the secret, frames are
// bounded (wire.h), every wait ends at MCCL_BOOTSTRAP_TIMEOUT or at abort.
//
// With several ids (ncclCommInitRankScalable) the ranks are split into nId contiguous
// subsets, one per root; each root tells the previous root the address of its first rank,
// which closes the ring across subsets, so no root handles more than its subset.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap_mpi/bootstrap.h"
#include "bootstrap_mpi/socket.h"
#include "bootstrap_mpi/wire.h"

namespace mccl {

class TcpBootstrap : public Bootstrap {
 public:
  // Starts a root service and returns its id (ncclGetUniqueId).
  static ncclResult_t createRoot(ncclUniqueId* id);

  // Joins the communicator described by ids[0..nId) as rank of nranks.
  static ncclResult_t connect(const UniqueIdFields* ids, int nId, int rank, int nranks,
                              const std::atomic<bool>* abortFlag, std::unique_ptr<Bootstrap>* out);

  ~TcpBootstrap() override;
  const char* kind() const override { return "tcp"; }
  ncclResult_t allGather(void* data, size_t bytes) override;
  ncclResult_t send(int peer, uint64_t tag, const void* data, size_t bytes) override;
  ncclResult_t recv(int peer, uint64_t tag, void* data, size_t bytes) override;
  ncclResult_t tryRecv(int peer, uint64_t tag, void* data, size_t bytes, bool* received) override;

  // Ranks that left or died: see gone().
  bool peerLost(int peer);

 protected:
  ncclResult_t newChildSeed(int childSize, std::string* seed) override;
  ncclResult_t joinChild(const std::string& seed, int childRank, int childSize,
                         std::unique_ptr<Bootstrap>* child) override;

 private:
  TcpBootstrap(int rank, int size, uint64_t secret);

  struct Conn {
    int fd = -1;
    int peer = -1;             // -1 until its Hello is verified
    bool outgoing = false;
    std::vector<uint8_t> buf;  // bytes read, not yet parsed
  };

  ncclResult_t pump(int timeoutMs);           // accepts, reads, parses; mu_ held
  ncclResult_t parse(Conn& c, bool* closeIt);  // frames out of c.buf
  ncclResult_t connectPeer(int peer);          // outgoing connection + Hello
  ncclResult_t take(int peer, uint64_t tag, void* data, size_t bytes, bool* got);  // mailbox
  ncclResult_t writeFrame(int fd, int peer, const FrameHeader& h, const void* payload);
  bool gone(int peer) const;                   // mu_ held
  Deadline deadline() const { return deadlineAfter(bootstrapTimeoutSeconds()); }

  std::mutex mu_;
  uint64_t secret_;
  int listenFd_ = -1;
  SockAddr listenAddr_;
  std::vector<SockAddr> addrs_;  // every rank's listening address (after the ring allgather)
  std::vector<int> outFd_;       // fd this rank sends to each peer on
  std::vector<Conn> conns_;      // every fd this rank reads from
  // When a connection with each rank first closed (a default time point: none has).
  std::vector<std::chrono::steady_clock::time_point> closedAt_;
  std::map<std::pair<int, uint64_t>, std::deque<std::vector<char>>> mailbox_;
  size_t mailboxBytes_ = 0;
};

}  // namespace mccl
