#include "host_engine/transport.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "core/comm.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/phase_log.h"

namespace mccl {
namespace {

enum TransportIndex { kLoopback = 0, kUcx = 1 };

struct TransportEntry {
  const char* name;
  bool (*canConnect)(bool sameProcess, bool haveUcx);
};

const TransportEntry kTransports[] = {
    {"loopback", [](bool sameProcess, bool) { return sameProcess; }},
    {"ucx", [](bool, bool haveUcx) { return haveUcx; }},
};

// Loopback regions are shared by the two threads of a connection: each holds a
// reference, so either may be torn down first.
struct LoopbackRegions {
  std::mutex mu;
  std::unordered_map<uint64_t, std::shared_ptr<uint8_t>> byToken;
  uint64_t next = 1;
};
LoopbackRegions& loopback() {
  static LoopbackRegions* r = new LoopbackRegions();
  return *r;
}

std::shared_ptr<uint8_t> allocShared(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, bytes) != 0) return nullptr;
  std::memset(p, 0, bytes);
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [](uint8_t* q) { free(q); });
}

}  // namespace

int chooseTransport(bool sameProcess, bool haveUcx) {
  std::string forced = knobStr(Knob::Transport);
  for (int i = 0; i < static_cast<int>(sizeof kTransports / sizeof kTransports[0]); ++i) {
    if (forced == "ucx" && i == kLoopback) continue;  // threads talk over UCX too (tests)
    if (kTransports[i].canConnect(sameProcess, haveUcx)) return i;
  }
  return -1;
}

const char* transportName(int index) {
  return index >= 0 && index < static_cast<int>(sizeof kTransports / sizeof kTransports[0])
             ? kTransports[index].name
             : "none";
}

struct HostTransport::Conn {
  bool ready = false;
  int transport = -1;
  ConnInfo mine;
  UcxRegion region;                       // ucx: my FIFO (receiver) or head (sender)
  std::shared_ptr<uint8_t> local;         // loopback: my region
  uint64_t token = 0;                     // loopback: my region's token until taken
  std::shared_ptr<uint8_t> peerRegion;    // loopback: the peer's region, kept alive
  UcxRemote remote;                       // ucx: the peer's region
  std::unique_ptr<FifoSend> send;
  std::unique_ptr<FifoRecv> recv;
};

HostTransport::HostTransport(ncclComm* comm) : comm_(comm), exchange_(comm, sizeof(ConnInfo)) {
  int64_t slots = knobInt(Knob::FifoSlots);
  if (slots <= 0) slots = 8;
  if (slots < 2) slots = 2;
  if (slots > 64) slots = 64;
  int64_t buff = knobInt(Knob::BuffSize);
  if (buff < slots * 4096) buff = slots * 4096;
  layout_.slots = static_cast<uint32_t>(slots);
  layout_.slotBytes = static_cast<uint64_t>(buff / slots) & ~63ull;
  allowDirect_ = knobBool(Knob::UcxDirect) && !knobBool(Knob::ShmDisable);
}

HostTransport::~HostTransport() {
  for (auto& kv : conns_) {
    Conn& c = *kv.second;
    c.send.reset();
    c.recv.reset();
    if (ucx_) {
      ucx_->release(&c.remote);
      ucx_->unmapRegion(&c.region);
    }
    if (c.token) {
      std::lock_guard<std::mutex> lock(loopback().mu);
      loopback().byToken.erase(c.token);
    }
  }
  conns_.clear();
  ucx_.reset();
}

ncclResult_t HostTransport::prepare(PeerInfo* mine, bool peersMayBeRemote) {
  if (!peersMayBeRemote && knobStr(Knob::Transport) != "ucx") return ncclSuccess;
  phaseMark("datapath-prepare");
  MCCL_CHECK(UcxContext::get(&ucxCtx_));
  phaseMark("ucx-context");
  ucx_.reset(new UcxWorker(comm_, ucxCtx_));
  MCCL_CHECK(ucx_->create(/*shared=*/true));
  phaseMark("ucx-worker");
  (void)mine;
  const std::vector<uint8_t>& a = ucx_->address();
  if (a.size() > sizeof ConnInfo::workerAddr)
    return MCCL_ERR(ncclSystemError, comm_, "UCX worker address of %zu bytes exceeds %zu", a.size(),
                    sizeof ConnInfo::workerAddr);
  return ncclSuccess;
}

