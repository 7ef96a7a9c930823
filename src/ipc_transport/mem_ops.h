// What the copy engines' waits share (ce_sync.h: the collectives' barriers; p2p_engine.h: a
// user's Send/Recv): words in a page of POSIX shared memory that the ranks of a node map and
// register with CUDA, written and waited on by stream memory operations (cuStreamBatchMemOp),
// and written by the host to let every wait go.
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

}  // namespace mccl
