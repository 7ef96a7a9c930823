#include "ipc_transport/ipc.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/comm.h"
#include "core/cuda_guard.h"
#include "core/cuda_util.h"
#include "core/error.h"
#include "core/knobs.h"

namespace mccl {

namespace {
std::atomic<uint64_t> gStepBase{0}, gStepPresets{0};
}  // namespace

void ipcSetStepBaseForTests(uint64_t base) { gStepBase.store(base); }
uint64_t ipcStepPresetsForTests() { return gStepPresets.load(); }

struct IpcTransport::Info {
  static constexpr uint32_t kMagic = 0x69706331;  // "ipc1"
  uint32_t magic = kMagic;
  uint32_t sameProcess = 0;
  uint32_t slots = 0;
  int32_t dev = -1;         // this process's device index (same-process peers)
  uint64_t slotBytes = 0;
  uint64_t ptr = 0;         // region (same process)
  uint64_t offset = 0;      // offset of the region inside the exported allocation
  uint64_t exported = 0;    // bytes of the exported allocation (a FIFO, or a block of heads)
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
  // Point-to-point slots of NCCL_P2P_NVL_CHUNKSIZE, at least two and at most kUnitSlots
  // (so that their channels may take units: gpu_plan.cc, unitsOf) in the buffer.
  const int64_t chunk = std::max<int64_t>(4096, std::min<int64_t>(knobInt(Knob::P2pNvlChunkSize), buff / 2));
  p2pSlots_ = static_cast<uint32_t>(std::min<int64_t>(kUnitSlots, buff / chunk));
  p2pSlotBytes_ = static_cast<size_t>(chunk) & ~static_cast<size_t>(255);
  p2pOwn_ = comm_->nranks == 2 || knobIsSet(Knob::P2pNvlChunkSize);  // once: connections keep it
  std::memset(&tableHandle_, 0, sizeof tableHandle_);
}

bool IpcTransport::p2pOwnFifo(ConnClass cls) const { return cls == ConnClass::P2p && p2pOwn_ && !comm_->gpuNet; }

IpcTransport::~IpcTransport() {
  CudaDeviceGuard guard(comm_->cudaDev);
  netLive_.store(nullptr, std::memory_order_release);
  net_.reset();  // stops the proxy's use of this communicator first
  for (auto& kv : opened_) {
    cudaIpcCloseMemHandle(kv.second.first);
    comm_->mem.sub(MemKind::PeerMapped, kv.second.second);
  }
  conns_.clear();
  for (auto& kv : peers_)
    if (kv.second->heads) cudaFree(kv.second->heads);
  table_.release();
  if (setupStream_) cudaStreamDestroy(setupStream_);
  comm_->mem.sub(MemKind::Fifo, fifoBytes_);
  comm_->mem.sub(MemKind::Control, headBytes_);
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
  MCCL_CHECK(table_.init(comm_, comm_->nranks, peerBlockBytes(maxChannels), setupStream_));
  const int pos = comm_->topo.ringPos(comm_->rank);
  MCCL_CHECK(table_.map(comm_->topo.ringRank(pos - 1)));
  MCCL_CHECK(table_.map(comm_->topo.ringRank(pos + 1)));
  return ncclSuccess;
}

IpcTransport::Peer& IpcTransport::peer(int p) {
  PeerCache& e = cache_[p & 63];
  if (e.peer == p) return *e.p;
  std::unique_ptr<Peer>& at = peers_[p];
  if (!at) {
    at.reset(new Peer);
    at->requested.assign(static_cast<size_t>(kNumConnClasses) * maxChannels_ * 2, 0);
    std::memset(&at->headsHandle, 0, sizeof at->headsHandle);
  }
  e.peer = p;
  e.p = at.get();
  return *at;
}

DevComm IpcTransport::tableView() const {
  DevComm view;
  std::memset(&view, 0, sizeof view);
  view.maxChannels = maxChannels_;
  view.table = table_.base();
  view.peerBytes = peerBytes();
  return view;
}

ncclResult_t IpcTransport::headWord(const ConnKey& key, bool export_, uint64_t** word, cudaIpcMemHandle_t* handle,
                                    uint64_t* offset, uint64_t* exported) {
  if (!table_.sparse()) {
    *word = devCtrl(tableView(), key.peer, indexOf(key)) + kCtrlCredit;
    if (export_ && !tableExported_) {
      CUDA_TRY(cudaIpcGetMemHandle(&tableHandle_, table_.base()), "cudaIpcGetMemHandle(connection table)");
      tableExported_ = true;
    }
    *handle = tableHandle_;
    *offset = reinterpret_cast<uint8_t*>(*word) - table_.base();
    *exported = table_.mappedBytes();
    return ncclSuccess;
  }
  Peer& st = peer(key.peer);
  if (st.heads == nullptr) {
    uint64_t* heads = nullptr;
    CUDA_TRY(cudaMalloc(&heads, headBytes()), "cudaMalloc(head words)");
    cudaError_t e = cudaMemsetAsync(heads, 0, headBytes(), setupStream_);
    if (e == cudaSuccess) e = cudaStreamSynchronize(setupStream_);
    if (e != cudaSuccess) {
      cudaFree(heads);
      return MCCL_ERR(ncclUnhandledCudaError, comm_, "clearing head words: %s", cudaGetErrorString(e));
    }
    st.heads = heads;
    headBytes_ += headBytes();
    comm_->mem.add(MemKind::Control, headBytes());
  }
  if (export_ && !st.headsExported) {
    CUDA_TRY(cudaIpcGetMemHandle(&st.headsHandle, st.heads), "cudaIpcGetMemHandle(head words)");
    st.headsExported = true;
  }
  *word = st.heads + static_cast<size_t>(key.cls) * maxChannels_ + key.channel;
  *handle = st.headsHandle;
  *offset = reinterpret_cast<uint8_t*>(*word) - reinterpret_cast<uint8_t*>(st.heads);
  *exported = headBytes();
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

ncclResult_t IpcTransport::need(const ConnKey& key) {
  if (key.peer < 0 || key.peer >= comm_->nranks || key.channel < 0 || key.channel >= maxChannels_)
    return MCCL_ERR(ncclInternalError, comm_, "GPU connection (peer %d, channel %d) out of range", key.peer, key.channel);
  uint8_t& requested = peer(key.peer).requested[static_cast<size_t>(indexOf(key))];
  if (requested) return ncclSuccess;  // the hot path: a cached lookup
  CudaDeviceGuard guard(comm_->cudaDev);
  CaptureModeRelaxed relaxed;
  MCCL_CHECK(table_.map(key.peer));
  auto c = std::make_unique<Conn>();
  const bool ll = key.cls == ConnClass::Ll || key.cls == ConnClass::LlP2p || key.cls == ConnClass::Ll128 ||
                  key.cls == ConnClass::Ll128P2p;
  c->mine.slots = ll ? kLlSlots : slots(key.cls);
  c->mine.slotBytes = ll ? kLlSlotBytes : slotBytes(key.cls);
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
    MCCL_CHECK(exchange_.post(key, &mine));
    requested = 1;  // once its record is on its way: a failed setup is tried again by the next need()
    return ncclSuccess;
  }
  c->mine.dev = comm_->cudaDev;
  c->mine.sameProcess = comm_->topo.sameProcess(key.peer) ? 1 : 0;
  std::memset(&c->mine.handle, 0, sizeof c->mine.handle);
  if (key.send) {
    // The receiver writes its consumed count into this connection's head word.
    uint64_t* head = nullptr;
    MCCL_CHECK(headWord(key, !c->mine.sameProcess, &head, &c->mine.handle, &c->mine.offset, &c->mine.exported));
    c->local = reinterpret_cast<uint8_t*>(head);
  } else {
    size_t bytes = ConnRegion::kDataOff + static_cast<size_t>(c->mine.slots) * c->mine.slotBytes;
    CUDA_TRY(cudaMalloc(&c->local, bytes), "cudaMalloc(FIFO)");
    c->ownedBytes = bytes;
    // Cleared before the record goes out: the peer writes here once it has it.
    CUDA_TRY(cudaMemsetAsync(c->local, 0, ll ? bytes : ConnRegion::kDataOff, setupStream_), "cudaMemsetAsync(FIFO)");
    // (tests: the tail the sender raises starts at the base, ipcSetStepBaseForTests)
    const uint64_t base = gStepBase.load();
    if (base != 0)
      CUDA_TRY(cudaMemcpyAsync(c->local + ConnRegion::kFlagOff, &base, sizeof base, cudaMemcpyHostToDevice, setupStream_),
               "cudaMemcpyAsync(FIFO tail)");
    CUDA_TRY(cudaStreamSynchronize(setupStream_), "cudaStreamSynchronize(FIFO clear)");
    c->mine.offset = 0;
    c->mine.exported = bytes;
    if (!c->mine.sameProcess) CUDA_TRY(cudaIpcGetMemHandle(&c->mine.handle, c->local), "cudaIpcGetMemHandle");
  }
  c->mine.ptr = reinterpret_cast<uint64_t>(c->local);
  Info mine = c->mine;
  adopt(key, std::move(c));
  MCCL_CHECK(exchange_.post(key, &mine));
  requested = 1;
  return ncclSuccess;
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
    // A sender maps its receiver's FIFO; a receiver its sender's table or block of heads.
    it = opened_.emplace(key, std::make_pair(static_cast<uint8_t*>(p), static_cast<size_t>(info.exported))).first;
    comm_->mem.add(MemKind::PeerMapped, info.exported);
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
  const DevComm view = tableView();  // the kernels' arithmetic over the table
  const int index = indexOf(key);
  uint64_t* ctrl = devCtrl(view, key.peer, index);
  if (c.mine.net) {
    // GpuNet filled buf, tail, head, sizes and the layout.
  } else if (key.send) {
    d.buf = peer + ConnRegion::kDataOff;
    d.tail = reinterpret_cast<uint64_t*>(peer + ConnRegion::kFlagOff);
    d.head = reinterpret_cast<uint64_t*>(c.local);  // my head word, which the receiver writes
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
  const uint64_t base = gStepBase.load();
  if (base != 0 && !c.mine.net) {
    // Tests (ipcSetStepBaseForTests): this end's step, and a sender's credit and head word,
    // start at the base. Before the connection is ready, so before any kernel of this rank
    // sends on it and thus before its receiver writes the head.
    const uint64_t words[kCtrlWords] = {base, base};
    static_assert(kCtrlStep == 0 && kCtrlCredit == 1, "the control words, in order");
    CUDA_TRY(cudaMemcpyAsync(ctrl, words, sizeof words, cudaMemcpyHostToDevice, setupStream_), "cudaMemcpyAsync(steps)");
    if (key.send)
      CUDA_TRY(cudaMemcpyAsync(d.head, &base, sizeof base, cudaMemcpyHostToDevice, setupStream_), "cudaMemcpyAsync(head)");
    gStepPresets.fetch_add(1);
  }
  CUDA_TRY(cudaMemcpyAsync(devConn(view, key.peer, index), &d, sizeof d, cudaMemcpyHostToDevice, setupStream_),
           "cudaMemcpyAsync(connection)");
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
