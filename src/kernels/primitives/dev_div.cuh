// Division of a byte count by a channel or block count on the device. A 64-bit division by
// a variable is a subroutine of dozens of dependent instructions on the GPU; a kernel's
// split of its work among its blocks comes before its grid dependency wait, on the critical
// path of every launch whose stream was idle (a call made after the last one was waited
// for: libmccl_mpi's small calls, a solver's dot products). The counts these kernels split
// (LL and LL128 blocks, the direct kernels' works) fit 32 bits, and a 32-bit division is a
// few instructions.
#pragma once

#include <stdint.h>

namespace mccl {

// a / b and a % b (b > 0): in 32 bits when a fits them.
struct DivMod {
  uint64_t q, r;
};
__device__ __forceinline__ DivMod divModSmall(uint64_t a, uint32_t b) {
  if ((a >> 32) == 0) {
    const uint32_t a32 = static_cast<uint32_t>(a), q = a32 / b;
    return {q, a32 - q * b};
  }
  const uint64_t q = a / b;
  return {q, a - q * b};
}

}  // namespace mccl
