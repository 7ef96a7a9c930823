// Small collectives and small point-to-point messages of a host communicator whose ranks
// share one node, in one shared-memory segment (layout and lifetime: host_engine/shm_segment.h).
//
// Collectives (shm_coll.cc): every rank writes its contribution and a sequence number into
// its own cell, packed cell or slot, then reads those it needs and reduces or copies
// locally (one-shot). One cache-line handoff per peer instead of a ring's FIFO round trips;
// the answer to MPI's shared-memory collectives for 8 B .. tens of KiB (docs/DESIGN.md,
// "Host engine"). Operation s (1, 2, ... on every rank, in call order) uses cell and packed
// cell s % 64 and slot s % D. A rank writes them only when every rank has finished the
// operation that used them last (done >= s - 64, or s - D for a slot), so no reader ever
// sees its data overwritten, and the done counters are read only every few operations.
// Every rank reduces the contributions in rank order, so all ranks get the same bits.
// Which collectives come here (the same answer on every rank for the same call):
// AllReduce, Broadcast, Reduce, AllGather and ReduceScatter, every datatype and operator,
// and AlltoAll, Gather and Scatter whole (DataPath::runsWhole: an AlltoAll's every rank and
// a Scatter's root write a block for every rank, each reader copies out its own), when
// what one rank writes fits a slot (MCCL_HOST_SHM_MAX_BYTES) and every rank is on this
// node; on a one-rank communicator every size (a local copy). NCCL_ALGO can exclude
// it ("oneshot"), NCCL_SHM_DISABLE=1 turns it off.
//
// Send/Recv (shm_p2p.cc): a message of at most MCCL_HOST_SHM_MAX_BYTES between ranks of the
// node goes through a cell of the ordered pair's ring with its size and number (messages
// are numbered per pair in call order on both ends, as NCCL matches them): to 480 B inside
// the cell, above through the sender's message slots in pieces the receiver takes as they
// arrive. The receiver copies it out and publishes the number it has read, which frees the
// cell (and the slot). Cells and slots are an eager buffer: a Send returns once its message
// is written, whether or not the receiver has come (16 cells a pair up to 16 ranks, fewer
// above; as many slots as the collectives': shm_segment.h). Messages to oneself go the same
// way (the pair (r, r) has its ring). Larger messages and communicators of more than 64
// ranks use the engine. Both ends decide by their own size, so a Send and a Recv of
// different sizes on the same side of the threshold end in ncclInvalidUsage at the
// receiver, as on the engine.

#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/op.h"
#include "host_engine/shm_segment.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

// One operation on the segment: a state machine that never blocks.
struct ShmOp {
  ShmOp() = default;
  // Copies op alone: the rest is set by ShmColls::start (not zeroed first: 136 bytes of
  // `rep stos` were 5 % of a small Send/Recv pair's time on the 2-core machine).
  explicit ShmOp(const OpDesc& o) : op(o) {}
  OpDesc op;
  uint64_t s = 0;  // sequence number on the segment (Send/Recv: of the pair)
  int state = 0;   // 0: waiting for its cell or slot to be free, 1: waiting for peers' data, 2: done
  int waitRank = -1;  // the rank it waits for (hang reports)
  int piece = 0;      // the next piece to read (data in a packed cell or a slot)
  bool done() const { return state == 2; }
  std::string describe() const;
};

// The operations of one group that run on the segment, in call order: collectives one after
// the other (every rank numbers them alike), each Send and Recv as soon as it can (a group
// must not deadlock on the order of its point-to-point calls).
struct ShmBatch {
  std::vector<ShmOp> ops;
  size_t coll = 0;  // no collective before this one is left
  size_t left = 0;  // operations not done
  void clear() { ops.clear(), coll = 0, left = 0; }
  bool done() const { return left == 0; }
  std::string describe() const;  // the first operation not done
};

class ShmColls {
 public:
  explicit ShmColls(ncclComm* comm);
  ~ShmColls();
  ShmColls(const ShmColls&) = delete;
  ShmColls& operator=(const ShmColls&) = delete;

