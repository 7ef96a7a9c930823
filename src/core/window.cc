// ncclCommWindowRegister / ncclCommWindowDeregister and the device communicators behind
// ncclDevCommCreate (its API checks in api_device.cc) for the ranks of one node: windows are
// mapped once into every LSA member through CUDA IPC (ipc_transport/sym_map.h); a device
// communicator's barriers and resource buffers live in a window of its own (its "resource
// window"), and its window table lets ncclFindWindow name a window from a pointer.
#include "core/window.h"

#include <nccl_device.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/comm.h"
#include "core/error.h"
#include "core/group.h"
#include "core/knobs.h"
#if MCCL_HAVE_CUDA
#include "core/cuda_guard.h"
#include "ipc_transport/ce_sync.h"
#include "ipc_transport/sym_map.h"
#include "kernels/work/direct.h"
#endif

static_assert(sizeof(ncclWindow_vidmem) == 72, "ncclWindow_vidmem keeps the size of NVIDIA's (ncclDevComm's layout)");
static_assert(sizeof(ncclDevCommRequirements) == 56, "ncclDevCommRequirements as NVIDIA's");

namespace mccl {

LsaTeam lsaTeamOf(const ncclComm* comm) {
  LsaTeam t;
  t.first = comm->rank;
  if (comm->isHost() || knobBool(Knob::P2pDisable) || !comm->topo.built()) return t;
  auto member = [&](int r) {
    const PeerInfo* p = comm->topo.localPeer(r);
    return p != nullptr && p->cudaDev >= 0;
  };
  int first = comm->rank, last = comm->rank;
  while (first > 0 && member(first - 1)) first--;
  while (last + 1 < comm->nranks && member(last + 1)) last++;
  t.first = first;
  t.size = last - first + 1;
  t.rank = comm->rank - first;
  return t;
}

namespace {

[[maybe_unused]] constexpr size_t kResourceUnit = 128;  // a resource handle counts these (unused without CUDA)

[[maybe_unused]] size_t alignUp(size_t x, size_t a) { return (x + a - 1) / a * a; }  // unused without CUDA

[[maybe_unused]] uint32_t reciprocal32(int x) {  // ceil(2^32 / x), NVIDIA's *_rcp32 fields
  return x <= 1 ? 0u : static_cast<uint32_t>(((uint64_t{1} << 32) + static_cast<uint64_t>(x) - 1) / static_cast<uint64_t>(x));
}

}  // namespace

#if MCCL_HAVE_CUDA

struct SymState::Window {
  ncclWindow_vidmem host{};            // what the device struct holds
  ncclWindow_vidmem* dev = nullptr;    // device struct, then lsaSize pointers
  size_t devBytes = 0;
  bool symmetric = false;              // every rank passed NCCL_WIN_COLL_SYMMETRIC
  bool direct = false;                 // collectives on it take the direct path
  bool internal = false;               // mccl's own (resource buffers, barrier arrays)
  int slot = -1;                       // its entry in the window table (tableSlots_)
  LsaTeam team;
  std::vector<SymExport> recs;         // by LSA member
  std::vector<char*> ptrs;             // by LSA member, as mapped here
  int opened = 0;                      // members 0..opened-1 are open
};

SymState::SymState(ncclComm* comm) : comm_(comm), mapper_(new SymMapper(comm)) {}

SymState::~SymState() {
  CudaDeviceGuard guard(comm_->cudaDev, true);
  std::vector<std::pair<void*, size_t>> owned;  // device communicators' resource buffers
  for (auto& kv : devComms_) {
    auto it = windows_.find(kv.first);
    if (it != windows_.end()) owned.emplace_back(it->second->host.localPtr, kv.second);
  }
  for (auto& kv : windows_) {
    unmap(*kv.second);
    freeWindow(*kv.second);
  }
  tableFree();
  ceSync_.reset();
  if (directBarrierBuf_) {
    cudaFree(directBarrierBuf_);
    comm_->mem.sub(MemKind::Control, kDirectFlagBytes);
  }
  for (auto& o : owned) {
    cudaFree(o.first);
    comm_->mem.sub(MemKind::Control, o.second);
  }
  windows_.clear();
  devComms_.clear();
  mapper_.reset();
}

ncclResult_t SymState::unmap(Window& w) {
  for (int i = 0; i < w.opened; i++) mapper_->close(w.team.first + i, w.recs[i]);
  w.opened = 0;
  return ncclSuccess;
}

void SymState::freeWindow(Window& w) {
  if (w.dev) {
    cudaFree(w.dev);
    comm_->mem.sub(MemKind::Control, w.devBytes);
    w.dev = nullptr;
  }
}

ncclResult_t SymState::registerWindow(void* buff, size_t size, int flags, const char* call, ncclWindow_t* out,
                                      bool internal) {
  CudaDeviceGuard guard(comm_->cudaDev, true);
  const int n = comm_->nranks;
  std::vector<SymExport> all(static_cast<size_t>(n));
  SymExport mine;
  std::memset(&mine.handle, 0, sizeof mine.handle);
  ncclResult_t local = symDescribe(comm_, buff, size, call, &mine);
  std::string localError = local == ncclSuccess ? "" : threadLastError();
  mine.status = static_cast<int32_t>(local);
  mine.size = size;
  mine.flags = flags;
  all[static_cast<size_t>(comm_->rank)] = mine;
  // Every rank learns every rank's record, failed ones included: all fail together.
  MCCL_CHECK(comm_->bootstrap->allGather(all.data(), sizeof(SymExport)));
  if (local != ncclSuccess) return MCCL_ERR(local, comm_, "%s", localError.c_str());
  // Judged on what every rank sent, so that every rank decides alike.
  bool anySymmetric = false, allSymmetric = true;
  for (const SymExport& rec : all) {
    anySymmetric = anySymmetric || (rec.flags & NCCL_WIN_COLL_SYMMETRIC);
    allSymmetric = allSymmetric && (rec.flags & NCCL_WIN_COLL_SYMMETRIC);
  }
  for (int r = 0; r < n; r++) {
    const SymExport& rec = all[static_cast<size_t>(r)];
    if (rec.magic != SymExport::kMagic)
      return MCCL_ERR(ncclInternalError, comm_, "%s: rank %d sent an invalid window record", call, r);
    if (rec.status != 0)
      return MCCL_ERR(ncclInvalidUsage, comm_, "%s: rank %d could not register its buffer (%s there); no rank registered it",
                      call, r, resultString(static_cast<ncclResult_t>(rec.status)));
    if (anySymmetric && rec.size != all[0].size)
      return MCCL_ERR(ncclInvalidUsage, comm_,
                      "%s: a symmetric window (NCCL_WIN_COLL_SYMMETRIC) needs the same size on every rank: rank %d "
                      "passed %llu bytes, rank 0 %llu",
                      call, r, static_cast<unsigned long long>(rec.size), static_cast<unsigned long long>(all[0].size));
  }

  auto w = std::make_unique<Window>();
  w->symmetric = allSymmetric && !internal;
  w->internal = internal;
  w->team = lsaTeamOf(comm_);
  const int m = w->team.size;
  w->recs.assign(all.begin() + w->team.first, all.begin() + w->team.first + m);
  w->ptrs.assign(static_cast<size_t>(m), nullptr);
  ncclResult_t r = ncclSuccess;
  std::string err;
  for (int i = 0; i < m && r == ncclSuccess; i++) {
    r = mapper_->open(w->team.first + i, w->recs[i], &w->ptrs[i]);
    if (r == ncclSuccess) w->opened = i + 1;
  }
  if (r == ncclSuccess) {
    w->devBytes = sizeof(ncclWindow_vidmem) + sizeof(char*) * static_cast<size_t>(m);
    cudaError_t e = cudaMalloc(&w->dev, w->devBytes);
    if (e != cudaSuccess) {
      cudaGetLastError();
      w->dev = nullptr;
      r = MCCL_ERR(ncclUnhandledCudaError, comm_, "%s: cudaMalloc(window table): %s", call, cudaGetErrorString(e));
    } else {
      comm_->mem.add(MemKind::Control, w->devBytes);
      ncclWindow_vidmem& h = w->host;
      std::memset(&h, 0, sizeof h);
      h.winHost = w.get();
      h.localPtr = static_cast<char*>(buff);
      h.lsaPtrs = reinterpret_cast<char* const*>(w->dev + 1);
      h.lsaRank = w->team.rank;
      h.worldRank = comm_->rank;
      h.lsaSize = m;
      h.flags = static_cast<uint32_t>(flags);
      h.size = size;
      std::vector<uint8_t> bytes(w->devBytes);
      std::memcpy(bytes.data(), &h, sizeof h);
      std::memcpy(bytes.data() + sizeof h, w->ptrs.data(), sizeof(char*) * static_cast<size_t>(m));
      e = cudaMemcpy(w->dev, bytes.data(), w->devBytes, cudaMemcpyHostToDevice);
      if (e != cudaSuccess) {
        cudaGetLastError();
        r = MCCL_ERR(ncclUnhandledCudaError, comm_, "%s: cudaMemcpy(window table): %s", call, cudaGetErrorString(e));
      }
    }
  }
  // Findable from the device communicators' kernels as soon as registration returns.
  if (r == ncclSuccess && !internal && !tables_.empty()) r = tableInsert(*w, call);
  if (r != ncclSuccess) err = threadLastError();
  // Second round: every rank mapped everything, or every rank undoes its part.
  std::vector<int32_t> status(static_cast<size_t>(n), 0);
  status[static_cast<size_t>(comm_->rank)] = static_cast<int32_t>(r);
  ncclResult_t g = comm_->bootstrap->allGather(status.data(), sizeof(int32_t));
  int failed = -1;
  for (int i = 0; i < n && g == ncclSuccess; i++)
    if (status[static_cast<size_t>(i)] != 0) failed = i;
  if (g != ncclSuccess || failed >= 0) {
    tableClear(*w);
    unmap(*w);
    freeWindow(*w);
    if (g != ncclSuccess) return g;
    if (r != ncclSuccess) return MCCL_ERR(r, comm_, "%s", err.c_str());
    return MCCL_ERR(ncclInvalidUsage, comm_, "%s: rank %d could not map the window (%s there); no rank registered it",
                    call, failed, resultString(static_cast<ncclResult_t>(status[static_cast<size_t>(failed)])));
  }
  ncclWindow_t handle = w->dev;
  const Window* added = w.get();  // stays put: windows_ holds it by pointer
  windows_[handle] = std::move(w);
  *out = handle;
  INFO(kLogInit, "rank %d: window %p of %zu bytes mapped into %d LSA members%s", comm_->rank,
       static_cast<void*>(handle), size, m, added->symmetric ? " (symmetric)" : "");
  if (added->symmetric && added->team.size == n && n > 1 && n <= kDirectMaxRanks) {
    // Every rank got here alike (the same records): the barrier arrays are made together.
    // Without them collectives take the FIFO path; the window itself is registered.
    if (ensureDirectBarrier(call) == ncclSuccess) {
      std::lock_guard<std::mutex> lock(directMu_);
      windows_[handle]->direct = true;
      directWindows_++;
      symmetric_[reinterpret_cast<uintptr_t>(buff)] = added;
      generation_.fetch_add(1, std::memory_order_release);
    } else {
      WARN("rank %d: %s: no barrier arrays for the direct path (%s); collectives on this window use the FIFOs",
           comm_->rank, call, threadLastError());
    }
  }
  return ncclSuccess;
}

// Collective (called by registerWindow on every rank alike): the barrier arrays of the
// direct path, zeroed, in a window of their own.
ncclResult_t SymState::ensureDirectBarrier(const char* call) {
  if (directBarrier_) return ncclSuccess;
  void* buf = nullptr;
  cudaError_t e = cudaMalloc(&buf, kDirectFlagBytes);
  if (e == cudaSuccess) e = cudaMemset(buf, 0, kDirectFlagBytes);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();  // zeroed before a peer can write into it
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (buf) cudaFree(buf);
    buf = nullptr;  // registers as an unusable buffer: every rank fails alike
  }
  ncclWindow_t win = nullptr;
  ncclResult_t r = registerWindow(buf, kDirectFlagBytes, NCCL_WIN_COLL_SYMMETRIC, call, &win, true);
  if (r != ncclSuccess) {
    if (buf) cudaFree(buf);
    return r;
  }
  comm_->mem.add(MemKind::Control, kDirectFlagBytes);
  // The copy engines' barriers as stream memory operations, named after what only this
  // communicator has: its hash and the first rank's barrier array (its process and address).
  std::unique_ptr<CeSync> ce;
  if (knobInt(Knob::CeSync) != 0) {
    const SymExport& first = windows_.at(win)->recs.at(0);
    const uint64_t name = comm_->commHash ^ (first.processHash * 0x9e3779b97f4a7c15ull) ^ (first.ptr >> 4);
    std::string why;
    ce = CeSync::create(comm_, name, &why);
    if (!ce)
      INFO(kLogInit, "rank %d: copy-engine barriers stay kernels (%s)", comm_->rank, why.c_str());
  }
  std::lock_guard<std::mutex> lock(directMu_);
  directBarrier_ = win;
  directBarrierBuf_ = buf;
  ceSync_ = std::move(ce);
  directFlagPtrs_.clear();
  for (char* p : windows_.at(win)->ptrs) directFlagPtrs_.push_back(reinterpret_cast<uint64_t*>(p));
  return ncclSuccess;
}

