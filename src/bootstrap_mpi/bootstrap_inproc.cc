#include "bootstrap_mpi/bootstrap_inproc.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/error.h"

namespace mccl {

struct InProcGroup {
  explicit InProcGroup(int n) : size(n) {}
  const int size;
  std::mutex mu;
  std::condition_variable cv;
  // Allgather rounds: each round r collects one slot per rank; done when all arrived.
  struct Round {
    std::vector<std::vector<char>> slots;
    int arrived = 0;
    int left = 0;
  };
  std::map<uint64_t, Round> rounds;
  // Mailboxes keyed by (src, dst, tag).
  std::map<std::tuple<int, int, uint64_t>, std::deque<std::vector<char>>> mail;
  int joined = 0;
};

namespace {
struct GroupRegistry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<InProcGroup>> groups;
  uint64_t next = 1;
};
GroupRegistry& groups() {
  static GroupRegistry* g = new GroupRegistry();
  return *g;
}

using Clock = std::chrono::steady_clock;

template <typename Pred>
ncclResult_t waitFor(InProcGroup& g, std::unique_lock<std::mutex>& lock, const Bootstrap& b,
                     const char* what, Pred ready) {
  auto deadline = Clock::now() + std::chrono::duration<double>(bootstrapTimeoutSeconds());
  while (!ready()) {
    if (b.aborted())
      return MCCL_ERR(ncclRemoteError, b.owner(), "bootstrap %s: aborted", what);
    if (Clock::now() > deadline)
      return MCCL_ERR(ncclRemoteError, b.owner(),
                      "bootstrap %s: rank %d waited %.0f s for its peers (MCCL_BOOTSTRAP_TIMEOUT)",
                      what, b.rank(), bootstrapTimeoutSeconds());
    g.cv.wait_for(lock, std::chrono::milliseconds(50));
  }
  return ncclSuccess;
}
}  // namespace

std::string InProcBootstrap::newGroupKey() {
  std::lock_guard<std::mutex> lock(groups().mu);
  return "inproc:" + std::to_string(groups().next++);
}

ncclResult_t InProcBootstrap::join(const std::string& key, int rank, int size,
                                   std::unique_ptr<Bootstrap>* out) {
  std::shared_ptr<InProcGroup> g;
  {
    std::lock_guard<std::mutex> lock(groups().mu);
    auto& slot = groups().groups[key];
    if (!slot) slot = std::make_shared<InProcGroup>(size);
    g = slot;
    if (g->size != size)
      return MCCL_ERR(ncclInvalidUsage, nullptr,
                      "in-process group %s has %d ranks but rank %d joined with %d", key.c_str(),
                      g->size, rank, size);
    if (++g->joined == size) groups().groups.erase(key);
  }
  out->reset(new InProcBootstrap(std::move(g), rank, size));
  return ncclSuccess;
}

InProcBootstrap::InProcBootstrap(std::shared_ptr<InProcGroup> g, int rank, int size)
    : Bootstrap(rank, size), group_(std::move(g)) {}

InProcBootstrap::~InProcBootstrap() = default;

void InProcBootstrap::abort() {
  Bootstrap::abort();
  std::lock_guard<std::mutex> lock(group_->mu);
  group_->cv.notify_all();
}

ncclResult_t InProcBootstrap::allGather(void* data, size_t bytes) {
  InProcGroup& g = *group_;
  uint64_t round = gatherRound_++;
  std::unique_lock<std::mutex> lock(g.mu);
  InProcGroup::Round& r = g.rounds[round];
  if (r.slots.empty()) {
    r.slots.resize(static_cast<size_t>(size_));
    r.left = size_;
  }
  const char* mine = static_cast<const char*>(data) + static_cast<size_t>(rank_) * bytes;
  r.slots[rank_].assign(mine, mine + bytes);
  if (++r.arrived == size_) g.cv.notify_all();
  ncclResult_t res = waitFor(g, lock, *this, "allgather", [&] { return r.arrived == size_; });
  if (res != ncclSuccess) return res;
  for (int i = 0; i < size_; ++i) {
    if (r.slots[i].size() != bytes)
      return MCCL_ERR(ncclInvalidUsage, owner_,
                      "bootstrap allgather: rank %d gave %zu bytes, rank %d gave %zu", i,
                      r.slots[i].size(), rank_, bytes);
    std::memcpy(static_cast<char*>(data) + static_cast<size_t>(i) * bytes, r.slots[i].data(), bytes);
  }
  if (--r.left == 0) g.rounds.erase(round);
  return ncclSuccess;
}

ncclResult_t InProcBootstrap::send(int peer, uint64_t tag, const void* data, size_t bytes) {
  if (peer < 0 || peer >= size_)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap send to rank %d of %d", peer, size_);
  InProcGroup& g = *group_;
  const char* p = static_cast<const char*>(data);
  std::lock_guard<std::mutex> lock(g.mu);
  g.mail[std::make_tuple(rank_, peer, tag)].emplace_back(p, p + bytes);
  g.cv.notify_all();
  return ncclSuccess;
}

ncclResult_t InProcBootstrap::recv(int peer, uint64_t tag, void* data, size_t bytes) {
  if (peer < 0 || peer >= size_)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap recv from rank %d of %d", peer, size_);
  InProcGroup& g = *group_;
  auto key = std::make_tuple(peer, rank_, tag);
  std::unique_lock<std::mutex> lock(g.mu);
  MCCL_CHECK(waitFor(g, lock, *this, "recv", [&] {
    auto it = g.mail.find(key);
    return it != g.mail.end() && !it->second.empty();
  }));
  auto it = g.mail.find(key);
  std::vector<char> msg = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) g.mail.erase(it);
  if (msg.size() != bytes)
    return MCCL_ERR(ncclInternalError, owner_,
                    "bootstrap recv from rank %d: expected %zu bytes, got %zu", peer, bytes,
                    msg.size());
  std::memcpy(data, msg.data(), bytes);
  return ncclSuccess;
}

ncclResult_t InProcBootstrap::tryRecv(int peer, uint64_t tag, void* data, size_t bytes, bool* received) {
  *received = false;
  if (peer < 0 || peer >= size_)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap recv from rank %d of %d", peer, size_);
  InProcGroup& g = *group_;
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.mail.find(std::make_tuple(peer, rank_, tag));
  if (it == g.mail.end() || it->second.empty()) return ncclSuccess;
  std::vector<char> msg = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) g.mail.erase(it);
  if (msg.size() != bytes)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap recv from rank %d: expected %zu bytes, got %zu",
                    peer, bytes, msg.size());
  std::memcpy(data, msg.data(), bytes);
  *received = true;
  return ncclSuccess;
}

ncclResult_t InProcBootstrap::newChildSeed(int, std::string* seed) {
  *seed = newGroupKey();
  return ncclSuccess;
}

ncclResult_t InProcBootstrap::joinChild(const std::string& seed, int childRank, int childSize,
                                        std::unique_ptr<Bootstrap>* child) {
  return join(seed, childRank, childSize, child);
}

}  // namespace mccl
