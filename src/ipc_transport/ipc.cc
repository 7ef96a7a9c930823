#include "ipc_transport/ipc.h"

#include <cstring>

#include "core/comm.h"
#include "core/cuda_guard.h"
#include "core/cuda_util.h"
#include "core/error.h"
#include "core/knobs.h"

namespace mccl {

struct IpcTransport::Info {
  static constexpr uint32_t kMagic = 0x69706331;  // "ipc1"
  uint32_t magic = kMagic;
  uint32_t sameProcess = 0;
  uint32_t slots = 0;
  int32_t dev = -1;         // this process's device index (same-process peers)
  uint64_t slotBytes = 0;
  uint64_t ptr = 0;         // region (same process)
  uint64_t offset = 0;      // offset of the region inside the exported allocation
  cudaIpcMemHandle_t handle;
  uint32_t net = 0;         // 1: a network connection (netRec), not IPC
  uint32_t pad = 0;
  NetRecord netRec;
};

struct IpcTransport::Conn {
  bool ready = false;
  uint8_t* local = nullptr;   // my region (FIFO for a receiver, head word for a sender)
  size_t ownedBytes = 0;      // > 0: local was cudaMalloc'd for this connection (receivers)
  Info mine;
  Conn() = default;
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  ~Conn() {
    if (ownedBytes > 0) cudaFree(local);  // also when setup failed half way
  }
};

namespace {

#define CUDA_TRY(call, what) MCCL_CUDA_TRY(comm_, call, what)
}  // namespace

IpcTransport::IpcTransport(ncclComm* comm) : comm_(comm), exchange_(comm, sizeof(Info)) {
  int64_t slots = knobInt(Knob::FifoSlots);
  if (slots <= 0) slots = 4;  // 1 MiB posts of a 4 MiB FIFO: a fence per MiB (measured best)
  slots_ = static_cast<uint32_t>(slots < 2 ? 2 : slots > 64 ? 64 : slots);
  int64_t buff = knobInt(Knob::BuffSize);
  if (buff < static_cast<int64_t>(slots_) * 4096) buff = slots_ * 4096;
  slotBytes_ = static_cast<size_t>(buff / slots_) & ~static_cast<size_t>(255);
}

IpcTransport::~IpcTransport() {
  CudaDeviceGuard guard(comm_->cudaDev);
  netLive_.store(nullptr, std::memory_order_release);
  net_.reset();  // stops the proxy's use of this communicator first
  for (auto& kv : opened_) {
    cudaIpcCloseMemHandle(kv.second.first);
    comm_->mem.sub(MemKind::PeerMapped, kv.second.second);
  }
  conns_.clear();
  if (ctrl_) cudaFree(ctrl_);
  if (dConns_) cudaFree(dConns_);
  if (setupStream_) cudaStreamDestroy(setupStream_);
  comm_->mem.sub(MemKind::Fifo, fifoBytes_);
  comm_->mem.sub(MemKind::Control, ctrlBytes_ + connBytes_);
}

ncclResult_t IpcTransport::prepare(PeerInfo* mine, bool peersMayBeRemote) {
  (void)mine;  // nothing of the network path travels in the init record
  netWanted_ = peersMayBeRemote;
  return ncclSuccess;
}

// The network path (a UCX worker, the proxy's client) for the first connection to a peer
// beyond CUDA IPC. Made here rather than at init: a GPU communicator whose peers all share
// its node never needs it, and the worker cost 3.0-3.6 ms of each such communicator's init
// (2 x H100, MCCL_PROFILE_INIT, bench/results/gpu-2xH200-2026-11-26e). Tried once.
ncclResult_t IpcTransport::startNet() {
  if (net_ || !netWanted_ || netTried_) return ncclSuccess;
  netTried_ = true;
  NetLayout layout;
  layout.slots = slots_;
  layout.slotBytes = slotBytes_;
  int64_t slices = knobInt(Knob::GpuSlices);
  layout.slices = static_cast<uint32_t>(slices < 1 ? 1 : slices > 16 ? 16 : slices);
  net_.reset(new GpuNet(comm_, layout));
  ncclResult_t r = net_->prepare();
  if (r != ncclSuccess) {
    // Without UCX only IPC peers can be reached (the caller reports the peer it needed).
    WARN("rank %d: no UCX network path for GPU peers (%s)", comm_->rank, threadLastError());
    net_.reset();
  }
  netLive_.store(net_.get(), std::memory_order_release);
  return ncclSuccess;
}

ncclResult_t IpcTransport::setup(int maxChannels) {
  maxChannels_ = maxChannels;
  CUDA_TRY(cudaStreamCreateWithFlags(&setupStream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  capacity_ = kNumConnClasses * maxChannels * comm_->nranks * 2;
  CUDA_TRY(cudaMalloc(&dConns_, sizeof(DevConn) * static_cast<size_t>(capacity_)), "cudaMalloc(connections)");
  connBytes_ = sizeof(DevConn) * static_cast<size_t>(capacity_);
  comm_->mem.add(MemKind::Control, connBytes_);
  CUDA_TRY(cudaMemset(dConns_, 0, sizeof(DevConn) * static_cast<size_t>(capacity_)), "cudaMemset(connections)");
  const size_t ctrlBytes = sizeof(uint64_t) * kCtrlWords * static_cast<size_t>(capacity_);
  CUDA_TRY(cudaMalloc(&ctrl_, ctrlBytes), "cudaMalloc(control words)");
  ctrlBytes_ = ctrlBytes;
  comm_->mem.add(MemKind::Control, ctrlBytes_);
  CUDA_TRY(cudaMemset(ctrl_, 0, ctrlBytes), "cudaMemset(control words)");
  requested_.assign(static_cast<size_t>(capacity_), 0);
  return ncclSuccess;
}

bool IpcTransport::canReach(int peer) const {
  // A rank's connection to itself is a copy on its own GPU, P2P disabled or not (as in
  // NCCL, where NCCL_P2P_DISABLE concerns pairs of GPUs).
  if (peer == comm_->rank) return true;
  if (knobBool(Knob::P2pDisable)) return false;
  const PeerInfo* p = comm_->topo.localPeer(peer);  // nullptr: another node
  if (p == nullptr || p->cudaDev < 0) return false;
  int other = -1;
  const std::string busId = busIdString(p->busId);
  if (busId.empty() || cudaDeviceGetByPCIBusId(&other, busId.c_str()) != cudaSuccess) {
    cudaGetLastError();
    return true;  // not visible here: IPC may still work; mapping will tell
  }
  if (other == comm_->cudaDev) return true;
  int can = 0;
  cudaDeviceCanAccessPeer(&can, comm_->cudaDev, other);
  return can != 0;
}

int IpcTransport::slotOf(const ConnKey& key) const {
  return (((static_cast<int>(key.cls) * maxChannels_) + key.channel) * comm_->nranks + key.peer) * 2 + (key.send ? 1 : 0);
}

ncclResult_t IpcTransport::need(const ConnKey& key) {
  const int slot = slotOf(key);
  if (slot < 0 || slot >= capacity_)
    return MCCL_ERR(ncclInternalError, comm_, "GPU connection (peer %d, channel %d) out of range", key.peer, key.channel);
  if (requested_[slot]) return ncclSuccess;  // the hot path: one array lookup
  CudaDeviceGuard guard(comm_->cudaDev);
  CaptureModeRelaxed relaxed;
  auto c = std::make_unique<Conn>();
  const bool ll = key.cls == ConnClass::Ll || key.cls == ConnClass::LlP2p || key.cls == ConnClass::Ll128 ||
                  key.cls == ConnClass::Ll128P2p;
  c->mine.slots = ll ? kLlSlots : slots_;
  c->mine.slotBytes = ll ? kLlSlotBytes : slotBytes_;
  if (!canReach(key.peer)) {
    if (ll)
      return MCCL_ERR(ncclInternalError, comm_, "rank %d: the LL protocol was planned for rank %d, which is not reachable over CUDA IPC",
                      comm_->rank, key.peer);
    MCCL_CHECK(startNet());
    if (!net_)
      return MCCL_ERR(ncclSystemError, comm_,
                      "rank %d cannot reach the GPU of rank %d over CUDA IPC (%s) and has no UCX network path",
                      comm_->rank, key.peer, knobBool(Knob::P2pDisable) ? "NCCL_P2P_DISABLE=1" : "another host");
    c->mine.net = 1;
    MCCL_CHECK(net_->start(key, &c->mine.netRec));
    Info mine = c->mine;
    adopt(key, std::move(c));
    return posted(slot, exchange_.post(key, &mine));
  }
  c->mine.dev = comm_->cudaDev;
  c->mine.sameProcess = comm_->topo.sameProcess(key.peer) ? 1 : 0;
  void* exportBase;
  if (key.send) {
    // The receiver writes its consumed count into this connection's head word.
    uint64_t* head = ctrl_ + kCtrlWords * static_cast<size_t>(slot) + kCtrlHead;
    c->local = reinterpret_cast<uint8_t*>(head);
    c->mine.offset = reinterpret_cast<uint8_t*>(head) - reinterpret_cast<uint8_t*>(ctrl_);
    exportBase = ctrl_;
  } else {
    size_t bytes = ConnRegion::kDataOff + static_cast<size_t>(c->mine.slots) * c->mine.slotBytes;
    CUDA_TRY(cudaMalloc(&c->local, bytes), "cudaMalloc(FIFO)");
    c->ownedBytes = bytes;
    // Cleared before the record goes out: the peer writes here once it has it.
    CUDA_TRY(cudaMemsetAsync(c->local, 0, ll ? bytes : ConnRegion::kDataOff, setupStream_), "cudaMemsetAsync(FIFO)");
    CUDA_TRY(cudaStreamSynchronize(setupStream_), "cudaStreamSynchronize(FIFO clear)");
    exportBase = c->local;
    c->mine.offset = 0;
  }
  c->mine.ptr = reinterpret_cast<uint64_t>(c->local);
  std::memset(&c->mine.handle, 0, sizeof c->mine.handle);
  if (!c->mine.sameProcess) CUDA_TRY(cudaIpcGetMemHandle(&c->mine.handle, exportBase), "cudaIpcGetMemHandle");
  Info mine = c->mine;
  adopt(key, std::move(c));
  return posted(slot, exchange_.post(key, &mine));
}

// Keeps c as key's connection, in place of one whose record could not be posted.
void IpcTransport::adopt(const ConnKey& key, std::unique_ptr<Conn> c) {
  std::unique_ptr<Conn>& at = conns_[key];
  if (at) {
    fifoBytes_ -= at->ownedBytes;
    comm_->mem.sub(MemKind::Fifo, at->ownedBytes);
  }
  fifoBytes_ += c->ownedBytes;
  comm_->mem.add(MemKind::Fifo, c->ownedBytes);
  at = std::move(c);
}

// Marks slot requested once its record is on its way: a connection whose setup failed is
// tried again by the next operation that needs it, never taken for one under way.
ncclResult_t IpcTransport::posted(int slot, ncclResult_t r) {
  if (r == ncclSuccess) requested_[slot] = 1;
  return r;
}

bool IpcTransport::ready(const ConnKey& key) const {
  auto it = conns_.find(key);
  return it != conns_.end() && it->second->ready;
}

ncclResult_t IpcTransport::mapPeer(int peer, const Info& info, uint8_t** ptr) {
  if (info.sameProcess) {
    if (info.dev != comm_->cudaDev) {
      cudaError_t e = cudaDeviceEnablePeerAccess(info.dev, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
      else if (e != cudaSuccess)
        return MCCL_ERR(ncclUnhandledCudaError, comm_, "cudaDeviceEnablePeerAccess(%d -> %d): %s",
                        comm_->cudaDev, info.dev, cudaGetErrorString(e));
    }
    *ptr = reinterpret_cast<uint8_t*>(info.ptr);
    return ncclSuccess;
  }
  std::string h(reinterpret_cast<const char*>(&info.handle), sizeof info.handle);
  auto key = std::make_pair(peer, h);
  auto it = opened_.find(key);
  if (it == opened_.end()) {
    void* p = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle(&p, info.handle, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess)
      return MCCL_ERR(ncclUnhandledCudaError, comm_, "cudaIpcOpenMemHandle for rank %d: %s", peer,
                      cudaGetErrorString(e));
    // A sender maps its receiver's FIFO; a receiver its sender's control words.
    const size_t bytes = info.offset == 0 ? ConnRegion::kDataOff + static_cast<size_t>(info.slots) * info.slotBytes
                                          : sizeof(uint64_t) * kCtrlWords * static_cast<size_t>(capacity_);
    it = opened_.emplace(key, std::make_pair(static_cast<uint8_t*>(p), bytes)).first;
    comm_->mem.add(MemKind::PeerMapped, bytes);
  }
  *ptr = it->second.first + info.offset;
  return ncclSuccess;
}

ncclResult_t IpcTransport::finish(const ConnKey& key, Conn& c, const Info& info) {
  if (info.magic != Info::kMagic || info.slots < 2 || info.slotBytes == 0 || info.net != c.mine.net)
    return MCCL_ERR(ncclInternalError, comm_, "rank %d sent an invalid GPU connection record", key.peer);
  CudaDeviceGuard guard(comm_->cudaDev);
  CaptureModeRelaxed relaxed;
  DevConn d;
  std::memset(&d, 0, sizeof d);
  uint8_t* peer = nullptr;
  if (c.mine.net) {
    MCCL_CHECK(net_->finish(key, info.netRec, &d));
  } else {
    MCCL_CHECK(mapPeer(key.peer, info, &peer));
  }
  d.peer = static_cast<uint32_t>(key.peer);
  const int slot = slotOf(key);
  uint64_t* ctrl = ctrl_ + kCtrlWords * static_cast<size_t>(slot);
  if (c.mine.net) {
    // GpuNet filled buf, tail, head, sizes and the layout.
  } else if (key.send) {
    d.buf = peer + ConnRegion::kDataOff;
    d.tail = reinterpret_cast<uint64_t*>(peer + ConnRegion::kFlagOff);
    d.head = ctrl + kCtrlHead;
    d.slots = info.slots;  // the receiver's FIFO decides
    d.slotBytes = info.slotBytes;
  } else {
    d.buf = c.local + ConnRegion::kDataOff;
    d.tail = reinterpret_cast<uint64_t*>(c.local + ConnRegion::kFlagOff);
    d.head = reinterpret_cast<uint64_t*>(peer);  // the sender's head word
    d.slots = c.mine.slots;
    d.slotBytes = c.mine.slotBytes;
  }
  d.step = ctrl + kCtrlStep;
  CUDA_TRY(cudaMemcpyAsync(dConns_ + slot, &d, sizeof d, cudaMemcpyHostToDevice, setupStream_), "cudaMemcpyAsync(connection)");
  CUDA_TRY(cudaStreamSynchronize(setupStream_), "cudaStreamSynchronize(connection)");
  c.ready = true;
  if (!c.mine.net)
    INFO(kLogP2p, "rank %d %s rank %d channel %d class %d over CUDA %s", comm_->rank, key.send ? "->" : "<-",
         key.peer, key.channel, static_cast<int>(key.cls), info.sameProcess ? "P2P (same process)" : "IPC");
  return ncclSuccess;
}

ncclResult_t IpcTransport::progress() {
  if (exchange_.idle()) return ncclSuccess;
  return exchange_.poll([this](const ConnKey& key, const void* rec) {
    Info info;
    std::memcpy(&info, rec, sizeof info);
    return finish(key, *conns_[key], info);
  });
}

}  // namespace mccl
