/* mccl's nccl_device/ptr.h: ncclSymPtr<T>, a typed position in a registered window that
 * names the same place in every member's buffer (window + byte offset). Arithmetic moves
 * it by elements of T on the host and the GPU alike; the pointer functions turn it into
 * this rank's, an LSA member's or a world rank's address with the window's own lookups
 * (core.h), NULL where that rank's buffer cannot be reached by load and store. As NVIDIA's
 * NCCL 2.28.3 declares it; the implementation is mccl's. */
#ifndef _NCCL_DEVICE_PTR_H_
#define _NCCL_DEVICE_PTR_H_
#include "core.h"

#if __cplusplus
template <typename T>
struct ncclSymPtr {
  using ElementType = T;
  ncclWindow_t window;
  size_t offset; /* bytes from the start of the window */

  NCCL_HOST_DEVICE_INLINE constexpr ncclSymPtr(ncclWindow_t window = nullptr, size_t offset = 0)
      : window(window), offset(offset) {}

  /* The same place seen as elements of U. */
  template <typename U>
  NCCL_HOST_DEVICE_INLINE operator ncclSymPtr<U>() const {
    return ncclSymPtr<U>(window, offset);
  }

  /* d elements of T forward (+=) or back (-=); the offset wraps modulo 2^64 as a
   * pointer's address would, so a step back and forth returns to the same place. */
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator+=(int d) { return step(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator+=(unsigned int d) { return step(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator+=(long d) { return step(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator+=(unsigned long d) { return step(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator+=(long long d) { return step(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator+=(unsigned long long d) { return step(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator-=(int d) { return stepBack(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator-=(unsigned int d) { return stepBack(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator-=(long d) { return stepBack(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator-=(unsigned long d) { return stepBack(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator-=(long long d) { return stepBack(d); }
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& operator-=(unsigned long long d) { return stepBack(d); }

#if __CUDACC__
  /* This rank's buffer at this place. */
  NCCL_DEVICE_INLINE T* localPtr() const { return (T*)ncclGetLocalPointer(window, offset); }
  /* LSA member peer's buffer (NULL outside the LSA team). */
  NCCL_DEVICE_INLINE T* lsaPtr(int peer) const { return (T*)ncclGetLsaPointer(window, offset, peer); }
  /* World rank peer's buffer (NULL when it is not in this rank's LSA team). */
  NCCL_DEVICE_INLINE T* peerPtr(int peer) const { return (T*)ncclGetPeerPointer(window, offset, peer); }
  /* Member peer of team's buffer (NULL when it is not in this rank's LSA team). */
  NCCL_DEVICE_INLINE T* peerPtr(ncclTeam team, int peer) const {
    return (T*)ncclGetPeerPointer(window, offset, team, peer);
  }
  /* Multicast addresses: NULL (mccl makes no NVLink multicast memory). */
  NCCL_DEVICE_INLINE T* multimemPtr(ncclMultimemHandle mmHandle) const {
    return (T*)ncclGetMultimemPointer(window, offset, mmHandle);
  }
  NCCL_DEVICE_INLINE T* lsaMultimemPtr(ncclDevComm const& comm) const {
    return (T*)ncclGetLsaMultimemPointer(window, offset, comm);
  }
#endif

 private:
  /* d elements in bytes, modulo 2^64 (a negative d becomes its two's complement). */
  template <typename Int>
  NCCL_HOST_DEVICE_INLINE static size_t bytesOf(Int d) {
    return (size_t)d * sizeof(T);
  }
  template <typename Int>
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& step(Int d) {
    offset += bytesOf(d);
    return *this;
  }
  template <typename Int>
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>& stepBack(Int d) {
    offset -= bytesOf(d);
    return *this;
  }
};

template <typename T, typename Int>
NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> operator+(ncclSymPtr<T> p, Int d) {
  return p += d;
}
template <typename T, typename Int>
NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> operator-(ncclSymPtr<T> p, Int d) {
  return p -= d;
}
/* Elements of T from b to a (both in the same window). */
template <typename T>
NCCL_HOST_DEVICE_INLINE ptrdiff_t operator-(ncclSymPtr<T> a, ncclSymPtr<T> b) {
  return (ptrdiff_t)(a.offset - b.offset) / (ptrdiff_t)sizeof(T);
}
template <typename T>
NCCL_HOST_DEVICE_INLINE bool operator==(ncclSymPtr<T> a, ncclSymPtr<T> b) {
  return a.window == b.window && a.offset == b.offset;
}
template <typename T>
NCCL_HOST_DEVICE_INLINE bool operator!=(ncclSymPtr<T> a, ncclSymPtr<T> b) {
  return !(a == b);
}
#endif /* __cplusplus */

#endif /* _NCCL_DEVICE_PTR_H_ */
