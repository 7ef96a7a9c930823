#include "ucx_transport/proxy.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/debug.h"
#include "core/error.h"
#include "core/topo.h"

namespace mccl {
namespace {

uint64_t loadCounter(const uint8_t* p) {
  // Written by the GPU (or a peer's proxy through UCX) into host memory; the acquire
  // orders the reads of the data it publishes after it.
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(p), __ATOMIC_ACQUIRE);
}

}  // namespace

NetConn::NetConn(bool send, int peer, NetLayout layout, uint8_t* local, UcxWorker* worker, ucp_ep_h ep,
                 UcxRemote remote)
    : send_(send), peer_(peer), layout_(layout), local_(local), worker_(worker), ep_(ep), remote_(remote) {
  // A counter value stays untouched until its put completed: at most `slots * slices`
  // values of a connection are ever in flight (flow control), four times that is ample.
  words_.assign(std::max<uint64_t>(256, 4 * layout_.sizeEntries()), 0);
}

ncclResult_t NetConn::step(bool* moved) {
  if (send_) {
    const uint64_t tail = loadCounter(local_ + NetLayout::kTailOff);
    if (tail <= done_) return ncclSuccess;
    const uint64_t* sizes = reinterpret_cast<const uint64_t*>(local_ + NetLayout::kSizesOff);
    for (uint64_t m = done_; m < tail; ++m) {
      // Written by the kernel (another agent) while this runs: an atomic load, relaxed;
      // the tail's acquire load above orders it after the kernel's stores.
      const uint64_t packed = __atomic_load_n(&sizes[m % layout_.sizeEntries()], __ATOMIC_RELAXED);
      const uint64_t off = packed >> 32, bytes = packed & 0xffffffffull;
      if (bytes == 0) continue;  // an empty slice still counts: both sides stay in step
      if (off + bytes > layout_.slotBytes)
        return MCCL_ERR(ncclInternalError, nullptr, "network send to rank %d: slice %llu is %llu bytes at %llu",
                        peer_, static_cast<unsigned long long>(m), static_cast<unsigned long long>(bytes),
                        static_cast<unsigned long long>(off));
      const uint64_t at = layout_.dataOff() + ((m / layout_.slices) % layout_.slots) * layout_.slotBytes + off;
      MCCL_CHECK(worker_->put(peer_, ep_, local_ + at, bytes, remote_, at));
    }
    // The data lands before the tail that announces it.
    worker_->fence();
    uint64_t& w = words_[tail % words_.size()];
    w = tail;
    MCCL_CHECK(worker_->put(peer_, ep_, &w, sizeof w, remote_, NetLayout::kTailOff));
    done_ = tail;
    *moved = true;
    return ncclSuccess;
  }
  const uint64_t head = loadCounter(local_ + NetLayout::kHeadOff);
  if (head <= done_) return ncclSuccess;
  uint64_t& w = words_[head % words_.size()];
  w = head;
  MCCL_CHECK(worker_->put(peer_, ep_, &w, sizeof w, remote_, NetLayout::kHeadOff));
  done_ = head;
  *moved = true;
  return ncclSuccess;
}

bool NetConn::pending() const {
  return loadCounter(local_ + (send_ ? NetLayout::kTailOff : NetLayout::kHeadOff)) > done_;
}

void ProxyClient::add(std::unique_ptr<NetConn> conn) { conns_.push_back(std::move(conn)); }

ncclResult_t ProxyClient::drained(bool* done) {
  std::lock_guard<std::mutex> lock(mu_);
  *done = false;
  bool sends = false;
  for (auto& c : conns_) {
    if (!c->send()) continue;  // credits owed to a peer done with this rank matter to nobody
    sends = true;
    if (c->pending()) return status_.load();
  }
  bool quiet = !sends;
  if (sends && worker_) MCCL_CHECK(worker_->quiescent(&quiet));
  *done = quiet;
  return status_.load();
}

ncclResult_t ProxyClient::pass(bool* moved) {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_.load() != ncclSuccess) return status_.load();
  ncclResult_t r = ncclSuccess;
  for (auto& c : conns_) {
    r = c->step(moved);
    if (r != ncclSuccess) break;
  }
  bool quiet = false;
  if (r == ncclSuccess && worker_) r = worker_->quiescent(&quiet, moved);  // progress, reap requests
  if (r != ncclSuccess) fail(r, threadLastError());
  return r;
}

ncclResult_t ProxyClient::status(std::string* why) const {
  ncclResult_t r = status_.load();
  if (r != ncclSuccess && why) {
    std::lock_guard<std::mutex> lock(errMu_);
    *why = why_;
  }
  return r;
}

void ProxyClient::fail(ncclResult_t r, const std::string& why) {
  std::lock_guard<std::mutex> lock(errMu_);
  if (status_.load() != ncclSuccess) return;
  why_ = why;
  status_.store(r);
}

namespace {
std::mutex gProxyMu;
Proxy* gProxy = nullptr;
}  // namespace

void Proxy::attach(ProxyClient* client, const std::string& busId) {
  std::lock_guard<std::mutex> lock(gProxyMu);
  if (!gProxy) {
    gProxy = new Proxy();
    gProxy->thread_ = std::thread([busId] {
      if (!busId.empty()) bindThreadNear(busId.c_str());
      gProxy->run();
    });
    INFO(kLogProxy, "proxy thread started%s%s", busId.empty() ? "" : " near GPU ", busId.c_str());
  }
  std::lock_guard<std::mutex> l2(gProxy->mu_);
  gProxy->clients_.push_back(client);
}

void Proxy::detach(ProxyClient* client) {
  Proxy* stopMe = nullptr;
  {
    std::lock_guard<std::mutex> lock(gProxyMu);
    if (!gProxy) return;
    std::unique_lock<std::mutex> l2(gProxy->mu_);
    auto& v = gProxy->clients_;
    v.erase(std::remove(v.begin(), v.end(), client), v.end());
    gProxy->idle_.wait(l2, [] { return gProxy->busy_ == 0; });
    if (v.empty()) {
      stopMe = gProxy;
      gProxy = nullptr;
    }
  }
  if (stopMe) {
    stopMe->stop_.store(true);
    stopMe->thread_.join();
    delete stopMe;
    INFO(kLogProxy, "proxy thread stopped");
  }
}

void Proxy::run() {
  uint64_t idle = 0;
  std::vector<ProxyClient*> mine;
  while (!stop_.load(std::memory_order_relaxed)) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      mine = clients_;
      ++busy_;
    }
    bool moved = false;
    for (ProxyClient* c : mine) c->pass(&moved);  // a failure stays in the client
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--busy_ == 0) idle_.notify_all();
    }
    if (moved) {
      idle = 0;
    } else if (++idle > 20000) {
      // Long idle (between collectives): give the core back, at some latency.
      std::this_thread::sleep_for(std::chrono::microseconds(idle > 200000 ? 200 : 20));
    } else if ((idle & 63) == 0) {
      sched_yield();
    }
  }
}

}  // namespace mccl
