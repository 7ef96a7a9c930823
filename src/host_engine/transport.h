// Connections of a host communicator, made on first use. One ordered transport table:
// the first transport whose canConnect accepts a peer connects it.
//   loopback  the peer is a thread of this process: FIFOs in ordinary memory
//   ucx       any other peer: UCX registered memory (mapped directly when UCX can,
//             RMA puts otherwise)
// Setting up a connection exchanges one small message each way through the bootstrap,
// without blocking, so many communicators driven by one thread can connect together.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "core/connect.h"
#include "core/peer_info.h"
#include "host_engine/fifo.h"

struct ncclComm;

namespace mccl {

// Fixed-size message a side sends its peer when connecting. Over UCX it carries this
// rank's worker address and host name: the init exchange (PeerInfo) does not, so only the
// peers a plan connects to ever receive them.
struct ConnInfo {
  static constexpr uint32_t kMagic = 0x636f6e32;  // "con2"
  uint32_t magic = kMagic;
  uint32_t transport = 0;  // index in the table
  uint32_t slots = 0;
  uint32_t rkeyLen = 0;
  uint64_t slotBytes = 0;
  uint64_t addr = 0;       // FIFO region (receiver) or head word (sender)
  uint64_t token = 0;      // loopback: handle of the shared region
  int32_t shmid = -1;      // UCX: the region's System V segment (ucx.h, sysvHold), or -1
  uint32_t reserved = 0;
  uint64_t sysvKey = 0;    // UCX: sysvNamespaceKey() of the region's owner
  uint8_t rkey[448] = {0};
  char host[64] = {0};           // UCX: this rank's host name (for error messages)
  uint32_t workerAddrLen = 0;    // UCX: bytes used in workerAddr
  uint32_t reserved2 = 0;
  uint8_t workerAddr[1024] = {0};  // UCX: this rank's worker address
};

class HostTransport {
 public:
  explicit HostTransport(ncclComm* comm);
  ~HostTransport();

  // Before the init exchange: a UCX worker unless every peer is in this process (its
  // address travels in the connection records, not in mine).
  ncclResult_t prepare(PeerInfo* mine, bool peersMayBeRemote);

  // Starts connecting key (no-op when connected or connecting).
  ncclResult_t need(const ConnKey& key);
  const FifoLayout& layout() const { return layout_; }
  // Connected ends, or null while connecting.
  FifoSend* sendConn(const ConnKey& key);
  FifoRecv* recvConn(const ConnKey& key);

  // Drives UCX and pending connections.
  ncclResult_t progress();
  // True when every RMA operation issued so far has completed locally.
  ncclResult_t quiescent(bool* done);
  void abort();
  // "ucx (direct)" / "ucx (put)" / "loopback" for the connection to peer, for logs.
  std::string describe(const ConnKey& key) const;

 private:
  struct Conn;
  ncclResult_t start(const ConnKey& key, Conn& c);
  ncclResult_t finish(const ConnKey& key, Conn& c, const ConnInfo& peer);

  ncclComm* comm_;
  std::shared_ptr<UcxContext> ucxCtx_;
  std::unique_ptr<UcxWorker> ucx_;
  std::map<ConnKey, std::unique_ptr<Conn>> conns_;
  ConnectExchange exchange_;
  FifoLayout layout_;
  bool allowDirect_ = true;
};

// Index of the transport that connects me to peer (the first of the table that can),
// or -1. Exposed for tests.
int chooseTransport(bool sameProcess, bool haveUcx);
const char* transportName(int index);

}  // namespace mccl
