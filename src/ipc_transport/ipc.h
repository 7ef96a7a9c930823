// The connections of a GPU communicator. Peers this GPU reaches go over CUDA IPC (NVLink
// or PCIe); the others (another host, NCCL_P2P_DISABLE=1) go to GpuNet, the UCX network
// path driven by the proxy thread. Over IPC the receiver's FIFO and tail
// live in the receiver's device memory and are mapped into the sender (cudaIpc handles
// for another process, plain device pointers with peer access for a thread of this
// process); the sender's head lives in the sender's memory and is mapped into the
// receiver. Kernels then store data and flags straight into peer memory.
//
// The table of connections (DevConn) and their control words is a ConnTable: a block per
// peer, device memory only behind connected peers' blocks (conn_table.h), its address
// fixed for the communicator's life so pointers baked into captured CUDA graphs stay
// valid. A sender's head word, which its receiver writes, is its connection's credit word
// where the table is one cudaMalloc (exported through CUDA IPC whole, as the kernels load
// it at setup beside the connection), and in a block per peer of its own beside a sparse
// table (whose mapped pages CUDA IPC cannot export), made and exported on the first send
// connection to that peer.
//
// A receiver's FIFO holds slotBytes x slots of the class: the Simple classes Ring and Tree
// take NCCL_BUFFSIZE split into MCCL_FIFO_SLOTS (4 slots of 1 MiB); P2p on one node of two
// ranks NCCL_BUFFSIZE in slots of NCCL_P2P_NVL_CHUNKSIZE (8 of 512 KiB, as NCCL), elsewhere
// as the others (p2pOwnFifo); the LL classes kLlSlots of kLlSlotBytes, zeroed (a line's
// flag must never match before it is written). Eight 512 KiB slots made two-way Send/Recv
// of 64-256 MiB 1.02-1.04x faster than four of 1 MiB, and cost AllGather of 1 GiB 6 %,
// ReduceScatter 3-4 % (2 x H200, bench/results/gpu-2xH200-2026-11-27f calls 6-7, -27g
// call 1): hence a class's own.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/connect.h"
#include "ipc_transport/conn_table.h"
#include "kernels/work/dev_work.h"
#include "ucx_transport/gpu_net.h"

struct ncclComm;

namespace mccl {

// Tests: connections over CUDA IPC made from now on start their step counters at `base`
// instead of 0 (a receiver's tail, a sender's head and credit, both ends' persistent step;
// a multiple of 1024, so slots and slices stay aligned), so that a test reaches the point
// where the LL protocol's 32-bit flags wrap (2^32 steps on one connection: about 12 hours of
// back-to-back small calls) in a few thousand calls. 0 (the default): off. Every rank of
// the communicators made meanwhile must see the same base (ranks as threads of one process).
void ipcSetStepBaseForTests(uint64_t base);
// Connections that started at a base so far.
uint64_t ipcStepPresetsForTests();

class IpcTransport {
 public:
  explicit IpcTransport(ncclComm* comm);
  ~IpcTransport();

  // Before the init exchange: whether peers may be in other processes, so beyond CUDA IPC
  // (the network path is made when a connection first needs it: startNet).
  ncclResult_t prepare(PeerInfo* mine, bool peersMayBeRemote);
  // Reserves the connection table for maxChannels channels; backs the ring neighbours'
  // blocks (the Simple kernels load both of theirs whatever the work).
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

  uint8_t* devTable() const { return table_.base(); }
  uint64_t peerBytes() const { return peerBlockBytes(maxChannels_); }
  int maxChannels() const { return maxChannels_; }
  // The FIFO of a Simple class's connections: P2p's differ on one node (p2pOwnFifo), the
  // others share NCCL_BUFFSIZE / MCCL_FIFO_SLOTS. The planner's steps fit in a slot of it.
  size_t slotBytes(ConnClass cls) const { return p2pOwnFifo(cls) ? p2pSlotBytes_ : slotBytes_; }
  uint32_t slots(ConnClass cls) const { return p2pOwnFifo(cls) ? p2pSlots_ : slots_; }

