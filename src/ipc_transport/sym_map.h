// Symmetric mappings: a buffer of every rank of a load/store team (the ranks of one node
// whose GPUs reach each other), mapped into every other member through CUDA IPC, so each
// rank holds each member's pointer. Used by memory windows (ncclCommWindowRegister) and
// the device communicators' resource memory (ncclDevCommCreate), core/window.cc.
//
// One exchange record per rank (SymExport) goes round the whole communicator with the
// bootstrap's allgather; each rank then opens the records of its team. Mappings are
// reference counted by (peer, allocation): two windows inside one allocation open it once
// (CUDA refuses a second cudaIpcOpenMemHandle of one allocation in a process). Every mapping is
// counted in the communicator's ledger (MemKind::PeerMapped) while it is open.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <utility>

#include "nccl.h"

struct ncclComm;

namespace mccl {

// What a rank tells the others about its buffer (plain bytes, the same size on every rank).
struct SymExport {
  static constexpr uint32_t kMagic = 0x73796d31;  // "sym1"
  uint32_t magic = kMagic;
  int32_t status = 0;       // 0: usable; else this rank's ncclResult_t (the others fail too)
  int32_t dev = -1;         // CUDA device of the buffer
  int32_t flags = 0;       // winFlags this rank passed (NCCL_WIN_COLL_SYMMETRIC)
  uint64_t processHash = 0;
  uint64_t ptr = 0;         // the buffer, in its owner's address space
  uint64_t size = 0;        // bytes of the window
  uint64_t offset = 0;      // of ptr inside its CUDA allocation
  uint64_t allocBytes = 0;  // of that allocation (what a mapping of it costs)
  cudaIpcMemHandle_t handle;
};

// Checks that [p, p+size) is device memory of comm's GPU inside one CUDA allocation and
// fills out for export. Errors name call and the argument "buff".
ncclResult_t symDescribe(ncclComm* comm, void* p, size_t size, const char* call, SymExport* out);

class SymMapper {
 public:
  explicit SymMapper(ncclComm* comm) : comm_(comm) {}
  ~SymMapper();  // closes whatever is still open
  SymMapper(const SymMapper&) = delete;
  SymMapper& operator=(const SymMapper&) = delete;

  // peer's buffer as this process reaches it (rec from peer). The own rank's buffer and
  // those of threads of this process are used directly (peer access enabled).
  ncclResult_t open(int peer, const SymExport& rec, char** mapped);
  // Undoes one open of (peer, rec).
  void close(int peer, const SymExport& rec);
  size_t openCount() const { return opened_.size(); }

 private:
  struct Mapping {
    char* base = nullptr;
    size_t bytes = 0;
    int refs = 0;
  };
  static std::pair<int, uint64_t> key(int peer, const SymExport& rec);
  ncclComm* comm_;
  std::map<std::pair<int, uint64_t>, Mapping> opened_;
};

}  // namespace mccl
