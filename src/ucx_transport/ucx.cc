#include "ucx_transport/ucx.h"
#include <sys/shm.h>
#include <cerrno>
#include <cstdio>

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "core/comm.h"
#include "core/error.h"
#include "core/knobs.h"

namespace mccl {
namespace {
std::mutex gCtxMu;
// The context outlives the communicators: ucp_init loads and probes every transport (tens
// of ms), far more than a communicator's own setup, so it is made once per process and
// kept (never cleaned up: UCX may already be torn down when static destructors run). A
// child of fork() makes its own (UCX state does not survive a fork).
std::shared_ptr<UcxContext>* gCtx = nullptr;
pid_t gCtxPid = 0;

// The worker host communicators share (under gCtxMu), kept like the context.
struct SharedWorker {
  std::shared_ptr<UcxContext> ctx;
  ucp_worker_h worker = nullptr;
  std::vector<uint8_t> address;
  pid_t pid = 0;
};
SharedWorker* gShared = nullptr;

ucs_status_t makeWorker(ucp_context_h ctx, ucs_thread_mode_t mode, ucp_worker_h* worker,
                        std::vector<uint8_t>* address, const char** what) {
  ucp_worker_params_t wp;
  std::memset(&wp, 0, sizeof wp);
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = mode;
  *what = "ucp_worker_create";
  ucs_status_t st = ucp_worker_create(ctx, &wp, worker);
  if (st != UCS_OK) return st;
  ucp_address_t* addr = nullptr;
  size_t len = 0;
  *what = "ucp_worker_get_address";
  st = ucp_worker_get_address(*worker, &addr, &len);
  if (st != UCS_OK) {
    ucp_worker_destroy(*worker);
    *worker = nullptr;
    return st;
  }
  address->assign(reinterpret_cast<uint8_t*>(addr), reinterpret_cast<uint8_t*>(addr) + len);
  ucp_worker_release_address(*worker, addr);
  return UCS_OK;
}
}  // namespace

ncclResult_t UcxContext::get(std::shared_ptr<UcxContext>* out) {
  std::lock_guard<std::mutex> lock(gCtxMu);
  if (gCtx && gCtxPid != getpid()) gCtx = nullptr;  // the parent's: left alone, not freed
  std::shared_ptr<UcxContext> c = gCtx ? *gCtx : nullptr;
  if (!c) {
    c.reset(new UcxContext());
    ucp_config_t* config = nullptr;
    ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);  // the usual UCX_* variables
    if (st != UCS_OK)
      return MCCL_ERR(ncclSystemError, nullptr, "UCX: ucp_config_read failed: %s", ucs_status_string(st));
    // UCX's keepalive declares a peer dead when it has not progressed for a while; ranks
    // of an HPC code compute for long stretches outside mccl, so only real failures
    // (closed connections, unreachable peers) should count. The user can still set
    // UCX_KEEPALIVE_INTERVAL.
    if (!knobIsSet(Knob::UcxKeepalive)) ucp_config_modify(config, "KEEPALIVE_INTERVAL", "inf");
    ucp_params_t params;
    std::memset(&params, 0, sizeof params);
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_RMA;
    params.mt_workers_shared = 1;  // workers of several communicators on several threads
    st = ucp_init(&params, config, &c->ctx_);
    ucp_config_release(config);
    if (st != UCS_OK)
      return MCCL_ERR(ncclSystemError, nullptr, "UCX: ucp_init failed: %s", ucs_status_string(st));
    ucp_context_attr_t attr;
    attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
    if (ucp_context_query(c->ctx_, &attr) == UCS_OK)
      c->cudaMem_ = (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
    INFO(kLogNet, "UCX %s context created (CUDA memory %s)", ucp_get_version_string(),
         c->cudaMem_ ? "supported" : "not supported");
    gCtx = new std::shared_ptr<UcxContext>(c);
    gCtxPid = getpid();
  }
  *out = c;
  return ncclSuccess;
}

UcxContext::~UcxContext() {
  if (ctx_) ucp_cleanup(ctx_);
}

UcxWorker::UcxWorker(ncclComm* comm, std::shared_ptr<UcxContext> ctx)
    : comm_(comm), ctx_(std::move(ctx)) {}

UcxWorker::~UcxWorker() {
  if (!worker_) return;
  // Requests still in flight are cancelled with their endpoints.
  for (Pending& p : pending_) ucp_request_free(p.req);
  pending_.clear();
  for (auto& e : eps_) {
    if (!e || !e->ep) continue;
    ucp_request_param_t prm;
    std::memset(&prm, 0, sizeof prm);
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t r = ucp_ep_close_nbx(e->ep, &prm);
    if (UCS_PTR_IS_PTR(r)) {
      // A forced close completes after a few progress calls; bounded.
      for (int i = 0; i < 1000 && ucp_request_check_status(r) == UCS_INPROGRESS; ++i)
        ucp_worker_progress(worker_);
      ucp_request_free(r);
    }
  }
  eps_.clear();
  if (!shared_) ucp_worker_destroy(worker_);
}

ncclResult_t UcxWorker::create(bool shared) {
  const char* what = "";
  if (!shared) {
    ucs_status_t st = makeWorker(ctx_->handle(), UCS_THREAD_MODE_SERIALIZED, &worker_, &address_, &what);
    if (st != UCS_OK)
      return MCCL_ERR(ncclSystemError, comm_, "UCX: %s failed: %s", what, ucs_status_string(st));
    return ncclSuccess;
  }
  std::lock_guard<std::mutex> lock(gCtxMu);
  if (gShared && (gShared->pid != getpid() || gShared->ctx != ctx_)) gShared = nullptr;  // a parent's
  if (!gShared) {
    auto* s = new SharedWorker();
    ucs_status_t st = makeWorker(ctx_->handle(), UCS_THREAD_MODE_MULTI, &s->worker, &s->address, &what);
    if (st != UCS_OK) {
      delete s;
      return MCCL_ERR(ncclSystemError, comm_, "UCX: %s (shared worker) failed: %s", what, ucs_status_string(st));
    }
    s->ctx = ctx_;
    s->pid = getpid();
    gShared = s;
  }
  worker_ = gShared->worker;
  address_ = gShared->address;
  shared_ = true;
  return ncclSuccess;
}

void UcxWorker::errorCallback(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* e = static_cast<Ep*>(arg);
  UcxWorker* w = e->owner;
  std::lock_guard<std::mutex> lock(w->failMu_);
  if (w->failedRank_ < 0) {
    w->failedRank_ = e->rank;
    w->failReason_ = ucs_status_string(status);
  }
}

ncclResult_t UcxWorker::endpoint(int rank, const void* addr, size_t addrLen, ucp_ep_h* ep) {
  if (eps_.size() <= static_cast<size_t>(rank)) eps_.resize(static_cast<size_t>(rank) + 1);
  auto& slot = eps_[rank];
  if (slot && slot->ep) {
    *ep = slot->ep;
    return ncclSuccess;
  }
  if (addrLen == 0)
    return MCCL_ERR(ncclInternalError, comm_, "UCX: rank %d published no worker address", rank);
  slot.reset(new Ep());
  slot->rank = rank;
  slot->owner = this;
  ucp_ep_params_t ep_params;
  std::memset(&ep_params, 0, sizeof ep_params);
  ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                         UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  ep_params.address = static_cast<const ucp_address_t*>(addr);
  // Peer-failure mode would restrict UCX to transports that can report a dead peer (TCP,
  // IB), dropping shared memory, and reports healthy peers that are merely busy. Dead peers
  // are detected by mccl itself (timeouts and the bootstrap's connections).
  ep_params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
  ep_params.err_handler.cb = errorCallback;
  ep_params.err_handler.arg = slot.get();
  ucs_status_t st = ucp_ep_create(worker_, &ep_params, &slot->ep);
  if (st != UCS_OK) {
    slot.reset();
    return MCCL_ERR(ncclRemoteError, comm_, "UCX: cannot reach rank %d: %s", rank, ucs_status_string(st));
  }
  *ep = slot->ep;
  return ncclSuccess;
}

ncclResult_t UcxWorker::registerRegion(void* ptr, size_t size, UcxRegion* out) {
  UcxRegion r;
  r.size = size;
  ucp_mem_map_params_t mp;
  std::memset(&mp, 0, sizeof mp);
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  mp.address = ptr;
  mp.length = size;
  ucs_status_t st = ucp_mem_map(ctx_->handle(), &mp, &r.memh);
  if (st != UCS_OK)
    return MCCL_ERR(ncclSystemError, comm_, "UCX: ucp_mem_map of %zu bytes at %p failed: %s", size, ptr,
                    ucs_status_string(st));
  r.ptr = ptr;
  void* packed = nullptr;
  size_t len = 0;
  st = ucp_rkey_pack(ctx_->handle(), r.memh, &packed, &len);
  if (st != UCS_OK) {
    ucp_mem_unmap(ctx_->handle(), r.memh);
    return MCCL_ERR(ncclSystemError, comm_, "UCX: ucp_rkey_pack failed: %s", ucs_status_string(st));
  }
  r.rkey.assign(static_cast<uint8_t*>(packed), static_cast<uint8_t*>(packed) + len);
  ucp_rkey_buffer_release(packed);
  *out = std::move(r);
  return ncclSuccess;
}

namespace {

// The System V segment mapped at p in this process (its inode in /proc/self/maps is the
// shmid; the path reads "/SYSV<key>"), or -1.
int sysvShmidAt(const void* p) {
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return -1;
  const auto a = reinterpret_cast<unsigned long>(p);
  char line[512];
  int shmid = -1;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long lo = 0, hi = 0, inode = 0;
    int pathAt = 0;
    if (std::sscanf(line, "%lx-%lx %*s %*s %*s %lu %n", &lo, &hi, &inode, &pathAt) < 3) continue;
    if (a < lo || a >= hi) continue;
    if (pathAt > 0 && std::strncmp(line + pathAt, "/SYSV", 5) == 0) shmid = static_cast<int>(inode);
    break;
  }
  std::fclose(f);
  return shmid;
}

}  // namespace

