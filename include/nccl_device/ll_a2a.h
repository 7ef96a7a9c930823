/* mccl's nccl_device/ll_a2a.h: the LL all-to-all of NCCL 2.28's device API among the
 * members of an LSA team. A member stores a value into a slot of one member's buffer
 * (send) or of every member's (bcast); each 8 bytes of it travel in one 16-byte line
 * beside two copies of the epoch ({lo, epoch, hi, epoch}, one store), and the reader spins
 * on its own line until both copies carry the current epoch. No fence, no flag store, no
 * barrier: consecutive epochs use the two halves of the buffer in turn, and endEpoch's rule
 * (every member sent to and received from every peer in the epoch) keeps a writer out of
 * a half its reader may still read: to write epoch e + 2 into a half a peer must have
 * received from this member in epoch e + 1, which this member only sent after it finished
 * reading epoch e.
 *
 * Memory (a resource buffer made by ncclLLA2ACreateRequirement, in every member's resource
 * window), per block b of the handle, 16-byte lines: one header line (its first word keeps
 * the epoch minus 2 between kernels: 0 in a fresh buffer, so epochs start at 2), then
 * nSlots lines for even epochs and nSlots for odd ones. A value of T takes
 * ceil(sizeof(T) / 8) lines, a session's maxElts lines apart, so slot s of a session holds
 * lines s, s + maxElts, ...: nSlots >= ncclLLA2ACalcSlots(maxElts, sizeof(T)).
 * Epochs skip 0 and 1 (a cleared line holds 0). Each member clears both its halves in the
 * last two epochs before the count wraps past 2^32 - 1, so no line written 2^32 epochs ago
 * can pass for a new one. */
#ifndef _NCCL_DEVICE_LL_A2A_H_
#define _NCCL_DEVICE_LL_A2A_H_
#include "core.h"

/* Lines a slot range needs: maxElts values of at most maxEltSize bytes. */
NCCL_EXTERN_C __host__ int ncclLLA2ACalcSlots(int maxElts, int maxEltSize);
/* The requirement (a resource buffer for nBlocks blocks of nSlots lines per epoch half)
 * and the handle a session names it by once ncclDevCommCreate has placed the buffer. */
NCCL_EXTERN_C __host__ ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                                                               ncclDevResourceRequirements_t* outReq);

#if __CUDACC__
namespace mccl_dev {
/* A value as the 8-byte halves of its lines (zero past sizeof(T)). */
template <typename T>
struct LlA2AWords {
  static constexpr int kLines = (int)((sizeof(T) + 7) / 8);
  uint32_t w[kLines][2];
};
template <typename T>
NCCL_DEVICE_INLINE LlA2AWords<T> llA2APack(const T& v) {
  LlA2AWords<T> p = {};
  __builtin_memcpy(&p, &v, sizeof(T));
  return p;
}
NCCL_DEVICE_INLINE void llA2AStore(uint4* line, uint32_t lo, uint32_t hi, uint32_t epoch) {
  asm volatile("st.volatile.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(line), "r"(lo), "r"(epoch), "r"(hi), "r"(epoch)
               : "memory");
}
NCCL_DEVICE_INLINE uint4 llA2ALoad(const uint4* line) {
  uint4 v;
  asm volatile("ld.volatile.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(line)
               : "memory");
  return v;
}
}  // namespace mccl_dev

template <typename Coop>
struct ncclLLA2ASession_internal {
  Coop coop;
  ncclDevComm const& comm;
  ncclTeam team;
  ncclLLA2AHandle handle;
  int block;
  int pitch;       /* lines between the 8-byte parts of one slot's value (maxElts) */
  bool multimem;   /* accepted and ignored: mccl's stores are unicast */
  ncclMultimemHandle mmHandle;
  uint32_t epoch;
  uint32_t slotsOffset; /* lines from the buffer's start to this block's half of this epoch */

  NCCL_DEVICE_INLINE uint4* header() const {
    return (uint4*)ncclGetResourceBufferLocalPointer(comm, handle.bufHandle) + (size_t)block * (1 + 2 * handle.nSlots);
  }
  NCCL_DEVICE_INLINE uint32_t halfOffset() const {
    return (uint32_t)block * (1 + 2 * handle.nSlots) + 1 + (epoch & 1) * handle.nSlots;
  }
  /* Member peer's lines of this epoch, and this member's own (its local pointer). */
  NCCL_DEVICE_INLINE uint4* linesOf(int peer) const {
    return (uint4*)ncclGetResourceBufferPeerPointer(comm, handle.bufHandle, team, peer) + slotsOffset;
  }
  NCCL_DEVICE_INLINE uint4* ownLines() const {
    return (uint4*)ncclGetResourceBufferLocalPointer(comm, handle.bufHandle) + slotsOffset;
  }
  template <typename T>
  NCCL_DEVICE_INLINE void store(uint4* line, const mccl_dev::LlA2AWords<T>& p) const {
#pragma unroll
    for (int u = 0; u < mccl_dev::LlA2AWords<T>::kLines; u++)
      mccl_dev::llA2AStore(line + (size_t)u * pitch, p.w[u][0], p.w[u][1], epoch);
  }
};

template <typename Coop>
struct ncclLLA2ASession : ncclLLA2ASession_internal<Coop> {
  /* Block `block` (< the handle's nBlocks) of an LL all-to-all over team (within the LSA
   * team), its values at most maxElts slots apart in each of their lines. Every member of
   * coop constructs it; one session per (handle, block) alive at a time on each member.
   * multimem is accepted and ignored. */
  NCCL_DEVICE_INLINE ncclLLA2ASession(Coop coop, ncclDevComm const& comm, ncclTeam team, ncclLLA2AHandle handle,
                                      uint32_t block, int maxElts, bool multimem = false,
                                      ncclMultimemHandle mmHandle = {})
      : ncclLLA2ASession_internal<Coop>{coop, comm, team, handle, (int)block, maxElts, multimem, mmHandle, 0u, 0u} {
    this->epoch = *(volatile uint32_t*)&this->header()->x + 2;
    this->slotsOffset = this->halfOffset();
  }

