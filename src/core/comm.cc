#include "core/comm.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <unordered_set>

#include "core/datapath.h"
#include "core/dump.h"
#include "core/error.h"
#include "core/group.h"
#include "core/init.h"
#include "core/knobs.h"
#include "core/phase_log.h"
#include "core/watchdog.h"
#include "core/window.h"

ncclComm::ncclComm() = default;

ncclComm::~ncclComm() { magic = 0; }

void ncclComm::setLastError(const char* msg) {
  std::lock_guard<std::mutex> lock(errMu_);
  lastError_ = msg;
}

std::string ncclComm::lastError() const {
  std::lock_guard<std::mutex> lock(errMu_);
  return lastError_;
}

void ncclComm::fail(ncclResult_t r) {
  std::lock_guard<std::mutex> lock(errMu_);
  ncclResult_t expected = ncclSuccess;
  if (asyncError.compare_exchange_strong(expected, r)) failure_ = lastError_;
}

std::string ncclComm::failureMessage() const {
  std::lock_guard<std::mutex> lock(errMu_);
  return failure_;
}

ncclResult_t ncclComm::checkPeers() {
  if (!watchdog || !watchdog->anyLost()) return ncclSuccess;
  std::string why;
  if (watchdog->lostRank(&why) < 0) return ncclSuccess;
  ncclResult_t r = MCCL_ERR(ncclRemoteError, this, "rank %d lost a peer: %s", rank, why.c_str());
  fail(r);
  return r;
}

ncclResult_t ncclComm::attributeRemoteError(ncclResult_t r) {
  if (r != ncclRemoteError || !watchdog || aborted.load()) return r;
  std::string why, first = lastError();
  // The watchdog names the rank within a few hundred ms of a death (a closed or refused
  // liveness connection); a frozen rank takes its silence limit and is not waited for.
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (watchdog->lostRank(&why) < 0) {
    if (std::chrono::steady_clock::now() > until) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return MCCL_ERR(ncclRemoteError, this, "rank %d lost a peer: %s (first seen as: %s)", rank, why.c_str(),
                  first.c_str());
}

ncclResult_t ncclComm::checkUsable(const char* call, bool management) {
  if (initTask) {
    ncclResult_t r = mccl::progressInit(this);
    if (r == ncclInProgress)
      return MCCL_ERR(ncclInvalidUsage, this,
                      "%s: the communicator is still being initialised (nonblocking init); poll "
                      "ncclCommGetAsyncError until it returns ncclSuccess",
                      call);
    if (r != ncclSuccess) return r;
  }
  if (aborted.load())
    return MCCL_ERR(ncclInvalidUsage, this, "%s: the communicator was aborted", call);
  if (finalized.load())
    return MCCL_ERR(ncclInvalidUsage, this,
                    "%s: the communicator was finalized; only ncclCommDestroy is allowed", call);
  if (revoked.load()) {
    if (management) return ncclSuccess;
    return MCCL_ERR(ncclInvalidUsage, this,
                    "%s: the communicator was revoked (ncclCommRevoke, or ncclCommShrink with "
                    "NCCL_SHRINK_ABORT); only ncclCommSplit, ncclCommShrink, ncclCommDestroy and "
                    "ncclCommAbort are allowed",
                    call);
  }
  if (dataPath) dataPath->asyncStatus();
  checkPeers();
  ncclResult_t e = asyncError.load();
  if (e != ncclSuccess && e != ncclInProgress)
    return MCCL_ERR(e, this, "%s: the communicator failed earlier: %s", call, failureMessage().c_str());
  return ncclSuccess;
}

namespace mccl {
namespace {
struct Registry {
  std::mutex mu;
  std::unordered_set<const ncclComm*> live;
};
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}
}  // namespace

namespace {
uint32_t nextCommStamp() {
  static std::atomic<uint32_t> next{1};
  uint32_t s;
  do {
    s = next.fetch_add(1) & 0xffff;
  } while (s == 0);
  return s;
}
}  // namespace

ncclComm* createComm(const CommConfig& config) {
  auto* c = new ncclComm();
  c->config = config;
  c->redOps.setStamp(nextCommStamp());
  registerComm(c);
  installDumpSignal();
  return c;
}

void destroyComm(ncclComm* comm, bool abortFirst) {
  groupForget(comm);
  if (abortFirst) {
    comm->aborted.store(true);
    if (comm->initTask) comm->initTask->abort();
    if (comm->bootstrap) comm->bootstrap->abort();
    if (comm->dataPath) comm->dataPath->abort();
  }
  if (comm->initTask) {
    comm->initTask->join();
    comm->initTask.reset();
  }
  unregisterComm(comm);
  if (comm->watchdog) {
    // A clean destroy says goodbye so peers do not take the closing connections for a
    // crash; an abort says it leaves after a failure, so peers still waiting on this rank
    // learn that the communicator is broken, but name the rank that failed first.
    if (!abortFirst) comm->watchdog->farewell();
    else comm->watchdog->leaveAfterFailure();
    mccl::phaseMark("watchdog-farewell");
    comm->watchdog.reset();
    mccl::phaseMark("watchdog-free");
  }
  comm->dataPath.reset();  // waits for its last kernel, which may use windows
  mccl::phaseMark("datapath-free");
  comm->sym.reset();  // unmaps peers' windows (their owners may free them after)
  comm->bootstrap.reset();
  mccl::phaseMark("bootstrap-free");
  delete comm;
}

void printVersionOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (logLevel() >= LogLevel::Version) logMessage(LogLevel::Version, kLogInit, __FILE__, __LINE__, "%s", mcclGetVersionString());
  });
}


namespace {
// Changes whenever a communicator is registered or unregistered: a thread that found comm
// live at generation g knows it still is while the generation is g, without the lock
// (every collective validates its communicator; the lock was a fifth of a small host call).
std::atomic<uint64_t> gRegistryGen{1};
}  // namespace

void registerComm(ncclComm* comm) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().live.insert(comm);
  gRegistryGen.fetch_add(1, std::memory_order_release);
}

void unregisterComm(ncclComm* comm) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().live.erase(comm);
  gRegistryGen.fetch_add(1, std::memory_order_release);
}

uint64_t commRegistryGeneration() { return gRegistryGen.load(std::memory_order_acquire); }

bool isLiveComm(const ncclComm* comm) {
  // One thread-local object (one TLS lookup a call in a shared library, not two).
  thread_local struct {
    const ncclComm* comm = nullptr;
    uint64_t gen = 0;
  } last;
  const uint64_t gen = gRegistryGen.load(std::memory_order_acquire);
  if (comm == last.comm && gen == last.gen) return true;
  std::lock_guard<std::mutex> lock(registry().mu);
  if (registry().live.count(comm) == 0) return false;
  // gen was read before the lock: a change since then makes the next call look again.
  last.comm = comm;
  last.gen = gen;
  return true;
}

void forEachLiveComm(void (*f)(ncclComm*, void*), void* arg) {
  std::lock_guard<std::mutex> lock(registry().mu);
  for (const ncclComm* c : registry().live) f(const_cast<ncclComm*>(c), arg);
}

ncclResult_t checkCommArg(const ncclComm* comm, const char* call, const char* argName) {
  if (comm == nullptr)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: %s is NULL", call, argName);
  if (!isLiveComm(comm))
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: %s = %p is not a live communicator (destroyed, or never created)", call,
                    argName, static_cast<const void*>(comm));
  return ncclSuccess;
}

}  // namespace mccl