uint64_t sysvNamespaceKey() {
  static const uint64_t key = [] {
    std::string id;
    if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
      char buf[64] = {0};
      if (std::fgets(buf, sizeof buf, f)) id = buf;
      std::fclose(f);
    }
    char ns[64] = {0};
    ssize_t n = readlink("/proc/self/ns/ipc", ns, sizeof ns - 1);
    if (n > 0) id.append(ns, static_cast<size_t>(n));
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (char ch : id) h = (h ^ static_cast<uint8_t>(ch)) * 1099511628211ull;
    return id.empty() ? 0 : (h ? h : 1);
  }();
  return key;
}

void* sysvHold(int shmid, bool* gone) {
  *gone = false;
  void* p = shmat(shmid, nullptr, SHM_RDONLY);
  if (p != reinterpret_cast<void*>(-1)) return p;
  *gone = errno == EINVAL || errno == EIDRM;
  return nullptr;
}

void sysvRelease(void* held) {
  if (held) shmdt(held);
}

ncclResult_t UcxWorker::mapRegion(size_t size, bool allocate, UcxRegion* out, size_t zeroBytes) {
  UcxRegion r;
  r.size = size;
  ucp_mem_map_params_t mp;
  std::memset(&mp, 0, sizeof mp);
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                  UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  mp.length = size;
  void* own = nullptr;
  if (allocate) {
    mp.address = nullptr;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
  } else {
    if (posix_memalign(&own, 4096, size) != 0)
      return MCCL_ERR(ncclSystemError, comm_, "cannot allocate %zu bytes", size);
    mp.address = own;
  }
  ucs_status_t st = ucp_mem_map(ctx_->handle(), &mp, &r.memh);
  if (st != UCS_OK) {
    free(own);
    return MCCL_ERR(ncclSystemError, comm_, "UCX: ucp_mem_map of %zu bytes failed: %s", size,
                    ucs_status_string(st));
  }
  ucp_mem_attr_t attr;
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  ucp_mem_query(r.memh, &attr);
  r.ptr = attr.address;
  void* packed = nullptr;
  size_t len = 0;
  st = ucp_rkey_pack(ctx_->handle(), r.memh, &packed, &len);
  if (st != UCS_OK) {
    ucp_mem_unmap(ctx_->handle(), r.memh);
    free(own);
    return MCCL_ERR(ncclSystemError, comm_, "UCX: ucp_rkey_pack failed: %s", ucs_status_string(st));
  }
  r.rkey.assign(static_cast<uint8_t*>(packed), static_cast<uint8_t*>(packed) + len);
  ucp_rkey_buffer_release(packed);
  r.ownsPtr = own != nullptr;
  if (allocate) r.shmid = sysvShmidAt(r.ptr);
  std::memset(r.ptr, 0, size < zeroBytes ? size : zeroBytes);
  *out = std::move(r);
  return ncclSuccess;
}

