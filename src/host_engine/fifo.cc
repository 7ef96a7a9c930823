#include "host_engine/fifo.h"

#include <cstring>

#include "core/error.h"

namespace mccl {
namespace {
inline uint64_t loadAcquire(const uint8_t* p) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(p), __ATOMIC_ACQUIRE);
}
inline void storeRelease(uint8_t* p, uint64_t v) {
  __atomic_store_n(reinterpret_cast<uint64_t*>(p), v, __ATOMIC_RELEASE);
}
}  // namespace

FifoSend::FifoSend(FifoLayout layout, uint8_t* localHead, PeerMemory fifo)
    : layout_(layout), head_(localHead), fifo_(fifo) {
  if (!fifo_.direct) {
    staging_.resize(layout_.slots * layout_.slotBytes);
    words_.resize(2 * layout_.slots);
  }
}

void* FifoSend::acquire() {
  uint64_t head = loadAcquire(head_);
  if (posted_ - head >= layout_.slots) return nullptr;
  uint64_t slot = posted_ % layout_.slots;
  if (fifo_.direct) return fifo_.direct + layout_.dataOff() + slot * layout_.slotBytes;
  return staging_.data() + slot * layout_.slotBytes;
}

ncclResult_t FifoSend::post(size_t bytes) {
  uint64_t slot = posted_ % layout_.slots;
  ++posted_;
  if (fifo_.direct) {
    std::memcpy(fifo_.direct + FifoLayout::kSizesOff + 8 * slot, &bytes, 8);
    storeRelease(fifo_.direct + FifoLayout::kTailOff, posted_);
    return ncclSuccess;
  }
  // Data, its size, a fence, then the tail: the receiver never sees a tail before data.
  uint64_t* w = &words_[2 * slot];
  w[0] = bytes;
  w[1] = posted_;
  UcxWorker* uw = fifo_.worker;
  if (bytes)
    MCCL_CHECK(uw->put(fifo_.rank, fifo_.ep, staging_.data() + slot * layout_.slotBytes, bytes, fifo_.remote,
                       layout_.dataOff() + slot * layout_.slotBytes));
  MCCL_CHECK(uw->put(fifo_.rank, fifo_.ep, &w[0], 8, fifo_.remote, FifoLayout::kSizesOff + 8 * slot));
  uw->fence();
  return uw->put(fifo_.rank, fifo_.ep, &w[1], 8, fifo_.remote, FifoLayout::kTailOff);
}

FifoRecv::FifoRecv(FifoLayout layout, uint8_t* localFifo, PeerMemory head)
    : layout_(layout), fifo_(localFifo), head_(head) {
  if (!head_.direct) words_.resize(layout_.slots);
}

const void* FifoRecv::peek(size_t* bytes) {
  uint64_t tail = loadAcquire(fifo_ + FifoLayout::kTailOff);
  // A tail written by a put may be read mid-update: accept only a plausible value.
  if (tail <= consumed_ || tail > consumed_ + layout_.slots) return nullptr;
  uint64_t slot = consumed_ % layout_.slots;
  uint64_t size;
  std::memcpy(&size, fifo_ + FifoLayout::kSizesOff + 8 * slot, 8);
  *bytes = size;
  return fifo_ + layout_.dataOff() + slot * layout_.slotBytes;
}

ncclResult_t FifoRecv::release() {
  uint64_t slot = consumed_ % layout_.slots;
  ++consumed_;
  if (!head_.usable()) return ncclSuccess;  // the sender has ended (HostTransport::finish)
  if (head_.direct) {
    storeRelease(head_.direct, consumed_);
    return ncclSuccess;
  }
  words_[slot] = consumed_;
  return head_.worker->put(head_.rank, head_.ep, &words_[slot], 8, head_.remote, 0);
}

}  // namespace mccl
