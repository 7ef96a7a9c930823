/* mccl's nccl_device/lsa_barrier.h: barriers among the members of an LSA team, run by a
 * cooperative group of each member's kernel.
 *
 * Memory of one set of nBarriers barriers (a resource buffer, in every member's resource
 * window), per member: nBarriers epoch words (this member's count of completed syncs of
 * each barrier, kept between kernels), then nBarriers x team.nRanks inbox words: inbox
 * [index][j] holds the last epoch member j arrived at. arrive() stores epoch + 1 into
 * every member's inbox[index][me]; wait() spins until every inbox[index][j] of its own
 * reached it. Counters only grow (compared modulo 2^32), so nothing is ever reset. */
#ifndef _NCCL_DEVICE_LSA_BARRIER_H_
#define _NCCL_DEVICE_LSA_BARRIER_H_
#include "core.h"

/* The requirement (a resource buffer) for nBarriers barriers over team, and the handle a
 * session names them by once ncclDevCommCreate has placed the buffer. */
NCCL_EXTERN_C __host__ ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t, int nBarriers,
                                                                    ncclLsaBarrierHandle_t* outHandle,
                                                                    ncclDevResourceRequirements_t* outReq);

#if __CUDACC__
template <typename Coop>
struct ncclLsaBarrierSession_internal {
  Coop coop;
  ncclDevComm const& comm;
  ncclTeam team;
  ncclLsaBarrierHandle handle;
  int index;
  bool multimem;
  ncclMultimemHandle mmHandle;
  uint32_t epoch;

  NCCL_DEVICE_INLINE uint32_t* epochWord() {
    return (uint32_t*)ncclGetResourceBufferLocalPointer(comm, handle.bufHandle) + index;
  }
  /* member owner's inbox word written by member from */
  NCCL_DEVICE_INLINE uint32_t* inbox(int owner, int from) {
    uint32_t* base = (uint32_t*)ncclGetResourceBufferPeerPointer(comm, handle.bufHandle, team, owner);
    return base + handle.nBarriers + index * team.nRanks + from;
  }
};

template <typename Coop>
struct ncclLsaBarrierSession : ncclLsaBarrierSession_internal<Coop> {
  /* Barrier `index` (< handle.nBarriers) of a set made for team. At most one session per
   * (handle, index) is alive at a time on each member. multimem is accepted and ignored
   * (mccl's barriers are unicast). */
  NCCL_DEVICE_INLINE ncclLsaBarrierSession(Coop coop, ncclDevComm const& comm, ncclTeam team,
                                           ncclLsaBarrierHandle handle, uint32_t index, bool multimem = false,
                                           ncclMultimemHandle mmHandle = {})
      : ncclLsaBarrierSession_internal<Coop>{coop, comm, team, handle, (int)index, multimem, mmHandle, 0u} {
    this->epoch = *(volatile uint32_t*)this->epochWord();
  }
  /* Barrier `index` of the device communicator's own LSA barriers (lsaBarrierCount). */
  NCCL_DEVICE_INLINE ncclLsaBarrierSession(Coop coop, ncclDevComm const& comm, ncclTeamTagLsa, uint32_t index,
                                           bool multimem = false)
      : ncclLsaBarrierSession(coop, comm, ncclTeamLsa(comm), comm.lsaBarrier, index, multimem, comm.lsaMultimem) {}

  /* Keeps the epoch for the next session of this barrier. */
  NCCL_DEVICE_INLINE ~ncclLsaBarrierSession() {
    if (this->coop.thread_rank() == 0) *(volatile uint32_t*)this->epochWord() = this->epoch;
    this->coop.sync();
  }

  ncclLsaBarrierSession(ncclLsaBarrierSession const&) = delete;

  /* Tells every member this one has reached the barrier. With a release order (release,
   * acq_rel, seq_cst) the group's earlier memory operations are visible to a member
   * before it sees the arrival. */
  NCCL_DEVICE_INLINE void arrive(Coop, cuda::memory_order order) {
    this->coop.sync();
    const bool release = order == cuda::memory_order_release || order == cuda::memory_order_acq_rel ||
                         order == cuda::memory_order_seq_cst;
    const uint32_t next = this->epoch + 1;
    const int me = this->team.rank;
    for (int j = this->coop.thread_rank(); j < this->team.nRanks; j += this->coop.size()) {
      cuda::atomic_ref<uint32_t, cuda::thread_scope_system> word(*this->inbox(j, me));
      if (release) {
        cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
        word.store(next, cuda::memory_order_release);
      } else {
        word.store(next, cuda::memory_order_relaxed);
      }
    }
    this->epoch = next;
  }

  /* Waits until every member has arrived (the last arrive() of this session). With an
   * acquire order (acquire, acq_rel, seq_cst) the members' memory operations before their
   * arrival are visible to the whole group afterwards. */
  NCCL_DEVICE_INLINE void wait(Coop, cuda::memory_order order) {
    const bool acquire = order == cuda::memory_order_acquire || order == cuda::memory_order_acq_rel ||
                         order == cuda::memory_order_seq_cst || order == cuda::memory_order_consume;
    const uint32_t target = this->epoch;
    for (int j = this->coop.thread_rank(); j < this->team.nRanks; j += this->coop.size()) {
      cuda::atomic_ref<uint32_t, cuda::thread_scope_system> word(*this->inbox(this->team.rank, j));
      while ((int32_t)(word.load(acquire ? cuda::memory_order_acquire : cuda::memory_order_relaxed) - target) < 0) {
      }
    }
    if (acquire) cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
    this->coop.sync();
  }

  /* arrive() then wait(). */
  NCCL_DEVICE_INLINE void sync(Coop coop, cuda::memory_order order) {
    arrive(coop, order);
    wait(coop, order);
  }
};
#endif /* __CUDACC__ */

#endif /* _NCCL_DEVICE_LSA_BARRIER_H_ */