  // True when this GPU can reach peer's GPU directly (peer access / IPC allowed).
  bool canReach(int peer) const;

 private:
  struct Conn;
  struct Info;
  // What this rank keeps per peer it has connected to (or is connecting to).
  struct Peer {
    std::vector<uint8_t> requested;  // by connIndex(): need() has run
    uint64_t* heads = nullptr;       // head words of my sends to it ([class][channel]), or null
    cudaIpcMemHandle_t headsHandle;  // exported, when the peer is another process
    bool headsExported = false;
  };
  Peer& peer(int p);  // made on first use
  // The head word of my send connection key, which its receiver writes, and what exports
  // it: the connection's credit word in a whole table (the kernels' credit is then the head
  // itself), else a word of the peer's block of heads.
  ncclResult_t headWord(const ConnKey& key, bool export_, uint64_t** word, cudaIpcMemHandle_t* handle,
                        uint64_t* offset, uint64_t* exported);
  DevComm tableView() const;  // the fields devConn() and devCtrl() read
  ncclResult_t finish(const ConnKey& key, Conn& c, const Info& info);
  ncclResult_t startNet();
  ncclResult_t mapPeer(int peer, const Info& info, uint8_t** ptr);
  int indexOf(const ConnKey& key) const {
    return ((static_cast<int>(key.cls) * maxChannels_) + key.channel) * 2 + (key.send ? 1 : 0);
  }
  size_t headBytes() const { return sizeof(uint64_t) * kNumConnClasses * static_cast<size_t>(maxChannels_); }
  void adopt(const ConnKey& key, std::unique_ptr<Conn> c);

  // Point-to-point connections take slots of NCCL_P2P_NVL_CHUNKSIZE where every peer is
  // over CUDA IPC (comm->gpuNet false, known from setup() on, before any connection: the
  // network path's layout is one for every class, and a plan with network peers takes one
  // slot size for its Sends and Recvs whatever the peer), on two ranks unless the variable
  // is set: where it was measured faster. On four ranks one host ran AlltoAll of 64 MiB -
  // 1 GiB 2-8 % slower in 512 KiB steps than in 1 MiB ones, another even (4 x H200,
  // bench/results/gpu-2xH200-2026-11-27g calls 2 and 3).
  bool p2pOwnFifo(ConnClass cls) const;

  ncclComm* comm_;
  std::unique_ptr<GpuNet> net_;
  std::atomic<GpuNet*> netLive_{nullptr};    // net_ once made, for netStatus()
  bool netWanted_ = false, netTried_ = false;  // prepare(): peers may be remote; startNet() ran
  ConnectExchange exchange_;
  std::map<ConnKey, std::unique_ptr<Conn>> conns_;
  int maxChannels_ = 0;
  uint32_t slots_ = 8, p2pSlots_ = 8;
  size_t slotBytes_ = 0, p2pSlotBytes_ = 0;
  bool p2pOwn_ = false;  // two ranks, or NCCL_P2P_NVL_CHUNKSIZE set (p2pOwnFifo)
  // Connection setup's copies and clears: a non-blocking stream of its own, waited for, so
  // they wait for no kernel of the user's (a synchronous cudaMemcpy on the legacy stream
  // waits for every blocking stream's kernels, which may be waiting for this rank).
  cudaStream_t setupStream_ = nullptr;
  ConnTable table_;
  cudaIpcMemHandle_t tableHandle_;  // a whole table, exported for its head words
  bool tableExported_ = false;
  std::unordered_map<int, std::unique_ptr<Peer>> peers_;
  struct PeerCache {
    int peer = -1;
    Peer* p = nullptr;
  };
  PeerCache cache_[64];  // need()'s hot path: direct-mapped by peer, in front of peers_
  // Peer memory opened through IPC, by (peer, handle bytes): where, and how many bytes.
  std::map<std::pair<int, std::string>, std::pair<uint8_t*, size_t>> opened_;
  size_t fifoBytes_ = 0, headBytes_ = 0;  // this GPU's, in comm->mem (the table counts its own)
};

}  // namespace mccl