CeSync* SymState::ceSync() const {
  std::lock_guard<std::mutex> lock(directMu_);
  return ceSync_.get();
}

void SymState::releaseCeWaits() {
  std::lock_guard<std::mutex> lock(directMu_);
  if (ceSync_) ceSync_->release();
}

uint64_t SymState::ceWaitingAt(int* peer) const {
  std::lock_guard<std::mutex> lock(directMu_);
  return ceSync_ ? ceSync_->waitingAt(peer) : 0;
}

bool SymState::directFlags(uint64_t** each) const {
  std::lock_guard<std::mutex> lock(directMu_);
  if (!directBarrier_ || symmetric_.empty()) return false;
  std::copy(directFlagPtrs_.begin(), directFlagPtrs_.end(), each);
  return true;
}

bool SymState::directBuffer(const void* p, size_t bytes, uint8_t** each) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(directMu_);
  auto it = symmetric_.upper_bound(a);
  if (it == symmetric_.begin()) return false;
  --it;
  const Window& w = *it->second;
  const uintptr_t base = it->first;
  if (a - base > w.host.size || bytes > w.host.size - (a - base)) return false;
  for (size_t i = 0; i < w.ptrs.size(); ++i) each[i] = reinterpret_cast<uint8_t*>(w.ptrs[i]) + (a - base);
  return true;
}

