// A block's start: the launch's communicator and works copied from the kernel parameters
// to shared memory, before the first work.
//
// The work functions reach DevComm and DevWork through references, and a load through a
// pointer into the parameters is slow: MCCL_PROFILE measured 1.25 us from an LL block's
// start to its first work's setup on an H100, two such loads deep. The copy is one round
// of 8-byte loads spread over the block's threads; every later read is shared memory.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/work/dev_work.h"

namespace mccl {

template <typename Args>
struct ArgsShared {
  DevComm comm;
  DevWork works[Args::kWorks];
};

// Every thread of the block calls it; ends with the block barrier.
template <typename Args>
__device__ __forceinline__ void copyArgsToShared(const Args& args, ArgsShared<Args>& a) {
  static_assert(sizeof(DevComm) % 8 == 0 && sizeof(DevWork) % 8 == 0, "copied in 8-byte words");
  static_assert(offsetof(Args, works) % 8 == 0, "works are 8-byte aligned");
  constexpr int kCommWords = sizeof(DevComm) / 8, kWorkWords = sizeof(DevWork) / 8;
  const int words = kCommWords + args.nworks * kWorkWords;
  const uint64_t* comm = reinterpret_cast<const uint64_t*>(&args.comm);
  const uint64_t* works = reinterpret_cast<const uint64_t*>(&args.works[0]);
  for (int i = threadIdx.x; i < words; i += blockDim.x) {
    if (i < kCommWords) reinterpret_cast<uint64_t*>(&a.comm)[i] = comm[i];
    else reinterpret_cast<uint64_t*>(&a.works[0])[i - kCommWords] = works[i - kCommWords];
  }
  __syncthreads();
}

}  // namespace mccl
