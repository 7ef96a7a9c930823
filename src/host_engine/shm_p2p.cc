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
// No FIFO credits, no schedule, no Work.
#include <cstring>

#include "core/comm.h"
#include "core/error.h"
#include "core/types.h"
#include "host_engine/shm_coll.h"
#include "host_engine/shm_segment.h"

namespace mccl {

ncclResult_t ShmColls::progressP2p(ShmOp& o) {
  const OpDesc& op = o.op;
  const int me = comm_->rank, peer = op.root;
  const size_t p = static_cast<size_t>(peer);
  const size_t bytes = op.count * datatypeSize(op.datatype);
  const bool inCell = bytes <= kShmP2pInlineBytes;
  if (!joined_) {
    MCCL_CHECK(join());
    joined_ = true;
  }
  o.waitRank = peer;
  if (op.kind == OpKind::Send) {
    // A pair's messages are written in order. Their slots are taken in the order written,
    // so every message in a slot has its pair's earlier ones written before it, and its
    // receiver, reading in order, can always reach it: slots held by messages nobody can
    // read yet (a later message written while an earlier one waited for a slot) would
    // deadlock a group that sends more slot-sized messages than there are slots.
    if (sent_[p] != o.s - 1) return ncclSuccess;
    // No wait for the peer (it may not have attached yet: the name stays while a message
    // waits for it, shm_segment.h), only for a free cell and slot: they are the eager buffer.
    // The cell is free once the peer has read the message that used it last.
    const uint64_t depth = static_cast<uint64_t>(p2pDepth_);
    if (o.s > depth && sendFreed_[p] < o.s - depth) {
      sendFreed_[p] = seg_->p2pDone(peer, me)->load(std::memory_order_acquire);
      if (sendFreed_[p] < o.s - depth) return ncclSuccess;
    }
    ShmP2pCell* c = seg_->p2pCell(peer, me, o.s);
    const char* src = static_cast<const char*>(op.sendbuff);
    if (inCell) {
      std::memcpy(c->data, src, bytes);
      c->bytes = bytes;
      c->seq.store(o.s, std::memory_order_release);
    } else {
      // The next slot, free once the receiver of its last use has read it (slot uses are
      // numbered in the order this rank sends, whatever the peer).
      const uint64_t u = slotUses_ + 1, slots = static_cast<uint64_t>(seg_->layout().slotDepth);
      if (u > slots && seg_->p2pSlotRead(me, u)->load(std::memory_order_acquire) < u - slots) return ncclSuccess;
      slotUses_ = u;
      c->bytes = bytes;
      c->slotUse = u;
      c->written.store(0, std::memory_order_relaxed);
      c->seq.store(o.s, std::memory_order_release);
      char* slot = seg_->p2pSlot(me, u);
      const ShmPieces pieces = shmPiecesOf(bytes, true);
      for (int i = 0; i < pieces.count; ++i) {
        const size_t at = pieces.at(i), len = pieces.len(i, bytes);
        std::memcpy(slot + at, src + at, len);
        c->written.store(at + len, std::memory_order_release);
      }
    }
    sent_[p] = o.s;
  } else {
    // A pair's messages are read in order: the read counter frees cells in order.
    if (recvDone_[p] != o.s - 1) return ncclSuccess;
    const ShmP2pCell* c = seg_->p2pCell(me, peer, o.s);
    if (c->seq.load(std::memory_order_acquire) != o.s) return ncclSuccess;
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
      for (; o.piece < pieces.count; ++o.piece) {
        const size_t at = pieces.at(o.piece), len = pieces.len(o.piece, bytes);
        if (c->written.load(std::memory_order_acquire) < at + len) return ncclSuccess;
        std::memcpy(dst + at, slot + at, len);
      }
      seg_->p2pSlotRead(peer, c->slotUse)->store(c->slotUse, std::memory_order_release);
    }
    seg_->p2pDone(me, peer)->store(o.s, std::memory_order_release);
    recvDone_[p] = o.s;
  }
  o.state = 2;
  o.waitRank = -1;
  return ncclSuccess;
}

}  // namespace mccl