bool SymState::everyRankInThisProcess() const {
  if (comm_->topo.localRanks() != comm_->nranks) return false;
  for (const PeerInfo& p : comm_->topo.localPeers())
    if (p.processHash != comm_->topo.me().processHash) return false;
  return true;
}

ncclResult_t SymState::deregisterWindow(ncclWindow_t win, const char* call) {
  auto it = windows_.find(win);
  if (it == windows_.end())
    return MCCL_ERR(ncclInvalidArgument, comm_, "%s: win = %p is not a window of this communicator", call,
                    static_cast<void*>(win));
  CudaDeviceGuard guard(comm_->cudaDev, true);
  const bool direct = it->second->direct;
  {
    std::lock_guard<std::mutex> lock(directMu_);
    for (auto s = symmetric_.begin(); s != symmetric_.end(); ++s)
      if (s->second == it->second.get()) {
        symmetric_.erase(s);
        generation_.fetch_add(1, std::memory_order_release);
        break;
      }
  }
  tableClear(*it->second);
  unmap(*it->second);
  freeWindow(*it->second);
  windows_.erase(it);
  // When every rank is through, no rank maps another's buffer any more: owners may free
  // (freeing memory another process still has open through CUDA IPC is undefined). Ranks
  // that are all threads of this process map nothing through IPC, and need not wait: a
  // thread may deregister the windows of several ranks one after the other, as nccl-tests does.
  ncclResult_t r = everyRankInThisProcess() ? ncclSuccess : comm_->bootstrap->barrier();
  // The last window of the direct path takes its barrier arrays with it (every rank alike:
  // deregistration is collective), so a communicator without windows holds nothing for them.
  if (r == ncclSuccess && direct && --directWindows_ == 0) r = releaseDirectBarrier(call);
  return r;
}

