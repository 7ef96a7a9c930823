#include "ucx_transport/gpu_net.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "core/comm.h"
#include "core/cuda_guard.h"
#include "core/error.h"
#include "core/knobs.h"

namespace mccl {

struct GpuNet::Conn {
  uint8_t* host = nullptr;  // pinned, mapped region (NetLayout)
  uint8_t* dev = nullptr;   // the same, as the GPU addresses it
  UcxRegion region;
  UcxRemote remote;
};

GpuNet::GpuNet(ncclComm* comm, NetLayout layout) : comm_(comm), layout_(layout) {}

// What the kernels posted is moved before the connections go: a sender's kernel is done
// once its slices are in host staging, and the proxy puts them afterwards, so a
// communicator destroyed right after its last send (the stream synchronised, nothing
// else to wait for) dropped its last slices and left the receiver waiting until
// MCCL_TIMEOUT (2 x H100, NCCL_P2P_DISABLE=1: one run in three,
// bench/results/gpu-2xH200-2026-11-26e call 5). Bounded by MCCL_TIMEOUT (a dead peer's puts
// never complete); skipped after an abort, a failure of the communicator (a lost peer) or
// of the path. Not shown to fix that hang: 15 repetitions in one process passed with and
// without it (call 6); it closes the window the hang's pattern points at.
void GpuNet::drain() {
  if (!attached_ || comm_->aborted.load() || comm_->asyncError.load() != ncclSuccess ||
      client_->status(nullptr) != ncclSuccess)
    return;
  const int64_t t = knobInt(Knob::Timeout);
  const double seconds = t > 0 ? static_cast<double>(t) : 30.0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {  // the proxy thread moves the posts; this waits for them and their puts
    bool done = false;
    if (client_->drained(&done) != ncclSuccess || done) return;
    if (std::chrono::steady_clock::now() > deadline) {
      WARN("rank %d: network sends still unfinished after %.0f s at destroy", comm_->rank, seconds);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

GpuNet::~GpuNet() {
  drain();
  if (attached_) Proxy::detach(client_.get());  // the proxy no longer touches anything below
  for (auto& kv : conns_) {
    Conn& c = *kv.second;
    if (worker_) {
      worker_->release(&c.remote);
      worker_->unmapRegion(&c.region);
    }
    if (c.host) {
      cudaFreeHost(c.host);
      comm_->mem.sub(MemKind::HostMapped, layout_.bytes());
    }
  }
  conns_.clear();
  client_.reset();
  worker_.reset();
}

ncclResult_t GpuNet::prepare() {
  MCCL_CHECK(UcxContext::get(&ctx_));
  worker_.reset(new UcxWorker(comm_, ctx_));
  MCCL_CHECK(worker_->create());
  const std::vector<uint8_t>& a = worker_->address();
  if (a.size() > sizeof NetRecord::workerAddr)
    return MCCL_ERR(ncclSystemError, comm_, "UCX worker address of %zu bytes exceeds %zu", a.size(),
                    sizeof NetRecord::workerAddr);
  client_.reset(new ProxyClient(worker_.get()));
  return ncclSuccess;
}

ncclResult_t GpuNet::start(const ConnKey& key, NetRecord* mine) {
  if (!worker_)
    return MCCL_ERR(ncclSystemError, comm_, "rank %d has no UCX worker to reach rank %d over the network", comm_->rank,
                    key.peer);
  auto it = conns_.find(key);
  if (it != conns_.end()) return describe(*it->second, mine);  // asked again after a failed post
  auto c = std::make_unique<Conn>();
  const size_t bytes = layout_.bytes();
  cudaError_t e = cudaHostAlloc(&c->host, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess)
    return MCCL_ERR(ncclUnhandledCudaError, comm_, "cudaHostAlloc of %zu bytes (network staging): %s", bytes,
                    cudaGetErrorString(e));
  std::memset(c->host, 0, bytes);
  e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&c->dev), c->host, 0);
  if (e != cudaSuccess) {
    cudaFreeHost(c->host);
    return MCCL_ERR(ncclUnhandledCudaError, comm_, "cudaHostGetDevicePointer: %s", cudaGetErrorString(e));
  }
  {
    std::lock_guard<std::mutex> lock(client_->lock());
    ncclResult_t r = worker_->registerRegion(c->host, bytes, &c->region);
    if (r != ncclSuccess) {
      cudaFreeHost(c->host);
      return r;
    }
  }
  Conn& kept = *c;
  conns_[key] = std::move(c);  // freed by the destructor from here on
  comm_->mem.add(MemKind::HostMapped, bytes);
  return describe(kept, mine);
}

ncclResult_t GpuNet::describe(const Conn& c, NetRecord* mine) {
  if (c.region.rkey.size() > sizeof mine->rkey)
    return MCCL_ERR(ncclSystemError, comm_, "UCX rkey of %zu bytes is too large", c.region.rkey.size());
  mine->addr = reinterpret_cast<uint64_t>(c.host);
  mine->slots = layout_.slots;
  mine->slices = layout_.slices;
  mine->slotBytes = layout_.slotBytes;
  mine->rkeyLen = static_cast<uint32_t>(c.region.rkey.size());
  std::memcpy(mine->rkey, c.region.rkey.data(), c.region.rkey.size());
  const std::vector<uint8_t>& a = worker_->address();
  std::memcpy(mine->workerAddr, a.data(), a.size());  // size checked by prepare()
  mine->workerAddrLen = static_cast<uint32_t>(a.size());
  std::strncpy(mine->host, localHostName().c_str(), sizeof mine->host - 1);
  return ncclSuccess;
}

ncclResult_t GpuNet::finish(const ConnKey& key, const NetRecord& peer, DevConn* out) {
  auto it = conns_.find(key);
  if (it == conns_.end()) return MCCL_ERR(ncclInternalError, comm_, "network connection to rank %d unknown", key.peer);
  Conn& c = *it->second;
  if (peer.workerAddrLen == 0 || peer.workerAddrLen > sizeof peer.workerAddr)
    return MCCL_ERR(ncclInternalError, comm_, "rank %d sent a network connection record without a valid UCX address",
                    key.peer);
  // Both regions must have one layout: the sender's proxy puts at its own offsets.
  if (peer.slots != layout_.slots || peer.slices != layout_.slices || peer.slotBytes != layout_.slotBytes ||
      peer.rkeyLen > sizeof peer.rkey)
    return MCCL_ERR(ncclInvalidUsage, comm_,
                    "rank %d and rank %d disagree on the network FIFO (slots %u/%u, slices %u/%u, bytes %llu/%llu): "
                    "set NCCL_BUFFSIZE, MCCL_FIFO_SLOTS and MCCL_GPU_SLICES alike on every rank",
                    comm_->rank, key.peer, layout_.slots, peer.slots, layout_.slices, peer.slices,
                    static_cast<unsigned long long>(layout_.slotBytes), static_cast<unsigned long long>(peer.slotBytes));
  {
    char host[sizeof peer.host + 1] = {0};
    std::memcpy(host, peer.host, sizeof peer.host);
    comm_->hosts.set(key.peer, host);
  }
  {
    std::lock_guard<std::mutex> lock(client_->lock());
    ucp_ep_h ep = nullptr;
    MCCL_CHECK(worker_->endpoint(key.peer, peer.workerAddr, peer.workerAddrLen, &ep));
    MCCL_CHECK(worker_->unpack(key.peer, ep, peer.rkey, peer.rkeyLen, peer.addr, false, &c.remote));
    client_->add(std::make_unique<NetConn>(key.send, key.peer, layout_, c.host, worker_.get(), ep, c.remote));
  }
  if (!attached_) {
    Proxy::attach(client_.get(), busIdString(comm_->topo.me().busId));
    attached_ = true;
    INFO(kLogNet, "rank %d: GPU network path over UCX %s, staging in pinned host memory (%s)", comm_->rank,
         ucp_get_version_string(),
         ctx_->cudaMemorySupported() ? "UCX has CUDA memory support, staging kept: one proxy path"
                                     : "UCX has no CUDA memory support");
  }
  std::memset(out, 0, sizeof *out);
  out->peer = static_cast<uint32_t>(key.peer);
  out->buf = c.dev + layout_.dataOff();
  out->tail = reinterpret_cast<uint64_t*>(c.dev + NetLayout::kTailOff);
  out->head = reinterpret_cast<uint64_t*>(c.dev + NetLayout::kHeadOff);
  out->sizes = key.send ? reinterpret_cast<uint64_t*>(c.dev + NetLayout::kSizesOff) : nullptr;
  out->slots = layout_.slots;
  out->slotBytes = layout_.slotBytes;
  INFO(kLogNet, "rank %d %s rank %d channel %d class %d over UCX (proxy, host staging)", comm_->rank,
       key.send ? "->" : "<-", key.peer, key.channel, static_cast<int>(key.cls));
  return ncclSuccess;
}

ncclResult_t GpuNet::status() {
  if (!client_) return ncclSuccess;
  std::string why;
  ncclResult_t r = client_->status(&why);
  if (r == ncclSuccess) return ncclSuccess;
  return MCCL_ERR(r, comm_, "rank %d: the network proxy failed: %s", comm_->rank, why.c_str());
}

}  // namespace mccl
