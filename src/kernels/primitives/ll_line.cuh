// The LL line (dev_work.h): 8 bytes of data and two copies of a flag, written with one
// 16-byte store and read by spinning on the line itself until both flags say it was
// written for the step the reader waits for. The LL protocol's FIFOs are made of them
// (ll_proto.cuh), and the direct path's plain-buffer works carry their offers and their
// staged parts in them (direct.h). Also the 8 bytes of user memory a line carries, at
// any alignment.
#pragma once

#include <stdint.h>

#include "kernels/primitives/dev_sync.cuh"
#include "kernels/work/dev_work.h"

namespace mccl {

__device__ __forceinline__ void llStore(uint4* p, uint64_t v, uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(static_cast<uint32_t>(v)),
               "r"(flag), "r"(static_cast<uint32_t>(v >> 32)), "r"(flag)
               : "memory");
}

// The slow part of reading a line: spins until its flags say it was written for this step.
// Returns 0 (and stops the block's work) when the communicator is aborted, the wait outlasts
// MCCL_TIMEOUT, or another thread of the block stopped. Inlined: a call would make the
// caller save its live registers around it (spills in the hot loop).
__device__ __forceinline__ uint64_t llReadSlow(const uint4* p, uint32_t flag, const DevComm* comm, int* abort, int peer) {
  uint64_t start = 0;
  for (uint32_t spins = 0;; ++spins) {
    uint32_t d0, f0, d1, f1;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(d0), "=r"(f0), "=r"(d1), "=r"(f1) : "l"(p) : "memory");
    if (f0 == flag && f1 == flag) return static_cast<uint64_t>(d1) << 32 | d0;
    if (spins == kSpinsPerCheck) {
      spins = 0;
      if (*reinterpret_cast<volatile int*>(abort)) return 0;
      if (waitShouldStop(*comm, &start, peer)) {
        *reinterpret_cast<volatile int*>(abort) = 1;
        return 0;
      }
    }
  }
}

__device__ __forceinline__ uint64_t llRead(const uint4* p, uint32_t flag, const DevComm* comm, int* abort, int peer) {
  uint32_t d0, f0, d1, f1;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(d0), "=r"(f0), "=r"(d1), "=r"(f1) : "l"(p) : "memory");
  if (f0 == flag && f1 == flag) return static_cast<uint64_t>(d1) << 32 | d0;
  return llReadSlow(p, flag, comm, abort, peer);
}

// Waits until the peer has consumed `need` steps (so the slot of step `need - 1 + kLlSlots`
// may be written). Inlined, like llReadSlow.
__device__ __forceinline__ void llWaitCredit(const uint64_t* head, uint64_t need, const DevComm* comm, int* abort, int peer) {
  uint64_t start = 0;
  for (uint32_t spins = 0; ldVolatile(head) < need; ++spins) {
    if (spins == kSpinsPerCheck) {
      spins = 0;
      if (*reinterpret_cast<volatile int*>(abort)) return;
      if (waitShouldStop(*comm, &start, peer)) {
        *reinterpret_cast<volatile int*>(abort) = 1;
        return;
      }
    }
  }
}

// 8 bytes (or the nbytes < 8 of a last line) of user memory, any alignment.
__device__ __forceinline__ uint64_t load8(const uint8_t* p, int nbytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (nbytes == 8 && (a & 7) == 0) return *reinterpret_cast<const uint64_t*>(p);
  if (nbytes == 8 && (a & 3) == 0) {
    const uint32_t* q = reinterpret_cast<const uint32_t*>(p);
    return static_cast<uint64_t>(q[1]) << 32 | q[0];
  }
  uint64_t v = 0;
  for (int b = 0; b < nbytes; ++b) v |= static_cast<uint64_t>(p[b]) << (8 * b);
  return v;
}
__device__ __forceinline__ void store8(uint8_t* p, uint64_t v, int nbytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (nbytes == 8 && (a & 7) == 0) {
    *reinterpret_cast<uint64_t*>(p) = v;
  } else if (nbytes == 8 && (a & 3) == 0) {
    uint32_t* q = reinterpret_cast<uint32_t*>(p);
    q[0] = static_cast<uint32_t>(v);
    q[1] = static_cast<uint32_t>(v >> 32);
  } else {
    for (int b = 0; b < nbytes; ++b) p[b] = static_cast<uint8_t>(v >> (8 * b));
  }
}

// Polls the lines p[u] whose bit is set in live until each holds flag[u], their loads issued
// together (one round trip for all once they have arrived); v[u] gets line u's data. False
// (the lines not read 0) when the block's work stopped, as llReadSlow.
template <int U>
__device__ __forceinline__ bool llPollLines(uint64_t (&v)[U], const uint4* const (&p)[U], const uint32_t (&flag)[U],
                                            uint32_t live, const DevComm* comm, int* abort, int peer) {
#pragma unroll
  for (int u = 0; u < U; ++u) v[u] = 0;
  uint64_t start = 0;
  for (uint32_t spins = 0; live; ++spins) {
    uint32_t d0[U], f0[U], d1[U], f1[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      d0[u] = d1[u] = f0[u] = f1[u] = 0;
      if (live >> u & 1)
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(d0[u]), "=r"(f0[u]), "=r"(d1[u]), "=r"(f1[u]) : "l"(p[u]) : "memory");
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if ((live >> u & 1) && f0[u] == flag[u] && f1[u] == flag[u]) {
        v[u] = static_cast<uint64_t>(d1[u]) << 32 | d0[u];
        live &= ~(1u << u);
      }
    }
    if (live && spins == kSpinsPerCheck) {
      spins = 0;
      if (*reinterpret_cast<volatile int*>(abort)) return false;
      if (waitShouldStop(*comm, &start, peer)) {
        *reinterpret_cast<volatile int*>(abort) = 1;
        return false;
      }
    }
  }
  return true;
}

}  // namespace mccl