ncclResult_t SymState::releaseDirectBarrier(const char* call) {
  ncclWindow_t win;
  void* buf;
  std::unique_ptr<CeSync> ce;
  {
    std::lock_guard<std::mutex> lock(directMu_);
    win = directBarrier_;
    buf = directBarrierBuf_;
    directBarrier_ = nullptr;
    directBarrierBuf_ = nullptr;
    directFlagPtrs_.clear();
    ce = std::move(ceSync_);
  }
  ce.reset();
  if (!win) return ncclSuccess;
  ncclResult_t r = deregisterWindow(win, call);
  CudaDeviceGuard guard(comm_->cudaDev, true);
  cudaFree(buf);
  comm_->mem.sub(MemKind::Control, kDirectFlagBytes);
  return r;
}

// ---- The window table (ncclFindWindow) ----
// Written with cudaMemcpy as the windows' own device structs are: registration and
// deregistration are the user's collective calls, between kernels that use the table.

namespace {
constexpr size_t kTableEntries = 32;  // entries of a block (ncclDevCommWindowTable)
}  // namespace

ncclResult_t SymState::tableMake(const char* call) {
  ncclResult_t r = tableBlock(call);
  for (auto& kv : windows_)
    if (r == ncclSuccess && !kv.second->internal) r = tableInsert(*kv.second, call);
  if (r != ncclSuccess) tableFree();
  return r;
}

