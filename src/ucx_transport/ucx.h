// UCX for mccl: one UCP context per process; one worker shared by the host communicators
// of the process (UCS_THREAD_MODE_MULTI: made once, so a new communicator costs no worker)
// and one per GPU communicator's proxy; endpoints (per communicator) to the peers a
// schedule needs, registered memory with packed rkeys, RMA put, and the
// requests still in flight. Errors become ncclSystemError, or ncclRemoteError naming the
// peer rank when a peer is unreachable or fails.
//
// Layering (UCX's habit): ucx.h knows nothing of FIFOs or schedules; host_engine/fifo.h
// builds the connection protocol on top of it.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nccl.h"

struct ncclComm;

namespace mccl {

class UcxContext {
 public:
  // The process's context, created on first use.
  static ncclResult_t get(std::shared_ptr<UcxContext>* out);
  ~UcxContext();
  ucp_context_h handle() const { return ctx_; }
  bool cudaMemorySupported() const { return cudaMem_; }

 private:
  UcxContext() = default;
  ucp_context_h ctx_ = nullptr;
  bool cudaMem_ = false;
};

// A region of memory registered with UCX (allocated by UCX when `allocate`, so peers on
// the same host can map it directly).
struct UcxRegion {
  void* ptr = nullptr;
  size_t size = 0;
  ucp_mem_h memh = nullptr;
  std::vector<uint8_t> rkey;  // packed
  bool ownsPtr = false;       // ptr was allocated by mapRegion (posix_memalign)
  int shmid = -1;             // the System V segment UCX allocated it in, or -1
};

// Peers' System V segments (UCX's sysv allocator, the default for UCP_MEM_MAP_ALLOCATE).
// UCX 1.13 segfaults in ucp_ep_rkey_unpack's error path (ucp_rkey_destroy of rkeys it never
// unpacked) when the segment of an rkey cannot be attached because its owner has died. A
// receiver therefore attaches the segment itself first, on the same machine, and holds it
// through the unpack: a segment that is still attached cannot vanish (Linux lets a
// segment marked for removal be attached while it exists), and one already gone means its
// owner ended.
// The key of this machine's System V IPC namespace (boot id and IPC namespace), never 0.
uint64_t sysvNamespaceKey();
// Attaches shmid read-only: the address, or null with *gone set when the segment does not
// exist any more (EINVAL, EIDRM); null without *gone for any other failure.
void* sysvHold(int shmid, bool* gone);
void sysvRelease(void* held);

// What a peer needs to reach a region: its address and packed rkey.
struct UcxRemote {
  uint64_t addr = 0;
  ucp_rkey_h rkey = nullptr;
  void* direct = nullptr;  // locally mapped pointer (ucp_rkey_ptr), or null
};

class UcxWorker {
 public:
  UcxWorker(ncclComm* comm, std::shared_ptr<UcxContext> ctx);
  ~UcxWorker();

  // shared: use the process's shared worker (host communicators) instead of a new one.
  ncclResult_t create(bool shared = false);
  const std::vector<uint8_t>& address() const { return address_; }

  // Endpoint to rank (created on first use from its worker address).
  ncclResult_t endpoint(int rank, const void* addr, size_t addrLen, ucp_ep_h* ep);

  // The first zeroBytes bytes read zero (the rest is left as allocated: zeroing a 4 MiB FIFO
  // touched every page and was most of a first connection's cost).
  ncclResult_t mapRegion(size_t size, bool allocate, UcxRegion* out, size_t zeroBytes = SIZE_MAX);
  // Registers memory the caller owns (pinned host memory of the GPU network path).
  ncclResult_t registerRegion(void* ptr, size_t size, UcxRegion* out);
  void unmapRegion(UcxRegion* r);
  // Unpacks a peer's rkey; when allowDirect, also tries to map the memory locally.
  ncclResult_t unpack(int rank, ucp_ep_h ep, const uint8_t* rkey, size_t len, uint64_t addr,
                      bool allowDirect, UcxRemote* out);
  void release(UcxRemote* r);

  // RMA put of n bytes to remote addr; the request (if any) is tracked until complete.
  ncclResult_t put(int rank, ucp_ep_h ep, const void* src, size_t n, const UcxRemote& dst,
                   uint64_t offset);
  void fence();
  // Drives UCX; reports a failed peer or operation. *any: UCX made progress.
  ncclResult_t progress(bool* any = nullptr);
  // True when every tracked request has completed (frees the completed ones).
  ncclResult_t quiescent(bool* done, bool* any = nullptr);
  // First peer found failed (-1 if none), with UCX's reason.
  int failedPeer(std::string* why) const;

 private:
  static void errorCallback(void* arg, ucp_ep_h ep, ucs_status_t status);
  static void sendCallback(void* request, ucs_status_t status, void* user);

  ncclComm* comm_;
  std::shared_ptr<UcxContext> ctx_;
  ucp_worker_h worker_ = nullptr;
  bool shared_ = false;  // the process's worker: not destroyed with this object
  std::vector<uint8_t> address_;
  struct Ep {
    ucp_ep_h ep = nullptr;
    int rank = -1;
    UcxWorker* owner = nullptr;
  };
  std::vector<std::unique_ptr<Ep>> eps_;
  struct Pending {
    void* req;
    int rank;
  };
  std::vector<Pending> pending_;
  mutable std::mutex failMu_;
  int failedRank_ = -1;
  std::string failReason_;
  std::atomic<int> opErrors_{0};
};

}  // namespace mccl