  /* Keeps the epoch for the next session of this block. */
  NCCL_DEVICE_INLINE ~ncclLLA2ASession() {
    if (this->coop.thread_rank() == 0) *(volatile uint32_t*)&this->header()->x = this->epoch - 2;
    this->coop.sync();
  }

  ncclLLA2ASession(ncclLLA2ASession const&) = delete;

  /* data into slot `slot` of team member peer (any thread). */
  template <typename T>
  NCCL_DEVICE_INLINE void send(int peer, int slot, T data) {
    this->store(this->linesOf(peer) + slot, mccl_dev::llA2APack(data));
  }

  /* data into slot `slot` of every member, this one too, each member starting from the
   * next one so that the members do not all store to the same peer at once. */
  template <typename T>
  NCCL_DEVICE_INLINE void bcast(int slot, T data) {
    const mccl_dev::LlA2AWords<T> p = mccl_dev::llA2APack(data);
    const int n = this->team.nRanks;
    int r = this->team.rank;
#pragma unroll 1
    for (int i = 0; i < n; i++) {
      r = r + 1 == n ? 0 : r + 1;
      this->store(this->linesOf(r) + slot, p);
    }
  }

  /* The value of this epoch in this member's slot `slot` (waits for it). */
  template <typename T>
  NCCL_DEVICE_INLINE T recv(int slot) {
    T v[1];
    recvUnrolled<1, 1>(slot, 1, 0, v);
    return v[0];
  }

  /* vals[u] = the value in slot eltStart + u * eltStride for u < eltCount (eltCount <=
   * MaxEltCount; the first MinEltCount are taken as present whatever eltCount says), all
   * loads in flight together. */
  template <int MinEltCount, int MaxEltCount, typename T>
  NCCL_DEVICE_INLINE void recvUnrolled(int eltStart, int eltCount, int eltStride, T (&vals)[MaxEltCount]) {
    constexpr int kLines = mccl_dev::LlA2AWords<T>::kLines;
    const uint4* base = this->ownLines() + eltStart;
    uint4 got[MaxEltCount][kLines];
#pragma unroll 1
    for (;;) {
      bool all = true;
#pragma unroll
      for (int u = 0; u < MaxEltCount; u++) {
        if (u < MinEltCount || u < eltCount) {
#pragma unroll
          for (int v = 0; v < kLines; v++) {
            got[u][v] = mccl_dev::llA2ALoad(base + (size_t)u * eltStride + (size_t)v * this->pitch);
            all &= got[u][v].y == this->epoch && got[u][v].w == this->epoch;
          }
        }
      }
      if (all) break;
    }
#pragma unroll
    for (int u = 0; u < MaxEltCount; u++) {
      if (u < MinEltCount || u < eltCount) {
        mccl_dev::LlA2AWords<T> p;
#pragma unroll
        for (int v = 0; v < kLines; v++) {
          p.w[v][0] = got[u][v].x;
          p.w[v][1] = got[u][v].z;
        }
        __builtin_memcpy(&vals[u], &p, sizeof(T));
      }
    }
  }

  /* reduce over the eltCount values in slots eltStart + i * eltStride, in slot order,
   * each first turned into the accumulator's type by eltToAcc; Unroll values in flight.
   * With eltCount < 1 nothing is waited for and the accumulator is value-initialised. */
  template <int Unroll, typename Elt, typename EltToAcc, typename Reduce>
  NCCL_DEVICE_INLINE auto recvReduce(int eltStart, int eltCount, int eltStride, EltToAcc eltToAcc, Reduce red)
      -> decltype(eltToAcc(nccl::utility::declval<Elt>())) {
    using Acc = decltype(eltToAcc(nccl::utility::declval<Elt>()));
    Acc acc{};
#pragma unroll 1
    for (int i = 0; i < eltCount; i += Unroll) {
      Elt got[Unroll];
      const int n = eltCount - i < Unroll ? eltCount - i : Unroll;
      if (n == Unroll) recvUnrolled<Unroll, Unroll>(eltStart + i * eltStride, Unroll, eltStride, got);
      else recvUnrolled<1, Unroll>(eltStart + i * eltStride, n, eltStride, got);
#pragma unroll
      for (int j = 0; j < Unroll; j++)
        if (j < n) acc = i == 0 && j == 0 ? eltToAcc(got[0]) : red(acc, eltToAcc(got[j]));
    }
    return acc;
  }

  /* Ends the epoch: every member of coop calls it, after, for every member of the team,
   * some thread of coop sent to it and some thread received from a slot it sent to. */
  NCCL_DEVICE_INLINE void endEpoch(Coop) {
    if (this->epoch >= 0xfffffffeu) {
      /* The count wraps after the next epoch: clear this half so that no line left in it
       * carries an epoch of the coming cycle. Visible before this member's next sends,
       * which are what let a peer write into the half again. */
      this->coop.sync();
      uint4* half = this->ownLines();
      for (int i = this->coop.thread_rank(); i < (int)this->handle.nSlots; i += this->coop.size())
        half[i] = make_uint4(0, 0, 0, 0);
      __threadfence_system();
    }
    this->coop.sync();
    this->epoch = this->epoch == 0xffffffffu ? 2u : this->epoch + 1;
    this->slotsOffset = this->halfOffset();
  }
};
#endif /* __CUDACC__ */

#endif /* _NCCL_DEVICE_LL_A2A_H_ */
