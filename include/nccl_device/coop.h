/* mccl's nccl_device/coop.h: the cooperative groups of the device API. A Coop is a set of
 * threads that calls a device-API function together; each offers thread_rank(), size(),
 * num_threads() (= size()) and sync(), the subset of CUDA's Cooperative Groups NCCL uses. */
#ifndef _NCCL_DEVICE_COOP_H_
#define _NCCL_DEVICE_COOP_H_
#include "utility.h"

#if __CUDACC__
namespace mccl_dev {
NCCL_DEVICE_INLINE int laneId() {
  int l;
  asm("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}
NCCL_DEVICE_INLINE uint32_t lanesBelow() {
  uint32_t m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}
}  // namespace mccl_dev

/* N consecutive lanes of a warp, N a power of two up to 32, aligned to N. */
template <int nThreadsPow2>
struct ncclCoopTile {
  static_assert(nThreadsPow2 >= 1 && nThreadsPow2 <= 32 && (nThreadsPow2 & (nThreadsPow2 - 1)) == 0,
                "ncclCoopTile<N>: N must be a power of two from 1 to 32");
  NCCL_DEVICE_INLINE int thread_rank() const { return mccl_dev::laneId() & (nThreadsPow2 - 1); }
  NCCL_DEVICE_INLINE constexpr int size() const { return nThreadsPow2; }
  NCCL_DEVICE_INLINE constexpr int num_threads() const { return nThreadsPow2; }
  NCCL_DEVICE_INLINE uint32_t laneMask() const {
    const uint32_t ones = nThreadsPow2 == 32 ? 0xffffffffu : ((1u << nThreadsPow2) - 1u);
    return ones << (mccl_dev::laneId() & ~(nThreadsPow2 - 1));
  }
  NCCL_DEVICE_INLINE void sync() {
    if (nThreadsPow2 > 1) __syncwarp(laneMask());
  }
};

typedef ncclCoopTile<1> ncclCoopThread;
typedef ncclCoopTile<32> ncclCoopWarp;

/* The lanes of this warp named by a mask. */
struct ncclCoopLanes {
  uint32_t lmask;
  NCCL_DEVICE_INLINE constexpr ncclCoopLanes(uint32_t lmask = 0xffffffffu) : lmask(lmask) {}
  NCCL_DEVICE_INLINE int thread_rank() const { return __popc(lmask & mccl_dev::lanesBelow()); }
  NCCL_DEVICE_INLINE int size() const { return __popc(lmask); }
  NCCL_DEVICE_INLINE int num_threads() const { return __popc(lmask); }
  NCCL_DEVICE_INLINE void sync() { __syncwarp(lmask); }
};

/* nWarps consecutive warps from warp0, with an id in [0, 15] that no other span in use at
 * the same time has (it names the hardware barrier they sync on). */
struct ncclCoopWarpSpan {
  uint32_t warp0 : 8, nWarps : 8, id : 8;
  NCCL_DEVICE_INLINE constexpr ncclCoopWarpSpan(int warp0, int nWarps, int id)
      : warp0((uint32_t)warp0), nWarps((uint32_t)nWarps), id((uint32_t)id) {}
  NCCL_DEVICE_INLINE int thread_rank() const { return (int)threadIdx.x - 32 * (int)warp0; }
  NCCL_DEVICE_INLINE int size() const { return 32 * (int)nWarps; }
  NCCL_DEVICE_INLINE int num_threads() const { return 32 * (int)nWarps; }
  NCCL_DEVICE_INLINE void sync() { __barrier_sync_count(1 + id, 32 * nWarps); }
};

/* Every thread of the block (one-dimensional blocks). */
struct ncclCoopCta {
  NCCL_DEVICE_INLINE int thread_rank() const { return (int)threadIdx.x; }
  NCCL_DEVICE_INLINE int size() const { return (int)blockDim.x; }
  NCCL_DEVICE_INLINE int num_threads() const { return (int)blockDim.x; }
  NCCL_DEVICE_INLINE void sync() { __syncthreads(); }
};

template <int n>
NCCL_DEVICE_INLINE uint32_t ncclCoopGetLaneMask(ncclCoopTile<n> coop) { return coop.laneMask(); }
NCCL_DEVICE_INLINE uint32_t ncclCoopGetLaneMask(ncclCoopLanes coop) { return coop.lmask; }
NCCL_DEVICE_INLINE uint32_t ncclCoopGetLaneMask(ncclCoopWarpSpan) { return 0xffffffffu; }
NCCL_DEVICE_INLINE uint32_t ncclCoopGetLaneMask(ncclCoopCta) { return 0xffffffffu; }

template <int n>
NCCL_DEVICE_INLINE constexpr bool ncclCoopIsThread(ncclCoopTile<n>) { return n == 1; }
NCCL_DEVICE_INLINE constexpr bool ncclCoopIsThread(ncclCoopLanes) { return false; }
NCCL_DEVICE_INLINE constexpr bool ncclCoopIsThread(ncclCoopWarpSpan) { return false; }
NCCL_DEVICE_INLINE constexpr bool ncclCoopIsThread(ncclCoopCta) { return false; }

template <int n>
NCCL_DEVICE_INLINE constexpr bool ncclCoopWithinWarp(ncclCoopTile<n>) { return true; }
NCCL_DEVICE_INLINE constexpr bool ncclCoopWithinWarp(ncclCoopLanes) { return true; }
NCCL_DEVICE_INLINE constexpr bool ncclCoopWithinWarp(ncclCoopWarpSpan) { return false; }
NCCL_DEVICE_INLINE constexpr bool ncclCoopWithinWarp(ncclCoopCta) { return false; }

/* ---- ncclCoopBcast: the value of member `root` (a thread_rank of coop), for every
 * member. Every member of coop calls it with the same root; T is copied as bytes (at most
 * 16 for the groups that span warps, which pass it through shared memory). entrySync:
 * sync coop first, so members still reading the previous broadcast of a warp-spanning
 * group are done with its slot (false where the caller knows they are). */
namespace mccl_dev {
/* T as 32-bit words, for the warp shuffles. */
template <typename T>
union Words {
  static constexpr int n = (int)((sizeof(T) + 3) / 4);
  uint32_t w[n];
  T v;
  NCCL_DEVICE_INLINE Words() {}
};
/* One 16-byte slot per warp span id (0..15) and one for the block, in shared memory. */
NCCL_DEVICE_INLINE ulong2* bcastSpanSlots() {
  __shared__ ulong2 slots[16];
  return slots;
}
NCCL_DEVICE_INLINE ulong2* bcastCtaSlot() {
  __shared__ ulong2 slot;
  return &slot;
}
template <typename T, typename Coop>
NCCL_DEVICE_INLINE T bcastThrough(Coop coop, ulong2* slot, T value, int root, bool entrySync) {
  static_assert(sizeof(T) <= sizeof(ulong2), "ncclCoopBcast: a group wider than a warp passes at most 16 bytes");
  if (entrySync) coop.sync();
  if (coop.thread_rank() == root) *(T*)slot = value;
  coop.sync();
  return *(T const*)slot;
}
}  // namespace mccl_dev

template <int nThreads, typename T>
NCCL_DEVICE_INLINE T ncclCoopBcast(ncclCoopTile<nThreads> coop, T value, int root, bool entrySync = true) {
  (void)entrySync; /* a shuffle reads registers: nothing to wait for */
  mccl_dev::Words<T> u;
  u.v = value;
#pragma unroll
  for (int i = 0; i < mccl_dev::Words<T>::n; ++i) u.w[i] = __shfl_sync(coop.laneMask(), u.w[i], root, nThreads);
  return u.v;
}
template <typename T>
NCCL_DEVICE_INLINE T ncclCoopBcast(ncclCoopLanes coop, T value, int root, bool entrySync = true) {
  (void)entrySync;
  const int lane = (int)__fns(coop.lmask, 0, root + 1); /* the (root+1)-th lane of the mask */
  mccl_dev::Words<T> u;
  u.v = value;
#pragma unroll
  for (int i = 0; i < mccl_dev::Words<T>::n; ++i) u.w[i] = __shfl_sync(coop.lmask, u.w[i], lane);
  return u.v;
}
template <typename T>
NCCL_DEVICE_INLINE T ncclCoopBcast(ncclCoopWarpSpan coop, T value, int root, bool entrySync = true) {
  return mccl_dev::bcastThrough(coop, mccl_dev::bcastSpanSlots() + coop.id, value, root, entrySync);
}
template <typename T>
NCCL_DEVICE_INLINE T ncclCoopBcast(ncclCoopCta coop, T value, int root, bool entrySync = true) {
  return mccl_dev::bcastThrough(coop, mccl_dev::bcastCtaSlot(), value, root, entrySync);
}

/* The lanes of this warp active now. */
NCCL_DEVICE_INLINE ncclCoopLanes ncclCoopCoalesced() { return ncclCoopLanes(__activemask()); }
/* The lanes of this warp that take part in a collective of coop. */
template <typename Coop>
NCCL_DEVICE_INLINE ncclCoopTile<32> ncclCoopCoalesced(Coop) { return ncclCoopTile<32>(); }
NCCL_DEVICE_INLINE ncclCoopLanes ncclCoopCoalesced(ncclCoopLanes coop) { return coop; }
template <int n>
NCCL_DEVICE_INLINE ncclCoopTile<n> ncclCoopCoalesced(ncclCoopTile<n> coop) { return coop; }
#endif /* __CUDACC__ */

#endif /* _NCCL_DEVICE_COOP_H_ */
