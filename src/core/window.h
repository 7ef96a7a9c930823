// Memory windows (ncclCommWindowRegister) and the device API's communicators
// (ncclDevCommCreate) of one communicator: core/window.cc. The mappings of peers' memory
// are ipc_transport/sym_map.h's.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "nccl.h"

struct ncclComm;
struct ncclDevComm;
struct ncclDevCommRequirements;
struct ncclDevCommWindowTable;

namespace mccl {

class SymMapper;
class CeSync;

// The ranks sharing load/store access with this one (NCCL's LSA team): the run of
// consecutive ranks on this rank's host, every one with a GPU; team member i is world
// rank first + i. A host communicator's ranks, and every rank under NCCL_P2P_DISABLE=1,
// are alone.
struct LsaTeam {
  int first = 0;
  int size = 1;
  int rank = 0;  // this rank's index in the team
};
LsaTeam lsaTeamOf(const ncclComm* comm);

// comm's SymState, made at first use; a host communicator gets ncclInvalidUsage ("<call>:
// ... <what> need a GPU communicator").
ncclResult_t needGpuComm(ncclComm* comm, const char* call, const char* what);

class SymState {
 public:
  explicit SymState(ncclComm* comm);
  ~SymState();  // unmaps and frees whatever the user left registered
  SymState(const SymState&) = delete;
  SymState& operator=(const SymState&) = delete;

  // Collective. buff: device memory of comm's GPU (owned: allocated by mccl, freed with
  // the window). Every rank learns every LSA member's pointer; all ranks succeed or all fail.
  ncclResult_t registerWindow(void* buff, size_t size, int flags, const char* call, ncclWindow_t* out,
                              bool internal = false);
  // Collective: returns once no rank maps any rank's buffer of w any more; local (no wait)
  // when every rank is a thread of this process.
  ncclResult_t deregisterWindow(ncclWindow_t w, const char* call);
  bool isWindow(ncclWindow_t w) const { return windows_.count(w) != 0; }

  ncclResult_t createDevComm(const ncclDevCommRequirements* reqs, ncclDevComm* out, const char* call);
  ncclResult_t destroyDevComm(const ncclDevComm* devComm, const char* call);

  size_t windowCount() const { return windows_.size(); }
  size_t devCommCount() const { return devComms_.size(); }

  // The direct path of collectives (kernels/work/direct.h), on communicators whose ranks are all
  // one node's (the LSA team is the communicator, at most kDirectMaxRanks ranks) once a
  // symmetric window is registered: every rank then has the barrier arrays.
  // directFlags: each rank's barrier array as reached here (false: no direct path).
  bool directFlags(uint64_t** each) const;
  // Each rank's address of [p, p + bytes), when that lies inside one window every rank
  // registered with NCCL_WIN_COLL_SYMMETRIC (its peers' buffers are at the same offset of
  // their windows, as that flag promises); else false.
  bool directBuffer(const void* p, size_t bytes, uint8_t** each) const;
  // Changes whenever a window joins or leaves the direct path: a plan made from
  // directBuffer() before a change is stale after it.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // The copy-engine path's barriers as stream memory operations (ipc_transport/ce_sync.h):
  // made with the barrier arrays under MCCL_CE_SYNC=1 where every rank could; null
  // otherwise (the barrier kernel then). Valid until the last direct window goes.
  CeSync* ceSync() const;
  // Abort and a lost peer: every copy-engine barrier this rank has enqueued passes.
  void releaseCeWaits();
  // The copy-engine barrier this rank's stream sits in (CeSync::waitingAt), 0 when none.
  uint64_t ceWaitingAt(int* peer) const;

 private:
  struct Window;
  ncclResult_t unmap(Window& w);
  void freeWindow(Window& w);
  bool everyRankInThisProcess() const;
  ncclResult_t ensureDirectBarrier(const char* call);
  ncclResult_t releaseDirectBarrier(const char* call);
  // The device communicators' window table (ncclDevComm::windowTable, ncclFindWindow):
  // made with the first device communicator and freed with the last; while it exists,
  // every user window has an entry in it.
  ncclResult_t tableMake(const char* call);
  ncclResult_t tableBlock(const char* call);
  ncclResult_t tableInsert(Window& w, const char* call);
  void tableClear(Window& w);
  void tableFree();

  ncclComm* comm_;
  std::unique_ptr<SymMapper> mapper_;
  std::map<ncclWindow_t, std::unique_ptr<Window>> windows_;  // by the device struct
  std::map<ncclWindow_t, size_t> devComms_;  // resource window -> bytes of its buffer
  // The window table: blocks of 32 entries in device memory, each block's next naming the
  // one after it; slot s is entry s % 32 of block s / 32 (null: free).
  std::vector<ncclDevCommWindowTable*> tables_;
  std::vector<Window*> tableSlots_;
  // Direct path: the symmetric windows by local address, and the barrier arrays' window
  // (its buffer owned: allocated at the first symmetric window, freed with this state).
  mutable std::mutex directMu_;
  std::map<uintptr_t, const Window*> symmetric_;
  std::atomic<uint64_t> generation_{0};
  ncclWindow_t directBarrier_ = nullptr;
  void* directBarrierBuf_ = nullptr;
  int directWindows_ = 0;  // windows whose collectives take the direct path
  std::vector<uint64_t*> directFlagPtrs_;  // each rank's barrier array as reached here
  std::unique_ptr<CeSync> ceSync_;  // with the barrier arrays, where MCCL_CE_SYNC made it
};

}  // namespace mccl
