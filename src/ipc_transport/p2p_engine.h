// Send/Recv on the copy engines (MCCL_P2P_CE_MIN_BYTES), and the Sends and Recvs of the
// collectives that only move data (AlltoAll, Gather, Scatter, and AllGather and Broadcast
// cut into theirs by the planner) on buffers that are no symmetric window
// (MCCL_PLAIN_CE_MIN_BYTES, NCCL_CTA_POLICY_ZERO): one cudaMemcpyAsync between the two ranks'
// own buffers, no FIFO and no SM, with waits as stream memory operations.
//
// Neither end knows the other's buffer when it enqueues, and neither may wait for the
// other's host (one rank enqueuing while the other waits in MPI for it would deadlock).
// So the two hosts meet in a page of shared memory per pair of ranks, without waiting:
// each Send (Recv) of a direction takes the next slot of that direction's ring and writes
// into its half what it proposes, its own buffer as the peer's process reaches it (the
// user-buffer path's import, ipc_transport/user_buffers.h), or nothing; then it counts
// itself in on the slot's word. The one that comes first has decided: the copy engines when
// it proposed a buffer, else the FIFO path for both. The one that comes second reads the
// proposal, follows it, and issues the copy (a push from a Send, a pull into a Recv),
// between the copy engines and the buffer the proposal named. A rank proposes only when
// the peer has its page registered (its ready word): the second can always follow.
//
// On the streams (GpuDataPath::launch, on side streams forked from the launch's stream
// before its kernels and joined after, so that the copies never wait for the group's
// kernels nor they for the copies; one per peer and direction, so that no direction waits
// behind another, as the ends may group their operations differently), per operation in
// the direction's order: its arrival written into the peer's word, then the peer's arrival
// waited for (its buffer is free, its data ready); the copy, where this rank issues it; its
// end written (after the copy), then the peer's end waited for.
// The words count the direction's operations (a signed 64-bit comparison: never wraps).
// A user's Sends and Recvs and a collective's count in rings and words of their own (two
// lanes a direction), so that a program whose ranks order the two kinds differently never
// pairs a user's Send with a collective's Recv.
// Abort and a lost peer write this rank's words past every operation (release()).
//
// Eager operations only: a graph replays the values it captured; a capturing rank proposes
// nothing (both ends then take the FIFO path), so ranks must capture alike, as for every
// copy-engine path.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/op.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

// One Send or Recv the copy engines move, as GpuWork planned it.
struct PeerEngineOp {
  int peer = -1;
  int dir = 0;          // lane: 0 from the lower rank of the pair to the higher, 1 back; 2, 3
                        //   the same for a collective's (meetLane)
  uint64_t k = 0;       // the lane's operation count
  bool issuer = false;  // this rank issues the copy
  void* dst = nullptr;  // issuer: where the copy goes and comes from (this rank's buffer
  const void* src = nullptr;  //   and the peer's as this process reaches it)
  size_t bytes = 0;
};

// The meeting of one operation, the k-th (from 1) of lane dir (kMeetLanes, PeerEngineOp::dir),
// in a pair's rings (kMeetRingBytes of memory both ends share, zero at first; role 0 is the
// lower rank):
// writes offer into this end's half of the slot and counts this end in. Returns 1: this end
// came first; 2: second, with the other end's offer in *theirs; 0: the slot still holds the
// operation kMeetSlots before (this end ran that far ahead of its peer: nothing written,
// call again later); -1: the slot is out of step (the two ends counted differently).
constexpr int kMeetSlots = 64;
constexpr int kMeetLanes = 4;
constexpr size_t kMeetRingBytes = kMeetLanes * kMeetSlots * 32;
// The lane of a Send or Recv between ranks me and peer.
int meetLane(const OpDesc& op, int me);
int meetInRing(void* rings, int dir, int role, uint64_t k, uint64_t offer, uint64_t* theirs);

class PeerEngines {
 public:
  explicit PeerEngines(ncclComm* comm);
  ~PeerEngines();  // releases, waits for the device, unregisters and unmaps every page
  PeerEngines(const PeerEngines&) = delete;
  PeerEngines& operator=(const PeerEngines&) = delete;

  // Whether op (a Send or Recv) meets its peer here: a rank of this node's other process
  // and GPU, of a size the copy engines take (wanted; both ends see the same size), never
  // where ranks of one process share a GPU. Every rank decides alike from op alone.
  bool eligible(const OpDesc& op) const;
  // Whether the copy engines take a transfer of bytes made by call: a user's Send/Recv from
  // MCCL_P2P_CE_MIN_BYTES; a collective's from MCCL_PLAIN_CE_MIN_BYTES, or under
  // NCCL_CTA_POLICY_ZERO above kLlBytesPerChannel (a Broadcast from 2 MiB), as on windows.
  bool wanted(P2pCall call, size_t bytes) const;
  // Whether every peer is a rank of this node on a GPU of its own process, where eligible
  // Sends and Recvs may meet (the planner cuts AllGather and Broadcast only there).
  bool everyPeerMeets() const;
  // Meets the peer for an eligible op (which advances the direction's count: call it once
  // per operation and call). True, with *out, when the copy engines move it; false: the
  // FIFO path. Errors (ncclInternalError and friends) go to *res, with false.
  bool meet(const OpDesc& op, bool capturing, PeerEngineOp* out, ncclResult_t* res);
  // Enqueues ops on the side stream, forked from stream (see above); join() has stream
  // wait for them, after the launch's kernels.
  ncclResult_t launch(const std::vector<PeerEngineOp>& ops, cudaStream_t stream);
  ncclResult_t join(cudaStream_t stream);
  // Every wait this rank enqueued, and every later one, passes. Any thread.
  void release();
  // A wait this rank's side streams sit in, as the words show it (the host's watch,
  // mem_ops.h): a token of the pair, lane and count, with the peer in *peer; 0: none.
  uint64_t waitingAt(int* peer);

  // Tests: the operations the copy engines took here, and the copies this rank issued.
  uint64_t opsTaken() const { return taken_.load(std::memory_order_relaxed); }
  uint64_t copiesIssued() const { return issued_.load(std::memory_order_relaxed); }

 private:
  struct Pair;
  Pair* pair(int peer);  // made at first use; null where it cannot be had

  ncclComm* comm_;
  std::mutex mu_;  // pairs_ (release() runs on other threads)
  std::map<int, std::unique_ptr<Pair>> pairs_;
  std::vector<cudaStream_t> sides_;     // a launch's side streams, one per (peer, lane)
  std::vector<cudaEvent_t> joinEvents_;  // one per side stream
  size_t joins_ = 0;                     // side streams the last launch used
  cudaEvent_t fork_ = nullptr;
  std::atomic<uint64_t> taken_{0}, issued_{0};
};

}  // namespace mccl