// A block more, zeroed, linked from the one before.
ncclResult_t SymState::tableBlock(const char* call) {
  ncclDevCommWindowTable* b = nullptr;
  cudaError_t e = cudaMalloc(&b, sizeof *b);
  if (e == cudaSuccess) e = cudaMemset(b, 0, sizeof *b);
  if (e == cudaSuccess && !tables_.empty()) e = cudaMemcpy(&tables_.back()->next, &b, sizeof b, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (b) cudaFree(b);
    return MCCL_ERR(ncclUnhandledCudaError, comm_, "%s: the device communicators' window table: %s", call,
                    cudaGetErrorString(e));
  }
  tables_.push_back(b);
  comm_->mem.add(MemKind::Control, sizeof *b);
  return ncclSuccess;
}

ncclResult_t SymState::tableInsert(Window& w, const char* call) {
  size_t slot = 0;
  while (slot < tableSlots_.size() && tableSlots_[slot] != nullptr) ++slot;
  if (slot == tables_.size() * kTableEntries) MCCL_CHECK(tableBlock(call));
  if (slot == tableSlots_.size()) tableSlots_.push_back(nullptr);
  ncclDevCommWindowTable::Entry entry;
  entry.base = reinterpret_cast<uintptr_t>(w.host.localPtr);
  entry.size = static_cast<uintptr_t>(w.host.size);
  entry.window = w.dev;
  ncclDevCommWindowTable::Entry* at = &tables_[slot / kTableEntries]->entries[slot % kTableEntries];
  const cudaError_t e = cudaMemcpy(at, &entry, sizeof entry, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return MCCL_ERR(ncclUnhandledCudaError, comm_, "%s: the device communicators' window table: %s", call,
                    cudaGetErrorString(e));
  }
  tableSlots_[slot] = &w;
  w.slot = static_cast<int>(slot);
  return ncclSuccess;
}

void SymState::tableClear(Window& w) {
  if (w.slot < 0) return;
  const size_t slot = static_cast<size_t>(w.slot);
  w.slot = -1;
  if (slot >= tableSlots_.size()) return;
  tableSlots_[slot] = nullptr;
  const ncclDevCommWindowTable::Entry none{0, 0, nullptr};
  if (cudaMemcpy(&tables_[slot / kTableEntries]->entries[slot % kTableEntries], &none, sizeof none,
                 cudaMemcpyHostToDevice) != cudaSuccess)
    cudaGetLastError();  // the context is gone: no kernel reads the table again
}

void SymState::tableFree() {
  for (Window* w : tableSlots_)
    if (w) w->slot = -1;
  for (ncclDevCommWindowTable* b : tables_) {
    cudaFree(b);
    comm_->mem.sub(MemKind::Control, sizeof *b);
  }
  tables_.clear();
  tableSlots_.clear();
}

