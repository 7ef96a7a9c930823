// The copy-engine path's barriers as stream memory operations (kernels/plan/direct_plan.cc
// launchCopyEngines): no block of any SM waits while the copy engines move a collective's
// bytes. NCCL 2.28's copy-engine collectives wait the same way (cuStreamBatchMemOp).
//
// The words live in host memory that every rank of the communicator maps (one POSIX
// shared-memory segment per communicator, registered with CUDA in each process), so that
// this rank's host can always write them: abort and a lost peer release every wait at
// once (release()), which a word in device memory would not allow (the host reaches
// device memory only through a stream, and that stream may sit behind the wait).
//
// Layout: word[r][q] (r, q < kDirectMaxRanks), the last barrier rank q reached, written by
// rank q's stream into rank r's row. Barrier k of a rank's stream: write k into word[q][me]
// of every peer q (the write follows a memory barrier: what the stream did before, the
// copies into q's window among it, is visible first), then wait until every word[me][q]
// reaches k (a signed 64-bit comparison, so it never wraps). Every rank counts its
// barriers alike: the same collectives take the path on every rank.
//
// Eager launches only: a CUDA graph replays the values it captured, so a captured launch
// keeps the barrier kernel (one block), whose epochs live on the device.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "nccl.h"

struct ncclComm;

namespace mccl {

class CeSync {
 public:
  // Collective over comm, whose ranks are all one node's (at most kDirectMaxRanks): the
  // segment made by rank 0, mapped and registered by every rank. name: equal on every rank,
  // and different for every live communicator of the node. Null on every rank when any
  // rank could not (its reason in *why on that rank); the caller then keeps the kernel.
  static std::unique_ptr<CeSync> create(ncclComm* comm, uint64_t name, std::string* why);
  ~CeSync();  // releases, waits for the device, unregisters and unmaps
  CeSync(const CeSync&) = delete;
  CeSync& operator=(const CeSync&) = delete;

  // Enqueues the next barrier on stream (eager: never while capturing).
  ncclResult_t barrier(ncclComm* comm, cudaStream_t stream);
  // Every wait this rank enqueued, and every later one, passes: its row is set far past
  // the last barrier issued (abort, a lost peer). Any thread.
  void release();
  // The barrier this rank's stream sits in, as the words show it (the host's watch,
  // mem_ops.h): its count, with a peer not there yet in *peer; 0 when the stream is in none.
  uint64_t waitingAt(int* peer) const;
  uint64_t barriers() const { return issued_.load(std::memory_order_relaxed); }

 private:
  CeSync() = default;
  volatile uint64_t* row(int r) const { return words_ + static_cast<size_t>(r) * kRowWords; }
  static constexpr int kRowWords = 8;  // kDirectMaxRanks, one 64-byte line per rank

  int rank_ = 0, nranks_ = 0, dev_ = -1;
  volatile uint64_t* words_ = nullptr;  // host address of the segment
  uint64_t devWords_ = 0;               // its device address (CUdeviceptr)
  size_t bytes_ = 0;
  bool registered_ = false;
  std::atomic<uint64_t> issued_{0};
};

}  // namespace mccl
