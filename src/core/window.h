// Memory windows (ncclCommWindowRegister) and the device API's communicators
// (ncclDevCommCreate) of one communicator: core/window.cc. The mappings of peers' memory
// are ipc_transport/sym_map.h's.
#pragma once

#include <cstddef>
#include <map>
#include <memory>

#include "nccl.h"

struct ncclComm;
struct ncclDevComm;
struct ncclDevCommRequirements;

namespace mccl {

class SymMapper;

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

class SymState {
 public:
  explicit SymState(ncclComm* comm);
  ~SymState();  // unmaps and frees whatever the user left registered
  SymState(const SymState&) = delete;
  SymState& operator=(const SymState&) = delete;

  // Collective. buff: device memory of comm's GPU (owned: allocated by mccl, freed with
  // the window). Every rank learns every LSA member's pointer; all ranks succeed or all fail.
  ncclResult_t registerWindow(void* buff, size_t size, int flags, const char* call, ncclWindow_t* out);
  // Collective: returns once no rank maps any rank's buffer of w any more; local (no wait)
  // when every rank is a thread of this process.
  ncclResult_t deregisterWindow(ncclWindow_t w, const char* call);
  bool isWindow(ncclWindow_t w) const { return windows_.count(w) != 0; }

  ncclResult_t createDevComm(const ncclDevCommRequirements* reqs, ncclDevComm* out, const char* call);
  ncclResult_t destroyDevComm(const ncclDevComm* devComm, const char* call);

  size_t windowCount() const { return windows_.size(); }
  size_t devCommCount() const { return devComms_.size(); }

 private:
  struct Window;
  ncclResult_t unmap(Window& w);
  void freeWindow(Window& w);
  bool allRanksInProcess() const;

  ncclComm* comm_;
  std::unique_ptr<SymMapper> mapper_;
  std::map<ncclWindow_t, std::unique_ptr<Window>> windows_;  // by the device struct
  std::map<ncclWindow_t, size_t> devComms_;  // resource window -> bytes of its buffer
};

}  // namespace mccl