ncclResult_t SymState::createDevComm(const ncclDevCommRequirements* reqs, ncclDevComm* out, const char* call) {
  const LsaTeam team = lsaTeamOf(comm_);
  // Layout of the resource buffer: the LSA barriers, then each requested buffer.
  size_t bytes = 0;
  ncclLsaBarrierHandle lsaBarrier{0, 0};
  if (reqs->lsaBarrierCount > 0) {
    lsaBarrier.bufHandle = 0;
    lsaBarrier.nBarriers = reqs->lsaBarrierCount;
    bytes = sizeof(uint32_t) * static_cast<size_t>(reqs->lsaBarrierCount) * (1 + static_cast<size_t>(team.size));
  }
  std::vector<std::pair<ncclDevResourceHandle_t*, ncclDevResourceHandle_t>> handles;
  for (const ncclDevResourceRequirements* q = reqs->resourceRequirementsList; q != nullptr; q = q->next) {
    size_t align = q->bufferAlign < kResourceUnit ? kResourceUnit : q->bufferAlign;
    bytes = alignUp(bytes, align);
    handles.emplace_back(q->outBufferHandle, static_cast<ncclDevResourceHandle_t>(bytes / kResourceUnit));
    bytes += q->bufferSize;
  }
  bytes = alignUp(bytes < kResourceUnit ? kResourceUnit : bytes, kResourceUnit);

  CudaDeviceGuard guard(comm_->cudaDev, true);
  void* buf = nullptr;
  cudaError_t e = cudaMalloc(&buf, bytes);
  if (e == cudaSuccess) e = cudaMemset(buf, 0, bytes);
  ncclResult_t local = ncclSuccess;
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (buf) cudaFree(buf);
    buf = nullptr;
    local = MCCL_ERR(ncclUnhandledCudaError, comm_, "%s: cudaMalloc of %zu bytes of barrier and resource memory: %s",
                     call, bytes, cudaGetErrorString(e));
  } else {
    cudaDeviceSynchronize();  // zeroed before any peer can write into it
    comm_->mem.add(MemKind::Control, bytes);
  }
  // The window table, with the first device communicator. Where it cannot be made, the
  // resource buffer goes into the exchange as an unusable one, so every rank fails alike.
  const bool newTable = tables_.empty();
  if (local == ncclSuccess && newTable) {
    local = tableMake(call);
    if (local != ncclSuccess) {
      cudaFree(buf);
      comm_->mem.sub(MemKind::Control, bytes);
      buf = nullptr;
    }
  }
  // A failed allocation still takes part in the exchange (as an unusable buffer).
  ncclWindow_t win = nullptr;
  ncclResult_t r = registerWindow(buf, bytes, NCCL_WIN_COLL_SYMMETRIC, call, &win, true);
  if (r != ncclSuccess) {
    if (buf) {
      cudaFree(buf);
      comm_->mem.sub(MemKind::Control, bytes);
    }
    if (newTable && devComms_.empty()) tableFree();
    return local != ncclSuccess ? local : r;
  }
  devComms_[win] = bytes;

  ncclDevComm d;
  std::memset(&d, 0, sizeof d);
  d.rank = comm_->rank;
  d.nRanks = comm_->nranks;
  d.nRanks_rcp32 = reciprocal32(comm_->nranks);
  d.lsaRank = team.rank;
  d.lsaSize = team.size;
  d.lsaSize_rcp32 = reciprocal32(team.size);
  d.windowTable = tables_.front();
  d.resourceWindow = win;
  d.resourceWindow_inlined = windows_[win]->host;
  d.lsaMultimem.mcBasePtr = nullptr;
  d.lsaBarrier = lsaBarrier;
  *out = d;
  for (auto& h : handles)
    if (h.first) *h.first = h.second;
  int nTeams = 0;
  for (ncclTeamRequirements* t = reqs->teamRequirementsList; t != nullptr && nTeams < 4096; t = t->next, nTeams++)
    if (t->outMultimemHandle) t->outMultimemHandle->mcBasePtr = nullptr;
  INFO(kLogInit, "rank %d: device communicator (LSA rank %d of %d, %d LSA barriers, %zu bytes of resources)", comm_->rank,
       team.rank, team.size, reqs->lsaBarrierCount, bytes);
  return ncclSuccess;
}

ncclResult_t SymState::destroyDevComm(const ncclDevComm* devComm, const char* call) {
  ncclWindow_t win = devComm->resourceWindow;
  auto it = devComms_.find(win);
  auto wit = windows_.find(win);
  if (it == devComms_.end() || wit == windows_.end())
    return MCCL_ERR(ncclInvalidArgument, comm_, "%s: devComm is not a device communicator of this communicator "
                    "(or was destroyed)", call);
  void* buf = wit->second->host.localPtr;
  const size_t bytes = it->second;
  devComms_.erase(it);
  CudaDeviceGuard guard(comm_->cudaDev, true);
  if (devComms_.empty()) tableFree();  // the last device communicator takes the table
  ncclResult_t r = deregisterWindow(win, call);
  cudaFree(buf);
  comm_->mem.sub(MemKind::Control, bytes);
  return r;
}

