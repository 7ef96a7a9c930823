// The GPU network path's proxy with host memory: two UCX workers of this process are the
// two ranks, host threads play the kernels (post slices with their sizes, wait for
// heads; wait for tails, check the bytes, release), the proxy thread moves everything.
// Every byte must arrive, in order, with the FIFO never overrun.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <mutex>
#include <thread>
#include <vector>

#include "ucx_transport/proxy.h"
#include "ucx_transport/ucx.h"

using namespace mccl;

namespace {

uint64_t loadAcquire(const uint8_t* p) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(p), __ATOMIC_ACQUIRE);
}
void storeRelease(uint8_t* p, uint64_t v) { __atomic_store_n(reinterpret_cast<uint64_t*>(p), v, __ATOMIC_RELEASE); }

uint8_t pattern(uint64_t slice, uint64_t i) { return static_cast<uint8_t>(slice * 131 + i * 7 + 1); }

bool waitAtLeast(const uint8_t* p, uint64_t want) {
  for (long spins = 0; loadAcquire(p) < want; ++spins) {
    if (spins > 2000000000L) return false;
    if ((spins & 255) == 255) std::this_thread::yield();
  }
  return true;
}

struct Side {
  std::unique_ptr<UcxWorker> worker;
  std::unique_ptr<ProxyClient> client;
  uint8_t* region = nullptr;
  UcxRegion reg;
  UcxRemote remote;
};