ncclResult_t HostTransport::need(const ConnKey& key) {
  auto it = conns_.find(key);
  if (it != conns_.end()) return ncclSuccess;
  auto c = std::make_unique<Conn>();
  MCCL_CHECK(start(key, *c));
  ConnInfo mine = c->mine;
  conns_.emplace(key, std::move(c));
  return exchange_.post(key, &mine);
}

ncclResult_t HostTransport::start(const ConnKey& key, Conn& c) {
  c.transport = chooseTransport(comm_->topo.sameProcess(key.peer), ucx_ != nullptr);
  if (c.transport < 0)
    return MCCL_ERR(ncclSystemError, comm_, "no transport reaches rank %d (host %s) from rank %d", key.peer,
                    comm_->hosts.name(key.peer).c_str(), comm_->rank);
  c.mine.transport = static_cast<uint32_t>(c.transport);
  c.mine.slots = layout_.slots;
  c.mine.slotBytes = layout_.slotBytes;
  size_t bytes = key.send ? FifoLayout::kHeadBytes : layout_.bytes();
  if (c.transport == kLoopback) {
    c.local = allocShared(bytes);
    if (!c.local) return MCCL_ERR(ncclSystemError, comm_, "cannot allocate %zu bytes", bytes);
    std::lock_guard<std::mutex> lock(loopback().mu);
    c.token = loopback().next++;
    loopback().byToken[c.token] = c.local;
    c.mine.token = c.token;
    c.mine.addr = reinterpret_cast<uint64_t>(c.local.get());
  } else {
    // Only the control words (tail, sizes; a sender's head) must start at zero: the data
    // slots are written before the tail that announces them.
    const size_t zero = key.send ? FifoLayout::kHeadBytes : layout_.dataOff();
    const size_t mapped = bytes < 4096 ? 4096 : bytes;
    ncclResult_t r = ucx_->mapRegion(mapped, allowDirect_, &c.region, zero);
    if (r != ncclSuccess && allowDirect_) r = ucx_->mapRegion(mapped, false, &c.region, zero);
    MCCL_CHECK(r);
    if (c.region.rkey.size() > sizeof c.mine.rkey)
      return MCCL_ERR(ncclSystemError, comm_, "UCX rkey of %zu bytes is too large", c.region.rkey.size());
    std::memcpy(c.mine.rkey, c.region.rkey.data(), c.region.rkey.size());
    c.mine.rkeyLen = static_cast<uint32_t>(c.region.rkey.size());
    c.mine.addr = reinterpret_cast<uint64_t>(c.region.ptr);
    c.mine.shmid = c.region.shmid;
    c.mine.sysvKey = c.region.shmid >= 0 ? sysvNamespaceKey() : 0;
    const std::vector<uint8_t>& a = ucx_->address();
    std::memcpy(c.mine.workerAddr, a.data(), a.size());  // size checked by prepare()
    c.mine.workerAddrLen = static_cast<uint32_t>(a.size());
    std::strncpy(c.mine.host, localHostName().c_str(), sizeof c.mine.host - 1);
  }
  return ncclSuccess;
}