#else  // no CUDA: every communicator is a host communicator, refused before this

class SymMapper {};
class CeSync {};
struct SymState::Window {};
SymState::SymState(ncclComm* comm) : comm_(comm) {}
SymState::~SymState() = default;
ncclResult_t SymState::unmap(Window&) { return ncclSuccess; }
void SymState::freeWindow(Window&) {}
bool SymState::directFlags(uint64_t**) const { return false; }
CeSync* SymState::ceSync() const { return nullptr; }
void SymState::releaseCeWaits() {}
uint64_t SymState::ceWaitingAt(int*) const { return 0; }
bool SymState::directBuffer(const void*, size_t, uint8_t**) const { return false; }
ncclResult_t SymState::registerWindow(void*, size_t, int, const char* call, ncclWindow_t*, bool) {
  return MCCL_ERR(ncclInvalidUsage, comm_, "%s: this mccl was built without CUDA", call);
}
ncclResult_t SymState::deregisterWindow(ncclWindow_t, const char* call) {
  return MCCL_ERR(ncclInvalidUsage, comm_, "%s: this mccl was built without CUDA", call);
}
ncclResult_t SymState::createDevComm(const ncclDevCommRequirements*, ncclDevComm*, const char* call) {
  return MCCL_ERR(ncclInvalidUsage, comm_, "%s: this mccl was built without CUDA", call);
}
ncclResult_t SymState::destroyDevComm(const ncclDevComm*, const char* call) {
  return MCCL_ERR(ncclInvalidUsage, comm_, "%s: this mccl was built without CUDA", call);
}

#endif

ncclResult_t needGpuComm(ncclComm* comm, const char* call, const char* what) {
  if (comm->isHost())
    return MCCL_ERR(ncclInvalidUsage, comm,
                    "%s: comm is a host communicator; %s need a GPU communicator (device memory mapped between GPUs)",
                    call, what);
  if (!comm->sym) comm->sym.reset(new SymState(comm));
  return ncclSuccess;
}

}  // namespace mccl

using namespace mccl;

NCCL_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                             int winFlags) {
  MCCL_API_BEGIN
  const char* call = "ncclCommWindowRegister";
  MCCL_CHECK(checkCommArg(comm, call));
  if (win == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: win is NULL", call);
  if (buff == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: buff is NULL", call);
  if (size == 0) return MCCL_ERR(ncclInvalidArgument, comm, "%s: size is 0", call);
  if (winFlags != NCCL_WIN_DEFAULT && winFlags != NCCL_WIN_COLL_SYMMETRIC)
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: winFlags = %d is not NCCL_WIN_DEFAULT or NCCL_WIN_COLL_SYMMETRIC", call, winFlags);
  MCCL_CHECK(comm->checkUsable(call));
  MCCL_CHECK(needGpuComm(comm, call, "memory windows"));
  if (groupDepth() > 0) {
    // Collective: inside a group it runs at ncclGroupEnd, where *win is set, so that one
    // thread may register the windows of several ranks (as NCCL, and nccl-tests -R 2).
    *win = nullptr;
    groupAddSetup(comm, [comm, buff, size, winFlags, win, call] {
      ncclWindow_t w = nullptr;
      ncclResult_t r = comm->sym->registerWindow(buff, size, winFlags, call, &w);
      if (r == ncclSuccess) *win = w;
      return r;
    });
    return ncclSuccess;
  }
  ncclWindow_t w = nullptr;
  MCCL_CHECK(comm->sym->registerWindow(buff, size, winFlags, call, &w));
  *win = w;
  return ncclSuccess;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommWindowRegister)

NCCL_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  MCCL_API_BEGIN
  const char* call = "ncclCommWindowDeregister";
  MCCL_CHECK(checkCommArg(comm, call));
  if (win == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: win is NULL", call);
  if (comm->isHost())
    return MCCL_ERR(ncclInvalidUsage, comm, "%s: comm is a host communicator, which has no windows", call);
  if (!comm->sym || !comm->sym->isWindow(win))
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: win = %p is not a window of this communicator", call,
                    static_cast<void*>(win));
  return comm->sym->deregisterWindow(win, call);
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommWindowDeregister)