void UcxWorker::unmapRegion(UcxRegion* r) {
  if (!r->memh) return;
  ucp_mem_unmap(ctx_->handle(), r->memh);
  if (r->ownsPtr) free(r->ptr);
  r->memh = nullptr;
  r->ptr = nullptr;
  r->ownsPtr = false;
  r->shmid = -1;
}

ncclResult_t UcxWorker::unpack(int rank, ucp_ep_h ep, const uint8_t* rkey, size_t len, uint64_t addr,
                               bool allowDirect, UcxRemote* out) {
  (void)len;
  UcxRemote r;
  r.addr = addr;
  ucs_status_t st = ucp_ep_rkey_unpack(ep, rkey, &r.rkey);
  if (st != UCS_OK)
    return MCCL_ERR(ncclSystemError, comm_, "UCX: cannot unpack the rkey of rank %d: %s", rank,
                    ucs_status_string(st));
  if (allowDirect) {
    void* p = nullptr;
    if (ucp_rkey_ptr(r.rkey, addr, &p) == UCS_OK) r.direct = p;
  }
  *out = r;
  return ncclSuccess;
}

void UcxWorker::release(UcxRemote* r) {
  if (r->rkey) ucp_rkey_destroy(r->rkey);
  r->rkey = nullptr;
  r->direct = nullptr;
}

