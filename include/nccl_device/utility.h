/* mccl's nccl_device/utility.h: the qualifiers the device API's declarations use
 * (as NVIDIA's NCCL 2.28 header names them). */
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

#endif /* _NCCL_DEVICE_UTILITY_H_ */