void runTransfer(NetLayout layout, uint64_t nslices, unsigned seed) {
  std::shared_ptr<UcxContext> ctx;
  ASSERT_EQ(UcxContext::get(&ctx), ncclSuccess);
  Side s, r;  // sender (rank 0), receiver (rank 1)
  for (Side* x : {&s, &r}) {
    x->worker.reset(new UcxWorker(nullptr, ctx));
    ASSERT_EQ(x->worker->create(), ncclSuccess);
    ASSERT_EQ(posix_memalign(reinterpret_cast<void**>(&x->region), 4096, layout.bytes()), 0);
    std::memset(x->region, 0, layout.bytes());
    ASSERT_EQ(x->worker->registerRegion(x->region, layout.bytes(), &x->reg), ncclSuccess);
    x->client.reset(new ProxyClient(x->worker.get()));
  }
  ucp_ep_h toR = nullptr, toS = nullptr;
  ASSERT_EQ(s.worker->endpoint(1, r.worker->address().data(), r.worker->address().size(), &toR), ncclSuccess);
  ASSERT_EQ(r.worker->endpoint(0, s.worker->address().data(), s.worker->address().size(), &toS), ncclSuccess);
  ASSERT_EQ(s.worker->unpack(1, toR, r.reg.rkey.data(), r.reg.rkey.size(), reinterpret_cast<uint64_t>(r.region),
                             false, &s.remote),
            ncclSuccess);
  ASSERT_EQ(r.worker->unpack(0, toS, s.reg.rkey.data(), s.reg.rkey.size(), reinterpret_cast<uint64_t>(s.region),
                             false, &r.remote),
            ncclSuccess);
  s.client->add(std::make_unique<NetConn>(true, 1, layout, s.region, s.worker.get(), toR, s.remote));
  r.client->add(std::make_unique<NetConn>(false, 0, layout, r.region, r.worker.get(), toS, r.remote));
  Proxy::attach(s.client.get(), "");
  Proxy::attach(r.client.get(), "");

  // Slice sizes: random, zero included, never past the slot.
  std::mt19937_64 rng(seed);
  const uint64_t S = layout.slices;
  const uint64_t per = layout.slotBytes / S;
  std::vector<std::pair<uint64_t, uint64_t>> sl(nslices);  // offset, bytes
  for (uint64_t m = 0; m < nslices; ++m) {
    uint64_t bytes = rng() % 5 == 0 ? 0 : 1 + rng() % per;
    sl[m] = {(m % S) * per, bytes};
  }
  std::atomic<bool> bad{false};
  // Host threads stand in for the kernels here, and the proxy's writes into their regions
  // are UCX's plain copies, ordered by ucp_worker_fence: invisible to ThreadSanitizer. A
  // thread that saw a counter move passes through the clients' locks, which the proxy
  // holds for the whole pass that made the writes: a happens-before TSan can see.
  auto afterProxy = [&] {
    { std::lock_guard<std::mutex> g(s.client->lock()); }
    { std::lock_guard<std::mutex> g(r.client->lock()); }
  };
  std::thread producer([&] {
    uint64_t* sizes = reinterpret_cast<uint64_t*>(s.region + NetLayout::kSizesOff);
    for (uint64_t m = 0; m < nslices && !bad; ++m) {
      const uint64_t slot = m / S;
      // Reuse a slot only once the receiver consumed every slice of its last use.
      if (m % S == 0 && slot >= layout.slots) {
        if (!waitAtLeast(s.region + NetLayout::kHeadOff, (slot - layout.slots + 1) * S)) {
          bad = true;
          break;
        }
        afterProxy();
      }
      uint8_t* dst = s.region + layout.dataOff() + (slot % layout.slots) * layout.slotBytes + sl[m].first;
      for (uint64_t i = 0; i < sl[m].second; ++i) dst[i] = pattern(m, i);
      // Atomic, as the proxy reads it; the kernel's plain store plus fence is the same on a GPU.
      __atomic_store_n(&sizes[m % layout.sizeEntries()], NetLayout::packSize(sl[m].first, sl[m].second),
                       __ATOMIC_RELAXED);
      storeRelease(s.region + NetLayout::kTailOff, m + 1);
    }
  });
  uint64_t wrong = 0;
  for (uint64_t m = 0; m < nslices && !bad; ++m) {
    if (!waitAtLeast(r.region + NetLayout::kTailOff, m + 1)) {
      bad = true;
      break;
    }
    afterProxy();
    const uint8_t* src = r.region + layout.dataOff() + ((m / S) % layout.slots) * layout.slotBytes + sl[m].first;
    for (uint64_t i = 0; i < sl[m].second; ++i) wrong += src[i] != pattern(m, i);
    storeRelease(r.region + NetLayout::kHeadOff, m + 1);
  }
  producer.join();
  EXPECT_FALSE(bad.load()) << "a wait did not end";
  EXPECT_EQ(wrong, 0u);
  std::string why;
  EXPECT_EQ(s.client->status(&why), ncclSuccess) << why;
  EXPECT_EQ(r.client->status(&why), ncclSuccess) << why;
  Proxy::detach(s.client.get());
  Proxy::detach(r.client.get());
  for (Side* x : {&s, &r}) {
    x->worker->release(&x->remote);
    x->worker->unmapRegion(&x->reg);
  }
  s.worker.reset();
  r.worker.reset();
  free(s.region);
  free(r.region);
}

}  // namespace

TEST(NetLayout, RegionsAreAlignedAndSized) {
  NetLayout l;
  l.slots = 8;
  l.slices = 4;
  l.slotBytes = 65536;
  EXPECT_EQ(l.dataOff() % 256, 0u);
  EXPECT_GE(l.dataOff(), NetLayout::kSizesOff + 8 * 32);
  EXPECT_EQ(l.bytes(), l.dataOff() + 8 * 65536);
  EXPECT_EQ(NetLayout::packSize(4096, 100) >> 32, 4096u);
  EXPECT_EQ(NetLayout::packSize(4096, 100) & 0xffffffffu, 100u);
}

TEST(Proxy, MovesEverySliceInOrderWithFlowControl) {
  NetLayout l;
  l.slots = 4;
  l.slices = 1;
  l.slotBytes = 16384;
  runTransfer(l, 3000, 1);
}

TEST(Proxy, SlicedSlotsAndEmptySlices) {
  NetLayout l;
  l.slots = 3;
  l.slices = 4;
  l.slotBytes = 8192;
  runTransfer(l, 4000, 2);
}
