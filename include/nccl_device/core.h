/* mccl's nccl_device/core.h: the types, teams and window pointers of NCCL 2.28's device
 * API, for the ranks of one node that reach each other's GPU memory by load and store
 * (the LSA team). Declarations and host-visible layouts as in NVIDIA's NCCL 2.28.3 header;
 * the implementation is mccl's (see the README's "Device API" section for what is and is
 * not supported). */
#ifndef _NCCL_DEVICE_CORE_H_
#define _NCCL_DEVICE_CORE_H_
#include <nccl.h>

#include "coop.h"
#include "utility.h"

struct ncclDevComm;
typedef struct ncclDevComm ncclDevComm_t;

struct ncclTeam;
typedef struct ncclTeam ncclTeam_t;

/* typedef struct ncclWindow_vidmem* ncclWindow_t;  (nccl.h) */

struct ncclMultimemHandle;
typedef struct ncclMultimemHandle ncclMultimemHandle_t;

typedef uint32_t ncclDevResourceHandle;
typedef ncclDevResourceHandle ncclDevResourceHandle_t;

typedef uint32_t ncclGinSignal_t;
typedef uint32_t ncclGinCounter_t;

struct ncclLsaBarrierHandle;
typedef struct ncclLsaBarrierHandle ncclLsaBarrierHandle_t;

struct ncclGinBarrierHandle;
typedef struct ncclGinBarrierHandle ncclGinBarrierHandle_t;

struct ncclLLA2AHandle;
typedef struct ncclLLA2AHandle ncclLLA2AHandle_t;

/* A set of ranks: nRanks of them, this rank is member `rank`, and member i is world rank
 * worldRank + (i - rank) * stride. */
struct ncclTeam {
  int nRanks, rank, stride;
};

#if __cplusplus
template <typename T>
struct ncclSymPtr;
struct ncclTeamTagWorld {};
struct ncclTeamTagLsa {};
struct ncclTeamTagRail {};
#endif

struct ncclDevCommRequirements;
typedef struct ncclDevCommRequirements ncclDevCommRequirements_t;
struct ncclDevResourceRequirements;
typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
struct ncclTeamRequirements;
typedef struct ncclTeamRequirements ncclTeamRequirements_t;

/* What ncclDevCommCreate must provide. mccl provides resourceRequirementsList (buffers of
 * the resource window; their GIN signals and counters must be 0), teamRequirementsList
 * without multimem, and lsaBarrierCount. lsaMultimem (and a team's multimem) needs NVLink
 * multicast memory, which mccl never makes: asking is ncclInvalidUsage, as on NCCL without
 * NVLink SHARP (multimem pointers are NULL). barrierCount, railGinBarrierCount,
 * ginForceEnable, ginSignalCount and ginCounterCount need the GPU-initiated network, which
 * mccl does not provide: a request for them is ncclInvalidUsage. lsaLLA2ABlockCount and
 * lsaLLA2ASlotCount are accepted and reserve nothing: NCCL 2.28's ncclDevComm has no
 * handle to reach such a buffer; an LL all-to-all takes its buffer from
 * ncclLLA2ACreateRequirement in resourceRequirementsList. */
struct ncclDevCommRequirements {
  ncclDevResourceRequirements_t* resourceRequirementsList;
  ncclTeamRequirements_t* teamRequirementsList;

  bool lsaMultimem;

  int barrierCount;
  int lsaBarrierCount;
  int railGinBarrierCount;

  int lsaLLA2ABlockCount, lsaLLA2ASlotCount;

  bool ginForceEnable;
  int ginContextCount;
  int ginSignalCount;
  int ginCounterCount;
};

/* Every field zero: nothing required. (NCCL 2.29's name for the initializer; 2.28 programs
 * zero the struct.) */
#define NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER \
  { NULL, NULL, false, 0, 0, 0, 0, 0, false, 0, 0, 0 }

struct ncclDevResourceRequirements {
  ncclDevResourceRequirements_t* next;
  size_t bufferSize, bufferAlign;
  ncclDevResourceHandle_t* outBufferHandle; /* set by ncclDevCommCreate when not NULL */
  int ginSignalCount;
  int ginCounterCount;
  ncclGinSignal_t* outGinSignalStart;
  ncclGinCounter_t* outGinCounterStart;
};

struct ncclTeamRequirements {
  ncclTeamRequirements_t* next;
  ncclTeam_t team;
  bool multimem;
  ncclMultimemHandle_t* outMultimemHandle; /* set by ncclDevCommCreate when not NULL */
};

