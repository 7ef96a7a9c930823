/* mccl's nccl_device/barrier.h: NCCL 2.28's combined barrier session, in its LSA form.
 * NVIDIA's ncclBarrierSession joins an LSA barrier (the ranks of a node) and a GIN barrier
 * (the network); mccl has no GIN, so the session here is the LSA one: built from
 * ncclTeamTagLsa and a device communicator, it syncs the LSA team through the device
 * communicator's LSA barrier `index`, exactly as ncclLsaBarrierSession does. The forms
 * that take an ncclGin (world and rail teams) are not declared. */
#ifndef _NCCL_DEVICE_BARRIER_H_
#define _NCCL_DEVICE_BARRIER_H_
#include "lsa_barrier.h"

#if __cplusplus
/* How a GIN barrier orders network operations; only Relaxed exists in 2.28. */
enum class ncclGinFenceLevel { Relaxed };
#endif

#if __CUDACC__
template <typename Coop>
struct ncclBarrierSession_internal {
  Coop coop;
  ncclLsaBarrierSession<Coop> innerLsaBar;
};

template <typename Coop>
struct ncclBarrierSession : ncclBarrierSession_internal<Coop> {
  /* Barrier `index` (< lsaBarrierCount of the device communicator's requirements) over
   * the LSA team. multimem is accepted and ignored. */
  NCCL_DEVICE_INLINE ncclBarrierSession(Coop coop, ncclTeamTagLsa tag, ncclDevComm const& comm, uint32_t index,
                                        bool multimem = false)
      : ncclBarrierSession_internal<Coop>{coop, ncclLsaBarrierSession<Coop>(coop, comm, tag, index, multimem)} {}

  ncclBarrierSession(ncclBarrierSession const&) = delete;

  NCCL_DEVICE_INLINE ncclLsaBarrierSession<Coop>& lsaBarrier() { return this->innerLsaBar; }

  /* The LSA barrier's sync with this order; the fence level concerns GIN only. */
  NCCL_DEVICE_INLINE void sync(Coop coop, cuda::memory_order order, ncclGinFenceLevel) {
    this->innerLsaBar.sync(coop, order);
  }
};
#endif /* __CUDACC__ */

#endif /* _NCCL_DEVICE_BARRIER_H_ */