void UcxWorker::sendCallback(void*, ucs_status_t status, void* user) {
  if (status != UCS_OK && status != UCS_ERR_CANCELED) static_cast<UcxWorker*>(user)->opErrors_.fetch_add(1);
}

ncclResult_t UcxWorker::put(int rank, ucp_ep_h ep, const void* src, size_t n, const UcxRemote& dst,
                            uint64_t offset) {
  ucp_request_param_t prm;
  std::memset(&prm, 0, sizeof prm);
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  prm.cb.send = sendCallback;
  prm.user_data = this;
  ucs_status_ptr_t r = ucp_put_nbx(ep, src, n, dst.addr + offset, dst.rkey, &prm);
  if (UCS_PTR_IS_ERR(r))
    return MCCL_ERR(ncclRemoteError, comm_, "UCX: put of %zu bytes to rank %d failed: %s", n, rank,
                    ucs_status_string(UCS_PTR_STATUS(r)));
  if (UCS_PTR_IS_PTR(r)) pending_.push_back(Pending{r, rank});
  return ncclSuccess;
}

void UcxWorker::fence() { ucp_worker_fence(worker_); }

int UcxWorker::failedPeer(std::string* why) const {
  std::lock_guard<std::mutex> lock(failMu_);
  if (why) *why = failReason_;
  return failedRank_;
}

ncclResult_t UcxWorker::progress(bool* any) {
  while (ucp_worker_progress(worker_) != 0)
    if (any) *any = true;
  std::string why;
  int failed = failedPeer(&why);
  if (failed >= 0)
    return MCCL_ERR(ncclRemoteError, comm_, "UCX: the connection to rank %d (host %s) failed: %s", failed,
                    comm_ ? comm_->hosts.name(failed).c_str() : "unknown", why.c_str());
  if (opErrors_.load() != 0)
    return MCCL_ERR(ncclRemoteError, comm_, "UCX: %d RMA operations failed", opErrors_.load());
  return ncclSuccess;
}

ncclResult_t UcxWorker::quiescent(bool* done, bool* any) {
  MCCL_CHECK(progress(any));
  size_t keep = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (ucp_request_check_status(pending_[i].req) == UCS_INPROGRESS) {
      pending_[keep++] = pending_[i];
    } else {
      ucp_request_free(pending_[i].req);
    }
  }
  pending_.resize(keep);
  *done = pending_.empty();
  return ncclSuccess;
}

}  // namespace mccl
