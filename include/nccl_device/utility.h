/* mccl's nccl_device/utility.h: the qualifiers the device API's declarations use (as
 * NVIDIA's NCCL 2.28 header names them) and the nccl::utility helpers. */
#ifndef _NCCL_DEVICE_UTILITY_H_
#define _NCCL_DEVICE_UTILITY_H_
/* nccl.h first: it brings the CUDA headers, which define __host__. */
#include <nccl.h>

#if __CUDACC__
#define NCCL_DEVICE_INLINE __device__ __forceinline__
#define NCCL_HOST_DEVICE_INLINE __host__ __device__ __forceinline__
#else
#ifndef __host__
#define __host__
#endif
#define NCCL_DEVICE_INLINE
#define NCCL_HOST_DEVICE_INLINE inline __attribute__((always_inline))
#endif

#if __cplusplus
#define NCCL_EXTERN_C extern "C"
#else
#define NCCL_EXTERN_C
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if __CUDACC__
#include <cuda/atomic>
#endif

#if __cplusplus
/* nccl::utility: the integer and ordering helpers NCCL 2.28's device API names in its
 * declarations (recvReduce's return type uses declval) and that kernels written for it
 * may call. Sizes are of the caller's integer types; "Pow2" helpers assume a power of two. */
namespace nccl {
namespace utility {

/* Only in unevaluated contexts (decltype). */
template <typename T>
T&& declval() noexcept;

template <typename T, T v>
struct ValueAsType {
  static constexpr T value = v;
};

template <typename X, typename Y, typename Z = decltype(X() + Y())>
NCCL_HOST_DEVICE_INLINE constexpr Z divUp(X x, Y y) {
  return (x + y - 1) / y;
}
template <typename X, typename Y, typename Z = decltype(X() + Y())>
NCCL_HOST_DEVICE_INLINE constexpr Z roundUp(X x, Y y) {
  return divUp<X, Y, Z>(x, y) * y;
}
template <typename X, typename Y, typename Z = decltype(X() + Y())>
NCCL_HOST_DEVICE_INLINE constexpr Z roundDown(X x, Y y) {
  return x - x % y;
}
/* a is a power of two. */
template <typename X, typename Y, typename Z = decltype(X() + Y())>
NCCL_HOST_DEVICE_INLINE constexpr Z alignUp(X x, Y a) {
  return (x + a - 1) & -Z(a);
}
template <typename X, typename Y, typename Z = decltype(X() + int())>
NCCL_HOST_DEVICE_INLINE constexpr Z alignDown(X x, Y a) {
  return x & -Z(a);
}
template <typename Int>
NCCL_HOST_DEVICE_INLINE constexpr bool isPow2(Int x) {
  return (x & (x - 1)) == 0;
}

/* a <= b for counters that wrap modulo 2^nBits (a and b less than half the range apart). */
template <typename Uint>
NCCL_HOST_DEVICE_INLINE bool rollingLessEq(Uint a, Uint b, int nBits = 8 * sizeof(Uint)) {
  static_assert(Uint(0) < Uint(-1), "rollingLessEq: Uint must be unsigned");
  const Uint mask = Uint(-1) >> (8 * sizeof(Uint) - nBits);
  return ((b - a) & mask) <= (mask >> 1);
}
template <typename Uint>
NCCL_HOST_DEVICE_INLINE bool rollingLessThan(Uint a, Uint b, int nBits = 8 * sizeof(Uint)) {
  return !rollingLessEq(b, a, nBits);
}

/* Division by a divisor known ahead: idivFast32(x, y, idivRcp32(y)) == x / y. */
NCCL_HOST_DEVICE_INLINE constexpr uint32_t idivRcp32(uint32_t y) { return uint32_t(-1) / y + isPow2(y); }
NCCL_HOST_DEVICE_INLINE uint32_t mul32hi(uint32_t a, uint32_t b) {
#if __CUDA_ARCH__
  return __umulhi(a, b);
#else
  return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}
NCCL_HOST_DEVICE_INLINE void idivmodFast32(uint32_t* quo, uint32_t* rem, uint32_t x, uint32_t y, uint32_t yrcp) {
  uint32_t q = yrcp == 0 ? x : mul32hi(x, yrcp);
  uint32_t r = x - y * q;
  if (r >= y) {
    q += 1;
    r -= y;
  }
  *quo = q;
  *rem = r;
}
NCCL_HOST_DEVICE_INLINE uint32_t idivFast32(uint32_t x, uint32_t y, uint32_t yrcp) {
  uint32_t q, r;
  idivmodFast32(&q, &r, x, y, yrcp);
  return q;
}
NCCL_HOST_DEVICE_INLINE uint32_t imodFast32(uint32_t x, uint32_t y, uint32_t yrcp) {
  uint32_t q, r;
  idivmodFast32(&q, &r, x, y, yrcp);
  return r;
}

#if __CUDACC__
/* The acquire half and the release half of a memory order. */
NCCL_DEVICE_INLINE cuda::memory_order acquireOrderOf(cuda::memory_order o) {
  return o == cuda::memory_order_release ? cuda::memory_order_relaxed
         : o == cuda::memory_order_acq_rel ? cuda::memory_order_acquire
                                           : o;
}
NCCL_DEVICE_INLINE cuda::memory_order releaseOrderOf(cuda::memory_order o) {
  return o == cuda::memory_order_acquire ? cuda::memory_order_relaxed
         : o == cuda::memory_order_acq_rel ? cuda::memory_order_release
                                           : o;
}
NCCL_DEVICE_INLINE int lane() {
  int r;
  asm("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}
NCCL_DEVICE_INLINE unsigned int lanemask_lt() {
  unsigned int r;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
  return r;
}
#endif

}  // namespace utility
}  // namespace nccl
#endif /* __cplusplus */

#endif /* _NCCL_DEVICE_UTILITY_H_ */