  // Decides whether the path is on (after the init exchange: every rank knows every node).
  void setup();
  bool on() const { return maxBytes_ > 0; }
  // Whether op comes here (the same answer on every rank for the same call).
  bool takes(const OpDesc& op) const;
  // takes(op), and the segment is mapped (the first time: made; where /dev/shm cannot give
  // it, the path turns off with a warning and false).
  bool use(const OpDesc& op);
  // Gives op its sequence number (in call order); out->op is op already when same is true.
  void start(const OpDesc& op, ShmOp* out, bool same = false);
  // Advances op without blocking.
  ncclResult_t progress(ShmOp& o);
  // Appends op to b (started); advances every operation of b that may move, without
  // blocking (*moved: one finished).
  void add(ShmBatch& b, const OpDesc& op);
  ncclResult_t advance(ShmBatch& b, bool* moved);
  // A lone operation, run to completion on the caller's thread with the engine's checks
  // (abort, lost peer, MCCL_TIMEOUT).
  ncclResult_t runAlone(const OpDesc& op, const std::atomic<bool>& aborted);
  // The operations of a group that all come here (use() took each), likewise (a ShmBatch).
  ncclResult_t runGroup(const std::vector<OpDesc>& ops, const std::atomic<bool>& aborted);

 private:
  ncclResult_t join();  // checks the segment's header (slot size, rank count)
  ncclResult_t runLocal(const OpDesc& op);
  ncclResult_t progressP2p(ShmOp& o);
  // Send/Recv (shm_p2p.cc): the next number of op's pair and direction (call order), the
  // cell of its message s, and one step of it (*done once finished; *piece: the next piece
  // of a Recv through a slot).
  uint64_t numberP2p(const OpDesc& op);
  ShmP2pCell* p2pCellOf(const OpDesc& op, uint64_t s) const;
  ncclResult_t stepP2p(const OpDesc& op, uint64_t s, ShmP2pCell* c, int* piece, bool* done);
  // runGroup for a group of Sends and Recvs only: each advanced as soon as it can, from the
  // group's own list (no ShmOp copies), its cell found once.
  ncclResult_t runP2pGroup(const std::vector<OpDesc>& ops, const std::atomic<bool>& aborted);

  ncclComm* comm_;
  MPI_Comm mpiComm_ = MPI_COMM_NULL;  // kept progressing while a lone operation waits
  size_t maxBytes_ = 0;  // bytes one rank writes, at most (0: off)
  ShmStreamChoice stream_;  // whether data goes into a slot by streaming stores (shm_segment.h)
  // The most bytes this rank has written into each of its collective and message slots
  // (ShmStreamChoice::stream does not time a copy to pages not touched before).
  std::array<size_t, kShmMaxSlotDepth> slotHigh_{}, p2pSlotHigh_{};
  uint64_t nextSeq_ = 1;
  uint64_t minDone_ = 0;  // every rank's done counter is at least this (last seen)
  bool joined_ = false;   // the segment's header was checked
  bool ready_ = false;    // every rank has attached
  std::shared_ptr<ShmSegment> seg_;  // attached while set
  // Send/Recv, per peer: messages numbered so far each way, the last this rank has written
  // and read, the last the peer has read of this rank's (as last seen).
  int p2pDepth_ = 0;  // cells per ordered pair (0: Send/Recv stay on the engine)
  std::vector<uint64_t> sendSeq_, recvSeq_, sent_, recvDone_, sendFreed_;
  uint64_t slotUses_ = 0;  // messages this rank has sent through its message slots
  ShmBatch group_;  // runGroup's operations (kept: no allocation per group)
  struct P2pStep {
    uint64_t s;
    ShmP2pCell* cell;
    int piece;
    bool done;
  };
  std::vector<P2pStep> p2pSteps_;  // runP2pGroup's, one per operation (kept likewise)
};

// Collectives and Send/Recv run on the segment so far in this process (tests check which
// path ran).
uint64_t hostShmCollCount();
uint64_t hostShmP2pCount();

}  // namespace mccl
