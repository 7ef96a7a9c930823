// Send/Recv in the shared-memory segment (host_engine/shm_coll.h): message k from rank q to
// rank r goes into cell k % depth of the pair's ring, its number, size and slot beside the
// data. To 480 B the data is in the cell: the sender writes data and size, then the number
// (release); the receiver checks the number (acquire) and the size, and copies the data out.
// A message of up to 32 B is one cache line from writer to reader, as a collective's line
// is. Larger messages go through the sender's message slots, in pieces: the sender takes
// its next slot, publishes the cell (number, size, slot) first, then copies piece after
// piece into the slot and raises the cell's byte count after each; the receiver copies each
// piece out as soon as the count covers it, so the two copies overlap. The receiver then
// marks the slot's use read and publishes k as read, which frees the cell for k + depth.
// No FIFO credits, no schedule, no Work. A group of nothing but Sends and Recvs (a halo
// exchange, a ring shift) runs from the group's own list (runP2pGroup): no ShmOp copies of
// its operations, each one's cell found once.
#include <cstring>

#include "core/comm.h"
#include "core/error.h"
#include "core/types.h"
#include "host_engine/lone_wait.h"
#include "host_engine/shm_coll.h"
#include "host_engine/shm_segment.h"

namespace mccl {

ncclResult_t ShmColls::progressP2p(ShmOp& o) {
  const OpDesc& op = o.op;
  if (!joined_) {
    MCCL_CHECK(join());
    joined_ = true;
  }
  o.waitRank = op.root;
  bool done = false;
  MCCL_CHECK(stepP2p(op, o.s, p2pCellOf(op, o.s), &o.piece, &done));
  if (done) {
    o.state = 2;
    o.waitRank = -1;
  }
  return ncclSuccess;
}

ShmP2pCell* ShmColls::p2pCellOf(const OpDesc& op, uint64_t s) const {
  const int me = comm_->rank;
  return op.kind == OpKind::Send ? seg_->p2pCell(op.root, me, s) : seg_->p2pCell(me, op.root, s);
}

ncclResult_t ShmColls::stepP2p(const OpDesc& op, uint64_t s, ShmP2pCell* c, int* piece, bool* done) {
  const int me = comm_->rank, peer = op.root;
  const size_t p = static_cast<size_t>(peer);
  const size_t bytes = op.count * datatypeSize(op.datatype);
  const bool inCell = bytes <= kShmP2pInlineBytes;
  if (op.kind == OpKind::Send) {
    // A pair's messages are written in order. Their slots are taken in the order written,
    // so every message in a slot has its pair's earlier ones written before it, and its
    // receiver, reading in order, can always reach it: slots held by messages nobody can
    // read yet (a later message written while an earlier one waited for a slot) would
    // deadlock a group that sends more slot-sized messages than there are slots.
    if (sent_[p] != s - 1) return ncclSuccess;
    // No wait for the peer (it may not have attached yet: the name stays while a message
    // waits for it, shm_segment.h), only for a free cell and slot: they are the eager buffer.
    // The cell is free once the peer has read the message that used it last.
    const uint64_t depth = static_cast<uint64_t>(p2pDepth_);
    if (s > depth && sendFreed_[p] < s - depth) {
      sendFreed_[p] = seg_->p2pDone(peer, me)->load(std::memory_order_acquire);
      if (sendFreed_[p] < s - depth) return ncclSuccess;
    }
    const char* src = static_cast<const char*>(op.sendbuff);
    if (inCell) {
      std::memcpy(c->data, src, bytes);
      c->bytes = bytes;
      c->seq.store(s, std::memory_order_release);
    } else {
      // The next slot, free once the receiver of its last use has read it (slot uses are
      // numbered in the order this rank sends, whatever the peer).
      const uint64_t u = slotUses_ + 1, slots = static_cast<uint64_t>(seg_->layout().slotDepth);
      if (u > slots && seg_->p2pSlotRead(me, u)->load(std::memory_order_acquire) < u - slots) return ncclSuccess;
      slotUses_ = u;
      c->bytes = bytes;
      c->slotUse = u;
      c->written.store(0, std::memory_order_relaxed);
      c->seq.store(s, std::memory_order_release);
      char* slot = seg_->p2pSlot(me, u);
      const ShmPieces pieces = shmPiecesOf(bytes, true);
      bool timed = false;
      const bool stream = stream_.stream(bytes, &p2pSlotHigh_[u % slots], &timed);
      const uint64_t t0 = timed ? shmNowNs() : 0;
      for (int i = 0; i < pieces.count; ++i) {
        const size_t at = pieces.at(i), len = pieces.len(i, bytes);
        shmPut(slot + at, src + at, len, stream);
        c->written.store(at + len, std::memory_order_release);
      }
      if (timed) stream_.copied(bytes, shmElapsedNs(t0));
    }
    sent_[p] = s;
  } else {
    // A pair's messages are read in order: the read counter frees cells in order.
    if (recvDone_[p] != s - 1) return ncclSuccess;
    if (c->seq.load(std::memory_order_acquire) != s) return ncclSuccess;
    if (c->bytes != bytes)
      return MCCL_ERR(ncclInvalidUsage, comm_,
                      "Recv from rank %d: rank %d sent %llu bytes where rank %d expected %zu (do both ends pass "
                      "the same count and datatype?)",
                      peer, peer, static_cast<unsigned long long>(c->bytes), me, bytes);
    char* dst = static_cast<char*>(op.recvbuff);
    if (inCell) {
      std::memcpy(dst, c->data, bytes);
    } else {
      const char* slot = seg_->p2pSlot(peer, c->slotUse);
      const ShmPieces pieces = shmPiecesOf(bytes, true);
      for (; *piece < pieces.count; ++*piece) {
        const size_t at = pieces.at(*piece), len = pieces.len(*piece, bytes);
        if (c->written.load(std::memory_order_acquire) < at + len) return ncclSuccess;
        std::memcpy(dst + at, slot + at, len);
      }
      seg_->p2pSlotRead(peer, c->slotUse)->store(c->slotUse, std::memory_order_release);
    }
    seg_->p2pDone(me, peer)->store(s, std::memory_order_release);
    recvDone_[p] = s;
  }
  *done = true;
  return ncclSuccess;
}

ncclResult_t ShmColls::runP2pGroup(const std::vector<OpDesc>& ops, const std::atomic<bool>& aborted) {
  if (ops.empty()) return ncclSuccess;
  if (!joined_) {
    MCCL_CHECK(join());
    joined_ = true;
  }
  // Numbered in call order (start()'s numbering), each with its cell found once (message
  // s's cell is fixed), not at every poll.
  p2pSteps_.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpDesc& op = ops[i];
    P2pStep& st = p2pSteps_[i];
    st.s = numberP2p(op);
    st.cell = p2pCellOf(op, st.s);
    st.piece = 0;
    st.done = false;
  }
  size_t left = ops.size();
  LoneWait wait(comm_, aborted, mpiComm_);
  for (;;) {
    bool moved = false;
    for (size_t i = 0; i < ops.size(); ++i) {
      P2pStep& st = p2pSteps_[i];
      if (st.done) continue;
      MCCL_CHECK(stepP2p(ops[i], st.s, st.cell, &st.piece, &st.done));
      if (!st.done) continue;
      moved = true;
      if (--left == 0) return ncclSuccess;
    }
    if (moved) {
      wait.progressed();
      continue;
    }
    MCCL_CHECK(wait.idle([&] {
      for (size_t i = 0; i < ops.size(); ++i)
        if (!p2pSteps_[i].done) {
          ShmOp o(ops[i]);
          o.s = p2pSteps_[i].s;
          return o.describe();
        }
      return std::string("completing");
    }));
  }
}

}  // namespace mccl
