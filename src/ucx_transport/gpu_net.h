// GPU connections that CUDA IPC cannot make (another host, or NCCL_P2P_DISABLE=1): the
// regions of proxy.h in pinned host memory mapped into the GPU and registered with UCX,
// served by the process's proxy thread. The kernels see an ordinary DevConn.
//
// Staging in host memory is the only path while UCX has no CUDA memory support (the
// Debian and Ubuntu builds): the context reports it, and the choice is logged at INFO.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/connect.h"
#include "core/peer_info.h"
#include "kernels/work/dev_work.h"
#include "ucx_transport/proxy.h"
#include "ucx_transport/ucx.h"

struct ncclComm;

namespace mccl {

// What one side of a network connection tells the other (inside the IPC record).
struct NetRecord {
  uint64_t addr = 0;  // the region's address in the sender's process
  uint64_t slotBytes = 0;
  uint32_t slots = 0;
  uint32_t slices = 0;
  uint32_t rkeyLen = 0;
  uint32_t pad = 0;
  uint8_t rkey[448] = {0};
  // This rank's UCX worker address and host name: the init exchange (PeerInfo) does not
  // carry them, so only the peers a plan connects to over the network receive them.
  char host[64] = {0};
  uint32_t workerAddrLen = 0;
  uint32_t pad2 = 0;
  uint8_t workerAddr[1024] = {0};
};

class GpuNet {
 public:
  GpuNet(ncclComm* comm, NetLayout layout);
  ~GpuNet();

  // A UCX worker (its address travels in every NetRecord): made when the first connection
  // to a peer beyond CUDA IPC is needed (IpcTransport::need), not at init.
  ncclResult_t prepare();
  bool available() const { return worker_ != nullptr; }

  // This side's region and record for key.
  ncclResult_t start(const ConnKey& key, NetRecord* mine);
  // With the peer's record: the proxy takes the connection, *out is what the kernels use
  // (out->step is left to the caller).
  ncclResult_t finish(const ConnKey& key, const NetRecord& peer, DevConn* out);
  // A failure of the proxy on this communicator's connections, as an error naming it.
  ncclResult_t status();

 private:
  struct Conn;
  ncclResult_t describe(const Conn& c, NetRecord* mine);
  void drain();  // at destroy: what the kernels posted reaches the peers
  ncclComm* comm_;
  NetLayout layout_;
  std::shared_ptr<UcxContext> ctx_;
  std::unique_ptr<UcxWorker> worker_;
  std::unique_ptr<ProxyClient> client_;
  bool attached_ = false;
  std::map<ConnKey, std::unique_ptr<Conn>> conns_;
};

}  // namespace mccl
