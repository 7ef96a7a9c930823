// What a communicator holds, by kind: every allocation of the data path is added here when
// made and taken away when freed, so mcclCommMemoryInfo (and mccl-perf --memory) can say
// where a communicator's memory goes, and tests can check that destroy returns all of it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace mccl {

enum class MemKind : int {
  Fifo,        // receive FIFOs on this GPU (Simple and LL connections)
  Control,     // the connection table and the flag words (heads) peers write
  Scratch,     // staging a collective needs besides FIFOs (binomial Reduce)
  Tables,      // ring order, node table, profile counters
  HostMapped,  // pinned host memory mapped for the GPU (error flags, network staging)
  PeerMapped,  // peers' FIFOs and flag words mapped into this process (CUDA IPC)
  kCount
};

class MemLedger {
 public:
  void add(MemKind k, size_t bytes) { bytes_[static_cast<int>(k)].fetch_add(bytes, std::memory_order_relaxed); }
  void sub(MemKind k, size_t bytes) { bytes_[static_cast<int>(k)].fetch_sub(bytes, std::memory_order_relaxed); }
  size_t get(MemKind k) const { return bytes_[static_cast<int>(k)].load(std::memory_order_relaxed); }

 private:
  std::atomic<size_t> bytes_[static_cast<int>(MemKind::kCount)] = {};
};

}  // namespace mccl