/* A registered window as kernels see it (ncclWindow_t points to one in device memory).
 * mccl's layout (72 bytes, the size of NVIDIA's): the members' buffers are separate CUDA
 * IPC mappings, so the window carries a table of them rather than one flat range. */
struct ncclWindow_vidmem {
  void* winHost;        /* mccl's host record of the window (never read on the GPU) */
  char* localPtr;       /* this rank's buffer */
  char* const* lsaPtrs; /* lsaSize pointers in device memory: LSA member i's buffer */
  int lsaRank;
  int worldRank;
  int lsaSize;
  uint32_t flags;       /* the winFlags of ncclCommWindowRegister */
  uint64_t size;        /* bytes of the window */
  void* reserved[3];
};

struct ncclMultimemHandle {
  void* mcBasePtr; /* always NULL in mccl: NVLink multicast is not used */
};

struct ncclLsaBarrierHandle {
  ncclDevResourceHandle_t bufHandle;
  int nBarriers;
};

struct ncclGinBarrierHandle {
  ncclGinSignal_t signal0;
  ncclDevResourceHandle_t bufHandle;
};

struct ncclLLA2AHandle {
  ncclDevResourceHandle_t bufHandle;
  uint32_t nSlots;
};

#if __cplusplus
struct ncclDevCommWindowTable {
  struct Entry {
    uintptr_t base, size;
    ncclWindow_t window;
  } entries[32];
  struct ncclDevCommWindowTable* next;
};
#else
struct ncclDevCommWindowTable;
#endif

/* A device communicator: passed by value to kernels. Layout as NVIDIA's. */
struct ncclDevComm {
  int rank, nRanks;
  uint32_t nRanks_rcp32;
  int lsaRank, lsaSize;
  uint32_t lsaSize_rcp32;

  struct ncclDevCommWindowTable* windowTable; /* the communicator's windows (ncclFindWindow) */

  ncclWindow_t resourceWindow; /* the device communicator's own window (barriers, buffers) */
  struct ncclWindow_vidmem resourceWindow_inlined;

  ncclMultimemHandle_t lsaMultimem;
  ncclLsaBarrierHandle_t lsaBarrier;
  ncclGinBarrierHandle_t railGinBarrier;

  uint8_t ginContextCount;
  uint8_t ginTypes[4];
  void* ginHandles[4];
  uint32_t ginSignalBase;
  int ginSignalCount;
  uint32_t ginCounterBase;
  int ginCounterCount;
  uint64_t* ginSignalShadows;
};

NCCL_EXTERN_C __host__ ncclResult_t ncclDevCommCreate(ncclComm_t, ncclDevCommRequirements_t const*,
                                                      ncclDevComm_t* outDevComm);
NCCL_EXTERN_C __host__ ncclResult_t ncclDevCommDestroy(ncclComm_t, ncclDevComm_t const* devComm);

/* ---- Teams ---- */

NCCL_EXTERN_C __host__ ncclTeam_t ncclTeamWorld(ncclComm_t);
NCCL_EXTERN_C __host__ ncclTeam_t ncclTeamLsa(ncclComm_t);
NCCL_EXTERN_C __host__ ncclTeam_t ncclTeamRail(ncclComm_t);
NCCL_EXTERN_C __host__ int ncclTeamRankToWorld(ncclComm_t, ncclTeam_t, int rank);
NCCL_EXTERN_C __host__ int ncclTeamRankToLsa(ncclComm_t, ncclTeam_t, int rank);

#if __cplusplus
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamWorld(ncclDevComm const& comm) {
  ncclTeam t;
  t.nRanks = comm.nRanks;
  t.rank = comm.rank;
  t.stride = 1;
  return t;
}
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamLsa(ncclDevComm const& comm) {
  ncclTeam t;
  t.nRanks = comm.lsaSize;
  t.rank = comm.lsaRank;
  t.stride = 1;
  return t;
}
/* The ranks with this rank's LSA index, one per LSA team (all LSA teams of one size). */
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamRail(ncclDevComm const& comm) {
  ncclTeam t;
  t.nRanks = comm.nRanks / comm.lsaSize;
  t.rank = comm.rank / comm.lsaSize;
  t.stride = comm.lsaSize;
  return t;
}
NCCL_HOST_DEVICE_INLINE int ncclTeamRankToWorld(ncclDevComm const& comm, ncclTeam team, int rank) {
  return comm.rank + (rank - team.rank) * team.stride;
}
NCCL_HOST_DEVICE_INLINE int ncclTeamRankToLsa(ncclDevComm const& comm, ncclTeam team, int rank) {
  return comm.lsaRank + (rank - team.rank) * team.stride;
}
#endif

