// Small Send/Recv in the shared-memory segment (host_engine/shm_coll.h): message k from rank
// q to rank r goes into cell k % depth of the pair's ring, its size and number beside the
// data. The sender writes the data and size, then the number (release); the receiver
// checks the number (acquire) and the size, copies the data out and publishes k as read,
// which frees the cell for message k + depth. A message of up to 48 B is one cache line
// from writer to reader, as a collective's line is; no FIFO credits, no schedule, no Work.
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
  if (!joined_) {
    MCCL_CHECK(join());
    joined_ = true;
  }
  o.waitRank = peer;
  if (op.kind == OpKind::Send) {
    // No wait for the peer (it may not have attached yet: the name stays while a message
    // waits for it, shm_segment.h), only for a free cell: the ring is the eager buffer.
    // The cell is free once the peer has read the message that used it last.
    const uint64_t depth = static_cast<uint64_t>(p2pDepth_);
    if (o.s > depth && sendFreed_[p] < o.s - depth) {
      sendFreed_[p] = seg_->p2pDone(peer, me)->load(std::memory_order_acquire);
      if (sendFreed_[p] < o.s - depth) return ncclSuccess;
    }
    ShmP2pCell* c = seg_->p2pCell(peer, me, o.s);
    std::memcpy(c->data, op.sendbuff, bytes);
    c->bytes = bytes;
    c->seq.store(o.s, std::memory_order_release);
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
    std::memcpy(op.recvbuff, c->data, bytes);
    seg_->p2pDone(me, peer)->store(o.s, std::memory_order_release);
    recvDone_[p] = o.s;
  }
  o.state = 2;
  o.waitRank = -1;
  return ncclSuccess;
}

}  // namespace mccl
