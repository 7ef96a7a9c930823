// The connections of a GPU communicator. Peers this GPU reaches go over CUDA IPC (NVLink
// or PCIe); the others (another host, NCCL_P2P_DISABLE=1) go to GpuNet, the UCX network
// path driven by the proxy thread. Over IPC the receiver's FIFO and tail
// live in the receiver's device memory and are mapped into the sender (cudaIpc handles
// for another process, plain device pointers with peer access for a thread of this
// process); the sender's head lives in the sender's memory and is mapped into the
// receiver. Kernels then store data and flags straight into peer memory.
//
// The table of connections (DevConn), indexed by connSlot(class, channel, peer, direction),
// lives in device memory, allocated once at its full size, so pointers baked into captured
// CUDA graphs stay valid for the communicator's life.
//
// A receiver's FIFO holds slotBytes x slots of the class: the Simple classes (Ring, Tree,
// P2p) take NCCL_BUFFSIZE split into MCCL_FIFO_SLOTS; the LL classes kLlSlots of
// kLlSlotBytes, zeroed (a line's flag must never match before it is written).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/connect.h"
#include "kernels/dev_work.h"
#include "ucx_transport/gpu_net.h"

struct ncclComm;

namespace mccl {

class IpcTransport {
 public:
  explicit IpcTransport(ncclComm* comm);
  ~IpcTransport();

  // Before the init exchange: whether peers may be in other processes, so beyond CUDA IPC
  // (the network path is made when a connection first needs it: startNet).
  ncclResult_t prepare(PeerInfo* mine, bool peersMayBeRemote);
  // Allocates the connection table for maxChannels channels.
  ncclResult_t setup(int maxChannels);
  // A failure of the network path (proxy), or ncclSuccess.
  ncclResult_t netStatus() {
    GpuNet* n = netLive_.load(std::memory_order_acquire);  // other threads (ncclCommGetAsyncError) too
    return n ? n->status() : ncclSuccess;
  }
  ncclResult_t need(const ConnKey& key);
  bool ready(const ConnKey& key) const;
  bool allReady() const { return exchange_.idle(); }
  ncclResult_t progress();

  DevConn* devConns() const { return dConns_; }
  uint64_t* devCtrl() const { return ctrl_; }
  int maxChannels() const { return maxChannels_; }
  size_t slotBytes() const { return slotBytes_; }
  uint32_t slots() const { return slots_; }  // of the Simple classes' FIFOs

  // True when this GPU can reach peer's GPU directly (peer access / IPC allowed).
  bool canReach(int peer) const;

 private:
  struct Conn;
  struct Info;
  ncclResult_t finish(const ConnKey& key, Conn& c, const Info& info);
  ncclResult_t startNet();
  ncclResult_t mapPeer(int peer, const Info& info, uint8_t** ptr);
  int slotOf(const ConnKey& key) const;  // connSlot() of the kernels
  ncclResult_t posted(int slot, ncclResult_t r);
  void adopt(const ConnKey& key, std::unique_ptr<Conn> c);

  ncclComm* comm_;
  std::unique_ptr<GpuNet> net_;
  std::atomic<GpuNet*> netLive_{nullptr};    // net_ once made, for netStatus()
  bool netWanted_ = false, netTried_ = false;  // prepare(): peers may be remote; startNet() ran
  ConnectExchange exchange_;
  std::map<ConnKey, std::unique_ptr<Conn>> conns_;
  int maxChannels_ = 0;
  uint32_t slots_ = 8;
  size_t slotBytes_ = 0;
  DevConn* dConns_ = nullptr;
  // Connection setup's copies and clears: a non-blocking stream of its own, waited for, so
  // they wait for no kernel of the user's (a synchronous cudaMemcpy on the legacy stream
  // waits for every blocking stream's kernels, which may be waiting for this rank).
  cudaStream_t setupStream_ = nullptr;
  int capacity_ = 0;
  // Control words of every connection slot (DevComm::ctrl): the step counter and, for a
  // sender, the head its receiver writes. Exported, so receivers map it.
  uint64_t* ctrl_ = nullptr;
  std::vector<uint8_t> requested_;  // by slot: need() has run
  // Peer memory opened through IPC, by (peer, handle bytes): where, and how many bytes.
  std::map<std::pair<int, std::string>, std::pair<uint8_t*, size_t>> opened_;
  size_t fifoBytes_ = 0, ctrlBytes_ = 0, connBytes_ = 0;  // this GPU's, in comm->mem
};

}  // namespace mccl
