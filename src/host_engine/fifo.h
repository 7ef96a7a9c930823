// The connection protocol of the host data path: a FIFO of `slots` slots of `slotBytes`
// in the receiver's memory, a tail counter next to it (written by the sender after the
// data), and a head counter in the sender's memory (written by the receiver when a slot
// is consumed). The sender never runs more than `slots` messages ahead.
//
// Each counter and the FIFO are reached either directly (same process, or a peer region
// UCX maps into this process with ucp_rkey_ptr) or with UCX RMA puts: data, then its
// size, a fence, then the tail. With puts the sender stages a message in local memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nccl.h"
#include "ucx_transport/ucx.h"

namespace mccl {

struct FifoLayout {
  uint32_t slots = 8;
  uint64_t slotBytes = 0;
  static constexpr uint64_t kTailOff = 0;
  static constexpr uint64_t kSizesOff = 64;
  uint64_t dataOff() const { return kSizesOff + ((8ull * slots + 63) & ~63ull); }
  uint64_t bytes() const { return dataOff() + slots * slotBytes; }
  static constexpr uint64_t kHeadBytes = 64;
};

// How one side writes into the other side's memory.
struct PeerMemory {
  uint8_t* direct = nullptr;  // mapped pointer, or null
  UcxWorker* worker = nullptr;
  ucp_ep_h ep = nullptr;
  UcxRemote remote;
  int rank = -1;
  bool usable() const { return direct != nullptr || worker != nullptr; }
};

class FifoSend {
 public:
  FifoSend(FifoLayout layout, uint8_t* localHead, PeerMemory fifo);
  // Where to build the next message (at most maxBytes()), or null while no slot is free.
  void* acquire();
  ncclResult_t post(size_t bytes);
  size_t maxBytes() const { return layout_.slotBytes; }
  bool direct() const { return fifo_.direct != nullptr; }
  uint64_t posted() const { return posted_; }

 private:
  FifoLayout layout_;
  uint8_t* head_;  // local word the receiver advances
  PeerMemory fifo_;
  std::vector<uint8_t> staging_;  // put mode: message buffers
  std::vector<uint64_t> words_;   // put mode: size and tail values, stable until complete
  uint64_t posted_ = 0;
};

class FifoRecv {
 public:
  FifoRecv(FifoLayout layout, uint8_t* localFifo, PeerMemory head);
  // The next message and its size, or null when none has arrived.
  const void* peek(size_t* bytes);
  ncclResult_t release();
  uint64_t consumed() const { return consumed_; }

 private:
  FifoLayout layout_;
  uint8_t* fifo_;  // local region the sender fills
  PeerMemory head_;
  std::vector<uint64_t> words_;  // put mode: head values
  uint64_t consumed_ = 0;
};

}  // namespace mccl
