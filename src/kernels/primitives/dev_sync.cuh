// Device-side waiting and ordering shared by the protocols: volatile loads, system fences,
// the global timer, named barriers, and the abort/timeout check every wait makes.
#pragma once

#include <stdint.h>

#include "kernels/work/dev_work.h"

namespace mccl {

__device__ __forceinline__ uint64_t ldVolatile(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint64_t ldAcquireSys(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void stVolatile(uint64_t* p, uint64_t v) {
  asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void stReleaseSys(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
// The two words of a receiving connection's user-buffer offer and its ack word, in the
// receiver's FIFO region (ConnRegion; buf is the region's data, as DevConn::buf).
__device__ __forceinline__ uint64_t* offerWords(uint8_t* buf) {
  return reinterpret_cast<uint64_t*>(buf - ConnRegion::kDataOff + ConnRegion::kOfferOff);
}
__device__ __forceinline__ uint64_t* ackWord(uint8_t* buf) {
  return reinterpret_cast<uint64_t*>(buf - ConnRegion::kDataOff + ConnRegion::kAckOff);
}
// The two words of units by agreement (dev_work.h, kUnitsAgree), in the receiver's region.
__device__ __forceinline__ uint64_t* agreeWords(uint8_t* buf) {
  return reinterpret_cast<uint64_t*>(buf - ConnRegion::kDataOff + ConnRegion::kAgreeOff);
}
// A receiver's offer (dev_work.h, user buffers): the address, then the count (release).
__device__ __forceinline__ void postOffer(uint8_t* buf, const void* out, uint64_t count) {
  uint64_t* o = offerWords(buf);
  stVolatile(o, reinterpret_cast<uint64_t>(out));
  stReleaseSys(o + 1, count + 1);
}
// Orders this GPU's earlier accesses (and, through the block barrier, its block's) before
// later ones at system scope. acq_rel is what the protocol needs and is much cheaper than
// the sequentially consistent fence __threadfence_system() issues.
__device__ __forceinline__ void fenceSys(int mode) {
  if (mode == 1) asm volatile("fence.sc.sys;" ::: "memory");
  else asm volatile("fence.acq_rel.sys;" ::: "memory");
}
__device__ __forceinline__ uint64_t globalTimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void laneSync(int id, int nthreads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
}

// Spins between checks of the abort flag and the clock.
constexpr uint32_t kSpinsPerCheck = 1024;

// The slow part of every wait, called once per kSpinsPerCheck spins: true when the wait
// must end because the communicator was aborted, the wait has lasted longer than
// MCCL_TIMEOUT (recorded in host-mapped memory, with the peer waited for), or an earlier
// wait of this communicator already failed. The error word is never cleared, so a kernel
// queued behind a timed-out one ends at its first check instead of waiting out its own
// timeout for a peer that has given up. *start is the wait's start time, 0 before the
// first check.
__device__ __forceinline__ bool waitShouldStop(const DevComm& comm, uint64_t* start, int peer) {
  if (*comm.abortFlag) {
    atomicCAS(comm.error, kDevOk, kDevAborted);
    return true;
  }
  if (*reinterpret_cast<volatile int32_t*>(comm.error) != kDevOk) return true;
  const uint64_t now = globalTimer();
  if (*start == 0) *start = now;
  if (comm.timeoutNs && now - *start > comm.timeoutNs) {
    if (atomicCAS(comm.error, kDevOk, kDevTimeout) == kDevOk) *comm.errorPeer = peer;
    return true;
  }
  return false;
}

}  // namespace mccl