ncclResult_t HostTransport::finish(const ConnKey& key, Conn& c, const ConnInfo& info) {
  if (info.magic != ConnInfo::kMagic || info.transport != static_cast<uint32_t>(c.transport) ||
      info.rkeyLen > sizeof info.rkey || info.slots < 2 || info.slotBytes == 0 ||
      info.workerAddrLen > sizeof info.workerAddr || (c.transport == kUcx && info.workerAddrLen == 0))
    return MCCL_ERR(ncclInternalError, comm_, "rank %d sent an invalid connection record", key.peer);
  FifoLayout layout = layout_;
  if (key.send) {  // the receiver's FIFO decides the layout
    layout.slots = info.slots;
    layout.slotBytes = info.slotBytes;
  }
  PeerMemory pm;
  pm.rank = key.peer;
  uint8_t* localRegion;
  if (c.transport == kLoopback) {
    std::lock_guard<std::mutex> lock(loopback().mu);
    auto it = loopback().byToken.find(info.token);
    if (it == loopback().byToken.end())
      return MCCL_ERR(ncclInternalError, comm_, "loopback region of rank %d vanished", key.peer);
    c.peerRegion = it->second;
    loopback().byToken.erase(it);
    pm.direct = c.peerRegion.get();
    localRegion = c.local.get();
  } else {
    char host[sizeof info.host + 1] = {0};
    std::memcpy(host, info.host, sizeof info.host);
    comm_->hosts.set(key.peer, host);
    // The peer's segment held through the unpack (ucx.h, sysvHold): UCX 1.13 crashes when
    // it finds the segment gone; a segment already gone is a peer whose process ended.
    void* held = nullptr;
    if (info.shmid >= 0 && info.sysvKey != 0 && info.sysvKey == sysvNamespaceKey()) {
      bool gone = false;
      held = sysvHold(info.shmid, &gone);
      if (gone && key.send)
        return MCCL_ERR(ncclRemoteError, comm_,
                        "rank %d: the FIFO segment of rank %d is gone (its process ended while connecting)",
                        comm_->rank, key.peer);
      if (gone) {
        // A receiver's FIFO is its own memory: what the sender wrote before it ended (a
        // message that fit the free slots, then destroy and exit before this rank read the
        // sender's record) is there to read. Only the credits would go to the sender's
        // segment; the receive goes on without them (PeerMemory unusable: FifoRecv skips
        // them). Data that never came is the watchdog's and the timeout's, as for any peer.
        c.recv.reset(new FifoRecv(layout, static_cast<uint8_t*>(c.region.ptr), pm));
        c.ready = true;
        INFO(kLogNet, "rank %d <- rank %d channel %d class %d: the sender has ended; its FIFO data is read "
             "without credits", comm_->rank, key.peer, key.channel, static_cast<int>(key.cls));
        return ncclSuccess;
      }
    }
    // Direct mapping (ucp_rkey_ptr) only on one host: a peer of another host identity is
    // reached with puts even when UCX could map it (MCCL_HOST_ID fake nodes).
    const bool direct = allowDirect_ && comm_->topo.onMyNode(key.peer);
    ncclResult_t ur = ucx_->endpoint(key.peer, info.workerAddr, info.workerAddrLen, &pm.ep);
    if (ur == ncclSuccess) ur = ucx_->unpack(key.peer, pm.ep, info.rkey, info.rkeyLen, info.addr, direct, &c.remote);
    sysvRelease(held);
    MCCL_CHECK(ur);
    pm.worker = ucx_.get();
    pm.remote = c.remote;
    pm.direct = static_cast<uint8_t*>(c.remote.direct);
    localRegion = static_cast<uint8_t*>(c.region.ptr);
  }
  if (key.send) c.send.reset(new FifoSend(layout, localRegion, pm));
  else c.recv.reset(new FifoRecv(layout, localRegion, pm));
  c.ready = true;
  INFO(kLogNet, "rank %d %s rank %d channel %d class %d over %s%s", comm_->rank,
       key.send ? "->" : "<-", key.peer, key.channel, static_cast<int>(key.cls), transportName(c.transport),
       c.transport == kUcx ? (pm.direct ? " (direct)" : " (put)") : "");
  return ncclSuccess;
}

ncclResult_t HostTransport::progress() {
  if (ucx_) MCCL_CHECK(ucx_->progress());
  if (exchange_.idle()) return ncclSuccess;
  return exchange_.poll([this](const ConnKey& key, const void* rec) {
    ConnInfo info;
    std::memcpy(&info, rec, sizeof info);
    return finish(key, *conns_[key], info);
  });
}

FifoSend* HostTransport::sendConn(const ConnKey& key) {
  auto it = conns_.find(key);
  return it != conns_.end() && it->second->ready ? it->second->send.get() : nullptr;
}

FifoRecv* HostTransport::recvConn(const ConnKey& key) {
  auto it = conns_.find(key);
  return it != conns_.end() && it->second->ready ? it->second->recv.get() : nullptr;
}

ncclResult_t HostTransport::quiescent(bool* done) {
  *done = true;
  if (ucx_) MCCL_CHECK(ucx_->quiescent(done));
  return ncclSuccess;
}

void HostTransport::abort() {}

std::string HostTransport::describe(const ConnKey& key) const {
  auto it = conns_.find(key);
  if (it == conns_.end()) return "not connected";
  const Conn& c = *it->second;
  if (!c.ready) return std::string(transportName(c.transport)) + " (connecting)";
  if (c.transport == kUcx) return (c.remote.direct ? "ucx (direct)" : "ucx (put)");
  return transportName(c.transport);
}

}  // namespace mccl