/* Is member bPeer of team b a member of team a (both teams contain this rank)? */
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE bool ncclTeamRankIsMember(ncclTeam_t a, ncclTeam_t b, int bPeer) {
  const int delta = (bPeer - b.rank) * b.stride; /* world distance from this rank */
  if (delta % a.stride != 0) return false;
  const int aPeer = a.rank + delta / a.stride;
  return aPeer >= 0 && aPeer < a.nRanks;
}
/* Member bPeer of team b as a member of team a. */
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE int ncclTeamRankToTeam(ncclTeam_t a, ncclTeam_t b, int bPeer) {
  return a.rank + (bPeer - b.rank) * b.stride / a.stride;
}
/* The team of parent's members whose index differs from this rank's only below
 * innerSize (blocks of innerSize consecutive members). */
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE ncclTeam_t ncclTeamInnerFactor(ncclTeam_t parent, int innerSize) {
  ncclTeam_t t;
  t.nRanks = innerSize;
  t.rank = parent.rank % innerSize;
  t.stride = parent.stride;
  return t;
}
/* The team of parent's members at this rank's place in every block of innerSize. */
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE ncclTeam_t ncclTeamOuterFactor(ncclTeam_t parent, int innerSize) {
  ncclTeam_t t;
  t.nRanks = parent.nRanks / innerSize;
  t.rank = parent.rank / innerSize;
  t.stride = parent.stride * innerSize;
  return t;
}
/* The index'th member (in parent's order) of parent's members that are not in subset
 * (subset is a sub-team of parent containing this rank). */
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE int ncclTeamRankInDifference(ncclTeam_t parent, ncclTeam_t subset, int index) {
  /* subset's members, as parent indices, form an arithmetic progression first + k*step. */
  int step = subset.stride / parent.stride;
  int first = parent.rank - subset.rank * step;
  int count = subset.nRanks;
  if (step < 0) {
    step = -step;
    first -= (count - 1) * step;
  }
  /* Walk the gaps: before first, between consecutive members, after the last. */
  if (index < first) return index;
  index -= first;
  const int inner = (count - 1) * (step - 1); /* non-members between first and last member */
  if (index < inner) return first + 1 + (index / (step - 1)) * step + index % (step - 1);
  return first + (count - 1) * step + 1 + (index - inner);
}

/* ---- Windows and the resource window ---- */

/* Offset of a resource buffer inside the device communicator's resource window (handles
 * count 128-byte units). */
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE size_t ncclGetResourceBufferOffset(ncclDevResourceHandle_t h) {
  return (size_t)h * 128;
}

#if __CUDACC__
namespace mccl_dev {
NCCL_DEVICE_INLINE char* lsaBase(ncclWindow_t w, int lsaPeer) {
  char* const* table = (char* const*)__ldg((unsigned long long const*)&w->lsaPtrs);
  const int n = __ldg(&w->lsaSize);
  if ((unsigned)lsaPeer >= (unsigned)n) return nullptr;
  return (char*)__ldg((unsigned long long const*)&table[lsaPeer]);
}
NCCL_DEVICE_INLINE char* lsaBaseInline(ncclWindow_vidmem const& w, int lsaPeer) {
  if ((unsigned)lsaPeer >= (unsigned)w.lsaSize) return nullptr;
  return (char*)__ldg((unsigned long long const*)&w.lsaPtrs[lsaPeer]);
}
NCCL_DEVICE_INLINE void* offsetOrNull(char* base, size_t offset) { return base ? (void*)(base + offset) : nullptr; }
}  // namespace mccl_dev

/* This rank's buffer of window w, offset bytes in. */
NCCL_DEVICE_INLINE void* ncclGetLocalPointer(ncclWindow_t w, size_t offset) {
  return (char*)__ldg((unsigned long long const*)&w->localPtr) + offset;
}
/* LSA member peer's buffer of w, offset bytes in, as this GPU reaches it (load/store).
 * NULL when peer is not a member of the LSA team. */
