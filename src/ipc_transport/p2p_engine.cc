#include "ipc_transport/p2p_engine.h"

#include <cuda.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>

#include "core/comm.h"
#include "core/cuda_guard.h"
#include "core/cuda_util.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/op.h"
#include "core/planner.h"
#include "ipc_transport/mem_ops.h"
#include "ipc_transport/user_buffers.h"

namespace mccl {

namespace {

// One operation's meeting: 3 a round on state (the first arrival, the second, the second's
// reading of the first's offer), so the slot is free again at 3 (round + 1).
struct Slot {
  std::atomic<uint64_t> state;
  uint64_t offer[2];  // by role: that rank's buffer as the other's process reaches it, or 0
  uint64_t pad;
};

// The pair's page (POSIX shared memory, zero when made). Role 0 is the lower rank.
struct Page {
  std::atomic<uint64_t> ready[2];  // by role: its mapping is registered with CUDA (stays 1)
  uint64_t pad0[6];
  // [waiting role][lane][0 arrival, 1 end]: the lane's operations the other role has
  // reached (written by its stream, read by this role's stream).
  uint64_t words[2][kMeetLanes][2];
  Slot slots[kMeetLanes][kMeetSlots];
};
static_assert(sizeof(Slot) * kMeetLanes * kMeetSlots == kMeetRingBytes, "the rings' size as the header says");
static_assert(offsetof(Page, slots) % 64 == 0, "the slots start on a cache line");
static_assert(sizeof(std::atomic<uint64_t>) == 8 && std::atomic<uint64_t>::is_always_lock_free,
              "the page's counters are plain 64-bit words any process may update");

}  // namespace

struct PeerEngines::Pair {
  Page* page = nullptr;
  size_t bytes = 0;
  uint64_t dev = 0;  // the page as the device reaches it (registered), else 0
  char name[64] = {0};
  int role = 0;
  std::atomic<uint64_t> count[kMeetLanes] = {{0}, {0}, {0}, {0}};  // by lane: operations met so far
};

int meetLane(const OpDesc& op, int me) {
  const bool up = op.kind == OpKind::Send ? me < op.root : op.root < me;  // from the lower rank to the higher
  return (op.call == P2pCall::User ? 0 : 2) + (up ? 0 : 1);
}

int meetInRing(void* rings, int dir, int role, uint64_t k, uint64_t offer, uint64_t* theirs) {
  Slot& s = static_cast<Slot*>(rings)[static_cast<size_t>(dir) * kMeetSlots + (k - 1) % kMeetSlots];
  const uint64_t base = 3 * ((k - 1) / kMeetSlots);
  if (s.state.load(std::memory_order_acquire) < base) return 0;
  __atomic_store_n(&s.offer[role], offer, __ATOMIC_RELAXED);
  const uint64_t old = s.state.fetch_add(1, std::memory_order_acq_rel);  // publishes the offer
  if (old == base) return 1;
  if (old != base + 1) return -1;
  *theirs = __atomic_load_n(&s.offer[1 - role], __ATOMIC_RELAXED);
  s.state.fetch_add(1, std::memory_order_release);  // the slot is free for its next round
  return 2;
}

PeerEngines::PeerEngines(ncclComm* comm) : comm_(comm) {}

PeerEngines::~PeerEngines() {
  if (pairs_.empty() && sides_.empty()) return;
  CudaDeviceGuard guard(comm_->cudaDev);
  release();
  for (cudaStream_t st : sides_) {
    cudaStreamSynchronize(st);  // released: whatever waited there has passed
    cudaStreamDestroy(st);
  }
  for (cudaEvent_t ev : joinEvents_) cudaEventDestroy(ev);
  if (fork_) cudaEventDestroy(fork_);
  for (auto& kv : pairs_) {
    Pair& p = *kv.second;
    if (p.dev) cudaHostUnregister(p.page);
    munmap(p.page, p.bytes);
    shm_unlink(p.name);  // the peer may have done it already
  }
  cudaGetLastError();
}

bool PeerEngines::wanted(P2pCall call, size_t bytes) const {
  if (call == P2pCall::User) {
    const int64_t min = knobInt(Knob::P2pCeMinBytes);
    return min > 0 && bytes >= static_cast<size_t>(min);
  }
  const int64_t min = knobInt(Knob::PlainCeMinBytes);
  if (min > 0 && bytes >= static_cast<size_t>(min)) return true;
  // Under the zero-CTA policy, where the windows' copy engines start (direct_plan.cc
  // copyEnginesMove says why): above what one LL block moves, a Broadcast from 2 MiB.
  constexpr size_t kZeroBroadcastBytes = size_t{2} << 20;
  return comm_->config.ctaPolicy == NCCL_CTA_POLICY_ZERO &&
         (call == P2pCall::Broadcast ? bytes >= kZeroBroadcastBytes : bytes > kLlBytesPerChannel);
}

bool PeerEngines::eligible(const OpDesc& op) const {
  if (!op.isP2p() || op.root == comm_->rank || op.count == 0 || !wanted(op.call, op.bytes())) return false;
  const PeerInfo* info = comm_->topo.localPeer(op.root);
  // Never where ranks of one process share a GPU (on any rank: every rank decides alike),
  // where a copy between two addresses of one device waits for a peer's spinning kernel.
  return info != nullptr && info->cudaDev >= 0 && !comm_->topo.processSharesDevice();
}

bool PeerEngines::everyPeerMeets() const {
  if (comm_->topo.processSharesDevice()) return false;
  for (int r = 0; r < comm_->nranks; ++r) {
    const PeerInfo* info = comm_->topo.localPeer(r);
    if (info == nullptr || info->cudaDev < 0) return false;
  }
  return true;
}

PeerEngines::Pair* PeerEngines::pair(int peer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pairs_.find(peer);
  if (it != pairs_.end()) return it->second.get();
  const int lo = std::min(comm_->rank, peer), hi = std::max(comm_->rank, peer);
  const PeerInfo* a = comm_->topo.localPeer(lo);
  const PeerInfo* b = comm_->topo.localPeer(hi);
  if (!a || !b) return nullptr;
  std::unique_ptr<Pair> p(new Pair);
  p->role = comm_->rank == lo ? 0 : 1;
  const uint64_t h = comm_->commHash ^ (a->processHash * 0x9e3779b97f4a7c15ull) ^ (b->processHash * 0xc2b2ae3d27d4eb4full);
  std::snprintf(p->name, sizeof p->name, "/mccl-p2pce-%016llx-%d-%d", static_cast<unsigned long long>(h), lo, hi);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  p->bytes = (sizeof(Page) + page - 1) / page * page;
  // Both ends open it with O_CREAT: the first makes it (zero-filled), the other finds it.
  std::string why;
  void* m = mapSharedPage(p->name, p->bytes, true, false, &why);
  if (m == nullptr) {
    (void)MCCL_ERR(ncclSystemError, comm_, "copy engines with rank %d: %s", peer, why.c_str());
    return nullptr;
  }
  p->page = static_cast<Page*>(m);
  // Without a registration (or without stream memory operations) this rank still meets its
  // peer in the slots, and never offers: both ends then take the FIFO path.
  CaptureModeRelaxed relaxed;  // a first meeting may come while the user's stream is captured
  if (batchMemOp() && memOps64(comm_->cudaDev)) p->dev = registerSharedPage(m, p->bytes);
  if (p->dev) p->page->ready[p->role].store(1, std::memory_order_release);
  Pair* out = p.get();
  pairs_[peer] = std::move(p);
  return out;
}

bool PeerEngines::meet(const OpDesc& op, bool capturing, PeerEngineOp* out, ncclResult_t* res) {
  const int me = comm_->rank, peer = op.root;
  Pair* p = pair(peer);
  if (p == nullptr) {
    *res = ncclSystemError;  // pair() said why
    return false;
  }
  const bool send = op.kind == OpKind::Send;
  const int role = p->role, other = 1 - role;
  const int dir = meetLane(op, me);
  const uint64_t k = p->count[dir].fetch_add(1, std::memory_order_relaxed) + 1;
  void* mine = const_cast<void*>(send ? op.sendbuff : static_cast<const void*>(op.recvbuff));
  uint64_t offer = 0;
  if (!capturing && p->dev && p->page->ready[other].load(std::memory_order_acquire))
    offer = reinterpret_cast<uint64_t>(offerUserBuffer(comm_, peer, mine, op.bytes(), false));
  uint64_t theirs = 0;
  int met = meetInRing(p->page->slots, dir, role, k, offer, &theirs);
  // The slot's last round is not over (this end ran kMeetSlots operations of the lane ahead
  // of its peer's host): wait, as long as the communicator lives and MCCL_TIMEOUT allows.
  const int64_t timeout = knobInt(Knob::Timeout);
  const auto start = std::chrono::steady_clock::now();
  while (met == 0) {
    if (comm_->aborted.load()) {
      *res = MCCL_ERR(ncclInvalidUsage, comm_, "%s with rank %d: the communicator was aborted",
                      p2pCallName(op.call), peer);
      return false;
    }
    if (timeout > 0 && std::chrono::steady_clock::now() - start > std::chrono::seconds(timeout)) {
      *res = MCCL_ERR(ncclRemoteError, comm_,
                      "%s with rank %d: %d operations of this direction wait for rank %d to call theirs "
                      "(MCCL_TIMEOUT %lld s)", p2pCallName(op.call), peer, kMeetSlots, peer,
                      static_cast<long long>(timeout));
      return false;
    }
    sched_yield();
    met = meetInRing(p->page->slots, dir, role, k, offer, &theirs);
  }
  if (met < 0) {
    *res = MCCL_ERR(ncclInternalError, comm_, "%s with rank %d: operation %llu met its slot out of step",
                    p2pCallName(op.call), peer, static_cast<unsigned long long>(k));
    return false;
  }
  const bool second = met == 2;
  // The first to come decided: the copy engines where it offered its buffer.
  const bool engines = second ? theirs != 0 : offer != 0;
  if (!engines) return false;
  if (second && capturing) {
    *res = MCCL_ERR(ncclInvalidUsage, comm_,
                    "%s rank %d: this rank captures a CUDA graph where rank %d did not; the ranks of a "
                    "communicator capture their Sends and Recvs alike, or none",
                    send ? "Send to" : "Recv from", peer, peer);
    return false;
  }
  out->peer = peer;
  out->dir = dir;
  out->k = k;
  out->issuer = second;
  out->bytes = op.bytes();
  if (second) {
    out->dst = send ? reinterpret_cast<void*>(theirs) : op.recvbuff;
    out->src = send ? op.sendbuff : reinterpret_cast<const void*>(theirs);
  }
  taken_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

ncclResult_t PeerEngines::launch(const std::vector<PeerEngineOp>& ops, cudaStream_t stream) {
  joins_ = 0;
  if (ops.empty()) return ncclSuccess;
  // One side stream per (peer, lane) of the launch, its operations in count order: the
  // two ends of a lane take its operations in the same order, and no operation waits
  // behind another lane's (rank 0 sending in one group and receiving in the next
  // while rank 1 does both in one: rank 1's Send must not wait for rank 0's Recv).
  std::vector<std::pair<int, int>> lanes;  // (peer, lane)
  for (const PeerEngineOp& o : ops)
    if (std::find(lanes.begin(), lanes.end(), std::make_pair(o.peer, o.dir)) == lanes.end())
      lanes.emplace_back(o.peer, o.dir);
  if (!fork_) MCCL_CUDA_TRY(comm_, cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  while (sides_.size() < lanes.size()) {
    cudaStream_t st = nullptr;
    cudaEvent_t ev = nullptr;
    MCCL_CUDA_TRY(comm_, cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    sides_.push_back(st);
    MCCL_CUDA_TRY(comm_, cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    joinEvents_.push_back(ev);
  }
  MCCL_CUDA_TRY(comm_, cudaEventRecord(fork_, stream), "cudaEventRecord(fork)");
  // The words, as the device reaches them: [waiting role][lane][0 arrival, 1 end].
  auto word = [&](const PeerEngineOp& o, int role, int kind) {
    std::lock_guard<std::mutex> lock(mu_);
    const Pair& p = *pairs_.at(o.peer);
    return p.dev + offsetof(Page, words) + ((static_cast<uint64_t>(role) * kMeetLanes + o.dir) * 2 + kind) * 8;
  };
  auto roleOf = [&](int peer) {
    std::lock_guard<std::mutex> lock(mu_);
    return pairs_.at(peer)->role;
  };
  for (size_t j = 0; j < lanes.size(); ++j) {
    cudaStream_t side = sides_[j];
    MCCL_CUDA_TRY(comm_, cudaStreamWaitEvent(side, fork_, 0), "cudaStreamWaitEvent(fork)");
    for (const PeerEngineOp& o : ops) {
      if (o.peer != lanes[j].first || o.dir != lanes[j].second) continue;
      const int role = roleOf(o.peer);
      for (int kind = 0; kind < 2; ++kind) {
        // Arrival (kind 0), the copy, then the end (kind 1): this end's word written into
        // the peer's (after a memory barrier: the copy has landed), then the peer's waited for.
        if (kind == 1 && o.issuer) {
          const cudaError_t e = cudaMemcpyAsync(o.dst, o.src, o.bytes, cudaMemcpyDeviceToDevice, side);
          if (e != cudaSuccess)
            return MCCL_ERR(ncclUnhandledCudaError, comm_, "copy engines: cudaMemcpyAsync of %zu bytes with rank %d: %s",
                            o.bytes, o.peer, cudaGetErrorString(e));
          issued_.fetch_add(1, std::memory_order_relaxed);
        }
        CUstreamBatchMemOpParams m[2] = {memOpWrite(word(o, 1 - role, kind), o.k), memOpWaitGeq(word(o, role, kind), o.k)};
        const CUresult r = batchMemOp()(reinterpret_cast<CUstream>(side), 2, m, 0);
        if (r != CUDA_SUCCESS)
          return MCCL_ERR(ncclUnhandledCudaError, comm_, "copy engines with rank %d: cuStreamBatchMemOp: CUDA "
                          "driver error %d", o.peer, static_cast<int>(r));
      }
    }
    MCCL_CUDA_TRY(comm_, cudaEventRecord(joinEvents_[j], side), "cudaEventRecord(join)");
  }
  joins_ = lanes.size();
  return ncclSuccess;
}

ncclResult_t PeerEngines::join(cudaStream_t stream) {
  for (size_t j = 0; j < joins_; ++j)
    MCCL_CUDA_TRY(comm_, cudaStreamWaitEvent(stream, joinEvents_[j], 0), "cudaStreamWaitEvent(join)");
  return ncclSuccess;
}

uint64_t PeerEngines::waitingAt(int* peer) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& kv : pairs_) {
    const Pair& p = *kv.second;
    for (int d = 0; d < kMeetLanes; ++d)
      for (int kind = 0; kind < 2; ++kind) {
        // This end's count, written by its stream into the peer's row, against the peer's.
        const uint64_t mine = __atomic_load_n(&p.page->words[1 - p.role][d][kind], __ATOMIC_ACQUIRE);
        const uint64_t theirs = __atomic_load_n(&p.page->words[p.role][d][kind], __ATOMIC_ACQUIRE);
        if (static_cast<int64_t>(theirs - mine) >= 0) continue;
        *peer = kv.first;
        return (mine << 20) | (static_cast<uint64_t>(kv.first & 0x1ffff) << 3) | static_cast<uint64_t>(d * 2 + kind);
      }
  }
  return 0;
}

void PeerEngines::release() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& kv : pairs_) {
    Pair& p = *kv.second;
    for (int d = 0; d < kMeetLanes; ++d) {
      const uint64_t v = p.count[d].load(std::memory_order_relaxed) + kMemOpReleaseAhead;
      for (int kind = 0; kind < 2; ++kind) __atomic_store_n(&p.page->words[p.role][d][kind], v, __ATOMIC_RELEASE);
    }
  }
}

}  // namespace mccl
