// What the copy engines' waits share (ce_sync.h: the collectives' barriers; p2p_engine.h: a
// user's Send/Recv): words in a page of POSIX shared memory that the ranks of a node map and
// register with CUDA, written and waited on by stream memory operations (cuStreamBatchMemOp),
// and written by the host to let every wait go; and the host's watch over those waits,
// which no clock on the device bounds (MemOpWatched).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace mccl {

// A released word is set this far past the last count issued: every wait enqueued, and
// every later one, passes (the waits compare the signed 64-bit difference, so within 2^63).
constexpr uint64_t kMemOpReleaseAhead = uint64_t{1} << 40;

// cuStreamBatchMemOp through the runtime's entry point (null: the driver has none).
typedef CUresult (*BatchMemOpFn)(CUstream, unsigned int, CUstreamBatchMemOpParams*, unsigned int);
BatchMemOpFn batchMemOp();
// Whether dev runs 64-bit stream memory operations (asked rather than assumed).
bool memOps64(int dev);
// One 64-bit write of value to addr, after a memory barrier (what the stream did before is
// visible first); one wait until the word at addr reaches value (signed difference).
CUstreamBatchMemOpParams memOpWrite(uint64_t addr, uint64_t value);
CUstreamBatchMemOpParams memOpWaitGeq(uint64_t addr, uint64_t value);

// A page (or pages) of POSIX shared memory: opened by name (made zero-filled where create
// and absent; exclusive: only if absent), sized to bytes and mapped. Null with *why on failure.
void* mapSharedPage(const char* name, size_t bytes, bool create, bool exclusive, std::string* why);
// Registers [p, p + bytes) with CUDA (mapped, portable) and returns its device address, or 0
// (nothing left registered) where the driver refuses.
uint64_t registerSharedPage(void* p, size_t bytes);

// A kernel that waits for a peer gives up after MCCL_TIMEOUT by its own clock; a stream
// memory operation cannot. So the host watches them: one thread of the process, started by
// the first watchMemOpWaits, asks every watched object each 100 ms which wait its streams
// sit in, read from the words (this rank's own count written, the peer's not yet), and
// tells it once that wait has not moved for MCCL_TIMEOUT seconds (0: never).
class MemOpWatched {
 public:
  // The wait this rank's streams sit in now, as a token that differs from wait to wait
  // (0: none), with the peer waited for in *peer. Called on the watching thread.
  virtual uint64_t memOpWaitToken(int* peer) = 0;
  // The wait of token has not moved for seconds: let every wait go and fail the
  // communicator, as a kernel's timeout does. Called on the watching thread.
  virtual void memOpWaitTimedOut(int peer, double seconds) = 0;

 protected:
  ~MemOpWatched() = default;
};
// Watches w (again: no effect). Any thread.
void watchMemOpWaits(MemOpWatched* w);
// When it returns, no call into w runs and none will. Any thread but the watching one.
void unwatchMemOpWaits(MemOpWatched* w);

}  // namespace mccl