NCCL_DEVICE_INLINE void* ncclGetLsaPointer(ncclWindow_t w, size_t offset, int peer) {
  return mccl_dev::offsetOrNull(mccl_dev::lsaBase(w, peer), offset);
}
/* World rank peer's buffer of w (NULL when peer is not in this rank's LSA team). */
NCCL_DEVICE_INLINE void* ncclGetPeerPointer(ncclWindow_t w, size_t offset, int peer) {
  const int i = __ldg(&w->lsaRank) + (peer - __ldg(&w->worldRank));
  return mccl_dev::offsetOrNull(mccl_dev::lsaBase(w, i), offset);
}
/* Member peer of team tm's buffer of w (NULL when not in this rank's LSA team). */
NCCL_DEVICE_INLINE void* ncclGetPeerPointer(ncclWindow_t w, size_t offset, ncclTeam tm, int peer) {
  const int i = __ldg(&w->lsaRank) + (peer - tm.rank) * tm.stride;
  return mccl_dev::offsetOrNull(mccl_dev::lsaBase(w, i), offset);
}
/* Multicast (NVLink SHARP) pointers: mccl never makes multicast memory, so NULL. */
NCCL_DEVICE_INLINE void* ncclGetMultimemPointer(ncclWindow_t, size_t, ncclMultimemHandle) { return nullptr; }
NCCL_DEVICE_INLINE void* ncclGetLsaMultimemPointer(ncclWindow_t, size_t, ncclDevComm const&) { return nullptr; }

NCCL_DEVICE_INLINE void* ncclGetResourceBufferLocalPointer(ncclDevComm const& comm, ncclDevResourceHandle h) {
  return comm.resourceWindow_inlined.localPtr + ncclGetResourceBufferOffset(h);
}
NCCL_DEVICE_INLINE void* ncclGetResourceBufferLsaPointer(ncclDevComm const& comm, ncclDevResourceHandle h, int peer) {
  return mccl_dev::offsetOrNull(mccl_dev::lsaBaseInline(comm.resourceWindow_inlined, peer),
                                ncclGetResourceBufferOffset(h));
}
NCCL_DEVICE_INLINE void* ncclGetResourceBufferPeerPointer(ncclDevComm const& comm, ncclDevResourceHandle h,
                                                          ncclTeam team, int peer) {
  const int i = comm.lsaRank + (peer - team.rank) * team.stride;
  return mccl_dev::offsetOrNull(mccl_dev::lsaBaseInline(comm.resourceWindow_inlined, i),
                                ncclGetResourceBufferOffset(h));
}
NCCL_DEVICE_INLINE void* ncclGetResourceBufferMultimemPointer(ncclDevComm const&, ncclDevResourceHandle,
                                                              ncclMultimemHandle) {
  return nullptr;
}
NCCL_DEVICE_INLINE void* ncclGetResourceBufferLsaMultimemPointer(ncclDevComm const&, ncclDevResourceHandle) {
  return nullptr;
}

/* The window of comm's communicator that holds ptr (an address of this rank's buffer), or
 * NULL when none does. Every member of coop passes the same ptr (ncclCoopThread: each its
 * own). comm.windowTable lists the windows registered with ncclCommWindowRegister, those
 * registered after ncclDevCommCreate included, in blocks of 32 entries; a deregistered
 * window's entry is cleared (size 0). The coop's lanes of this warp share the scan: each
 * checks every size()-th entry of a block, and the lowest lane that found one names it.
 * (NVIDIA's scans on past the last block; mccl returns NULL there.) */
template <typename Coop>
NCCL_DEVICE_INLINE ncclWindow_t ncclFindWindow(Coop coop, ncclDevComm const& comm, void const* ptr) {
  auto lanes = ncclCoopCoalesced(coop);
  const uint32_t mask = ncclCoopGetLaneMask(lanes);
  const int me = lanes.thread_rank(), step = lanes.size();
  const uintptr_t p = (uintptr_t)ptr;
  const ncclDevCommWindowTable* t = comm.windowTable;
  while (t != nullptr) {
    int hit = -1;
    for (int i = me; i < 32; i += step) {
      const uintptr_t base = (uintptr_t)__ldg((unsigned long long const*)&t->entries[i].base);
      const uintptr_t size = (uintptr_t)__ldg((unsigned long long const*)&t->entries[i].size);
      if (size != 0 && p - base < size) {
        hit = i;
        break;
      }
    }
    const uint32_t found = __ballot_sync(mask, hit >= 0);
    if (found != 0) {
      hit = __shfl_sync(mask, hit, __ffs(found) - 1);
      return (ncclWindow_t)__ldg((unsigned long long const*)&t->entries[hit].window);
    }
    t = (const ncclDevCommWindowTable*)__ldg((unsigned long long const*)&t->next);
  }
  return nullptr;
}
#endif /* __CUDACC__ */

#endif /* _NCCL_DEVICE_CORE_H_ */
