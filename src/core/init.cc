#include "core/init.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap_mpi/bootstrap_inproc.h"
#include "bootstrap_mpi/bootstrap_mpi.h"
#include "bootstrap_mpi/bootstrap_tcp.h"
#include "core/comm.h"
#include "core/cuda_util.h"
#include "core/datapath.h"
#include "core/error.h"
#include "core/group.h"
#include "core/knobs.h"
#include "core/node_exchange.h"
#include "core/topo.h"
#include "core/watchdog.h"
#include "bootstrap_mpi/socket.h"

namespace mccl {

InitTask::InitTask(ncclComm* comm, InitParams params) : comm_(comm), p_(std::move(params)) {}

InitTask::~InitTask() {
  join();
  closeFd(&liveFd_);
}

bool InitTask::threadSafe() const {
  Bootstrap* b = p_.bootstrap ? p_.bootstrap.get() : comm_->bootstrap.get();
  if (b && b->usesMpi()) return MpiBootstrap::threadMultiple();
  return true;
}

void InitTask::startThread() {
  thread_ = std::thread([this] {
    logSetThreadRank(p_.rank);
    ncclResult_t r;
    do {
      r = step(true);
    } while (r == ncclInProgress && !done_.load());
  });
}

void InitTask::join() {
  if (thread_.joinable()) thread_.join();
}

void InitTask::abort() {
  std::lock_guard<std::mutex> lock(mu_);
  if (comm_->bootstrap) comm_->bootstrap->abort();
  if (p_.bootstrap) p_.bootstrap->abort();
  if (comm_->dataPath) comm_->dataPath->abort();
}

ncclResult_t InitTask::createBootstrap() {
  std::unique_ptr<Bootstrap> b;
  switch (p_.source) {
    case InitParams::Source::UniqueIds:
      MCCL_CHECK(TcpBootstrap::connect(p_.ids.data(), static_cast<int>(p_.ids.size()), p_.rank,
                                       p_.nranks, &comm_->aborted, &b));
      break;
    case InitParams::Source::InProc:
      MCCL_CHECK(InProcBootstrap::join(p_.inprocKey, p_.rank, p_.nranks, &b));
      break;
    case InitParams::Source::Ready:
      b = std::move(p_.bootstrap);
      break;
  }
  b->setOwner(comm_);
  std::lock_guard<std::mutex> lock(mu_);
  comm_->bootstrap = std::move(b);
  if (comm_->aborted.load()) comm_->bootstrap->abort();
  return ncclSuccess;
}

ncclResult_t InitTask::localSetup() {
  PeerInfo me;
  me.rank = p_.rank;
  me.hostHash = localHostHash();
  me.processHash = localProcessHash();
  me.cudaDev = p_.cudaDev;
  if (p_.cudaDev >= 0) {
    MCCL_CHECK(cudaSelectDevice(p_.cudaDev));
    uint8_t uuid[16] = {0};
    char busId[32] = {0};
    MCCL_CHECK(cudaDeviceIdentity(p_.cudaDev, uuid, busId, sizeof busId, &me.numaNode));
    me.devHash = uuidHash(uuid);
    me.busId = busIdToInt64(busId);
  } else {
    me.numaNode = currentNumaNode();
  }
  std::unique_ptr<DataPath> dp;
  phaseMark("local-identity");
  MCCL_CHECK(createDataPath(comm_, &dp));
  MCCL_CHECK(dp->prepare(&me));
  phaseMark("datapath-prepare");
  {
    std::lock_guard<std::mutex> lock(mu_);
    comm_->dataPath = std::move(dp);
    if (comm_->aborted.load()) comm_->dataPath->abort();
  }
  MCCL_CHECK(Watchdog::listen(!comm_->bootstrap->allRanksInProcess(), p_.rank, &liveMine_, &me.liveSecret,
                              &liveFd_));
  phaseMark("watchdog-listen");
  me_ = me;
  return ncclSuccess;
}

// Every rank's record to every rank: the unique-id and in-process bootstraps, and MPI
// init when some rank is polled (core/node_exchange.h).
ncclResult_t InitTask::startFullExchange(bool blocking) {
  exchange_.assign(static_cast<size_t>(p_.nranks), PeerInfo{});
  exchange_[p_.rank] = me_;
  if (blocking) {
    MCCL_CHECK(comm_->bootstrap->allGather(exchange_.data(), sizeof(PeerInfo)));
    phaseMark("exchange");
    phase_ = Phase::Finish;
  } else {
    MCCL_CHECK(comm_->bootstrap->startAllGather(exchange_.data(), sizeof(PeerInfo)));
    phaseMark("exchange");
    phase_ = Phase::WaitExchange;
  }
  return ncclSuccess;
}

ncclResult_t InitTask::finish() {
  if (!comm_->topo.built()) {  // the full exchange
    for (int r = 0; r < p_.nranks; ++r) {
      const PeerInfo& pi = exchange_[r];
      if (pi.magic != PeerInfo::kMagic || pi.rank != r)
        return MCCL_ERR(ncclInternalError, comm_, "init: rank %d sent a malformed peer record", r);
    }
    comm_->topo = Topology::fromAll(exchange_, p_.rank);
    comm_->topo.setExchangeBytes(comm_->topo.exchangeBytes() + agreeBytes_);
    std::vector<PeerInfo>().swap(exchange_);
  }
  const PeerInfo& me = comm_->topo.me();
  // Host names are not in the exchange: this host's ranks share this rank's; the others'
  // arrive with the liveness and connection records.
  const std::string host = localHostName();
  for (const PeerInfo& o : comm_->topo.localPeers()) comm_->hosts.set(o.rank, host.c_str());
  // Two ranks of one node must not drive the same GPU: their spinning kernels would be
  // time-sliced between processes. MCCL_SHARED_GPU=1 lets ranks of one process share one
  // (one CUDA context: their kernels run side by side), for tests and benchmarks on
  // machines with fewer GPUs than ranks; 2 lets processes share one too (each wait for a
  // peer costs the GPU's time slice, so only for running multi-process programs such as
  // the OSU benchmarks for correctness on one GPU).
  if (p_.cudaDev >= 0) {
    const int64_t share = knobInt(Knob::SharedGpu);
    for (const PeerInfo& o : comm_->topo.localPeers()) {  // one GPU is shared on one node only
      if (share >= 2 || (share == 1 && o.processHash == me.processHash)) continue;
      if (o.rank != p_.rank && o.cudaDev >= 0 && o.devHash == me.devHash)
        return MCCL_ERR(ncclInvalidUsage, comm_,
                        "%s: ranks %d and %d use the same GPU (%s); give each rank its own device",
                        p_.call, p_.rank, o.rank, busIdString(me.busId).c_str());
    }
  }
  phaseMark("peer-check+topology");
  MCCL_CHECK(comm_->dataPath->setup());
  phaseMark("datapath-setup");
  // The liveness addresses go to the watch peers only (O(log N) each way).
  watch_ = Watchdog::watchPeers(comm_);
  liveIn_.assign(watch_.size(), LiveRecord{});
  liveGot_.assign(watch_.size(), 0);
  for (int q : watch_) MCCL_CHECK(comm_->bootstrap->send(q, kTagLive, &liveMine_, sizeof liveMine_));
  phaseMark("live-send");
  return ncclSuccess;
}

// Blocking: the bootstrap's own wait (the TCP one sleeps in poll), so that ranks waiting
// for their watch peers leave the CPU to those still working (oversubscribed nodes).
// Polled (nonblocking init): never waits.
ncclResult_t InitTask::receiveLive(bool blocking, bool* all) {
  *all = true;
  for (size_t i = 0; i < watch_.size(); ++i) {
    if (liveGot_[i]) continue;
    bool got = blocking;
    if (blocking) MCCL_CHECK(comm_->bootstrap->recv(watch_[i], kTagLive, &liveIn_[i], sizeof liveIn_[i]));
    else MCCL_CHECK(comm_->bootstrap->tryRecv(watch_[i], kTagLive, &liveIn_[i], sizeof liveIn_[i], &got));
    if (!got) {
      *all = false;
      continue;
    }
    LiveRecord& rec = liveIn_[i];
    if (rec.magic != LiveRecord::kMagic)
      return MCCL_ERR(ncclInternalError, comm_, "init: rank %d sent a malformed liveness record", watch_[i]);
    rec.host[sizeof rec.host - 1] = 0;
    comm_->hosts.set(watch_[i], rec.host);
    liveGot_[i] = 1;
  }
  return ncclSuccess;
}

// Init failed after some watch peers' LiveRecords arrived: those peers may have finished
// init and watch this rank, and must not take its leaving for the failure's cause.
void InitTask::tellWatchPeersFailed() {
  if (liveFd_ < 0 || !comm_->topo.built()) return;
  // The init's error stays the last error, whatever the bootstrap says below.
  const std::string commError = comm_->lastError(), threadError = threadLastError();
  std::vector<LiveRecord> got;
  for (size_t i = 0; i < liveIn_.size() && i < liveGot_.size(); ++i) {
    // A blocking init waits for the records in order: the failure may have come while
    // waiting for one, with later ones already delivered. Take what is there.
    bool here = liveGot_[i] != 0;
    if (!here && comm_->bootstrap && !comm_->aborted.load()) {
      LiveRecord rec;
      if (comm_->bootstrap->tryRecv(watch_[i], kTagLive, &rec, sizeof rec, &here) != ncclSuccess) here = false;
      if (here) liveIn_[i] = rec;
    }
    if (here) got.push_back(liveIn_[i]);
  }
  comm_->setLastError(commError.c_str());
  setThreadLastError(threadError.c_str());
  if (!got.empty()) Watchdog::leaveFailedInit(p_.rank, comm_->topo.liveSecret(), got);
}

ncclResult_t InitTask::startWatchdog() {
  MCCL_CHECK(Watchdog::start(comm_, liveFd_, watch_, liveIn_, &comm_->watchdog));
  liveFd_ = -1;
  phaseMark("watchdog-start");
  // What this rank received at init (the scale model of bench/results/init-*.md).
  const Topology& t = comm_->topo;
  p_.prof.note("init-recv " + std::to_string(t.exchangeBytes() + sizeof(LiveRecord) * watch_.size()) +
               " B (exchange " + std::to_string(t.exchangeBytes()) + " + " + std::to_string(sizeof(LiveRecord)) +
               " x " + std::to_string(watch_.size()) + ") topology " + std::to_string(t.memoryBytes()) + " B (" +
               t.describe() + ")");
  logTopology(comm_);
  INFO(kLogInit, "comm %p rank %d nranks %d cudaDev %d nodes %d localRank %d/%d bootstrap %s - Init COMPLETE",
       static_cast<void*>(comm_), p_.rank, p_.nranks, p_.cudaDev, comm_->topo.nNodes(),
       comm_->topo.localRank(), comm_->topo.localRanks(), comm_->bootstrap->kind());
  return ncclSuccess;
}

ncclResult_t InitTask::runPhase(bool blocking, bool* progressed) {
  *progressed = true;
  switch (phase_) {
    case Phase::CreateBootstrap:
      MCCL_CHECK(createBootstrap());
      phaseMark("bootstrap-create");
      phase_ = Phase::WaitBootstrap;
      return ncclSuccess;
    case Phase::WaitBootstrap: {
      bool ready = false;
      MCCL_CHECK(comm_->bootstrap->testReady(&ready));
      phaseMark("bootstrap-wait");
      if (ready) phase_ = Phase::LocalSetup;
      else *progressed = false;
      return ncclSuccess;
    }
    case Phase::LocalSetup:
      MCCL_CHECK(localSetup());
      phase_ = Phase::Exchange;
      return ncclSuccess;
    case Phase::Exchange:
      // Below MCCL_INIT_BY_NODE_MIN_RANKS every rank's record (at most 64 B each) costs less
      // than the node communicator (MPI_Comm_split) of the exchange by node.
      if (auto* mb = dynamic_cast<MpiBootstrap*>(comm_->bootstrap.get());
          mb && p_.nranks >= knobInt(Knob::InitByNodeMinRanks)) {
        byNode_.reset(new NodeExchange(mb));
        MCCL_CHECK(byNode_->start(blocking));
        phase_ = Phase::WaitAgree;
        return ncclSuccess;
      }
      return startFullExchange(blocking);
    case Phase::WaitAgree: {
      bool done = false, byNode = false;
      MCCL_CHECK(byNode_->test(&done, &byNode));
      if (!done) {
        *progressed = false;
        return ncclSuccess;
      }
      phaseMark("agree");
      agreeBytes_ = NodeExchange::kAgreeBytes;
      if (!byNode) return startFullExchange(blocking);
      MCCL_CHECK(byNode_->run(me_, &comm_->topo));
      phaseMark("exchange");
      phase_ = Phase::Finish;
      return ncclSuccess;
    }
    case Phase::WaitExchange: {
      bool done = false;
      MCCL_CHECK(comm_->bootstrap->testAllGather(&done));
      phaseMark("exchange");
      if (done) phase_ = Phase::Finish;
      else *progressed = false;
      return ncclSuccess;
    }
    case Phase::Finish:
      MCCL_CHECK(finish());
      phase_ = Phase::WaitLive;
      return ncclSuccess;
    case Phase::WaitLive: {
      bool all = false;
      MCCL_CHECK(receiveLive(blocking, &all));
      phaseMark("live-wait");
      if (all) phase_ = Phase::StartWatchdog;
      else *progressed = false;
      return ncclSuccess;
    }
    case Phase::StartWatchdog:
      MCCL_CHECK(startWatchdog());
      phase_ = Phase::Done;
      return ncclSuccess;
    case Phase::Done:
      *progressed = false;
      return ncclSuccess;
  }
  return ncclSuccess;
}

ncclResult_t InitTask::step(bool blocking) {
  if (done_.load()) return result_.load();
  ScopedPhaseLog profile(&p_.prof);
  ncclResult_t res = ncclSuccess;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(bootstrapTimeoutSeconds());
  int idle = 0;
  while (phase_ != Phase::Done) {
    if (comm_->aborted.load()) {
      res = MCCL_ERR(ncclRemoteError, comm_, "%s: aborted during initialisation", p_.call);
      break;
    }
    bool progressed = false;
    res = runPhase(blocking, &progressed);
    if (res != ncclSuccess) break;
    if (progressed) {
      idle = 0;
      continue;
    }
    if (!blocking) return ncclInProgress;
    if (std::chrono::steady_clock::now() > deadline) {
      res = MCCL_ERR(ncclRemoteError, comm_,
                     "%s: rank %d gave up waiting for the other ranks after %.0f s "
                     "(MCCL_BOOTSTRAP_TIMEOUT)",
                     p_.call, p_.rank, bootstrapTimeoutSeconds());
      break;
    }
    if (++idle > 100) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (res != ncclSuccess && res != ncclInProgress) {
    WARN("%s: rank %d failed to initialise: %s", p_.call, p_.rank, comm_->lastError().c_str());
    tellWatchPeersFailed();
  }
  if (res == ncclSuccess) p_.prof.print(p_.call, p_.rank, p_.nranks);
  comm_->asyncError.store(res);
  result_.store(res);
  done_.store(true);
  return res;
}

ncclResult_t launchInit(ncclComm* comm, InitParams params, bool deferToGroup) {
  comm->asyncError.store(ncclInProgress);
  comm->rank = params.rank;
  comm->nranks = params.nranks;
  comm->cudaDev = params.cudaDev;
  comm->commHash = params.commHash;
  comm->initTask.reset(new InitTask(comm, std::move(params)));
  if (deferToGroup && groupDepth() > 0) {
    groupAddInit(comm);
    return ncclSuccess;
  }
  if (comm->config.blocking) {
    ncclResult_t r = comm->initTask->step(true);
    comm->initTask.reset();
    return r;
  }
  if (comm->initTask->threadSafe()) {
    comm->initTask->startThread();
    return ncclInProgress;
  }
  comm->initTask->setPolled();
  return progressInit(comm);
}

ncclResult_t progressInit(ncclComm* comm) {
  InitTask* t = comm->initTask.get();
  if (t == nullptr) return comm->asyncError.load();
  ncclResult_t r;
  if (t->done()) {
    r = t->result();
  } else if (!t->polled()) {
    // Running on its thread, or queued in a group that has not ended yet.
    return ncclInProgress;
  } else {
    r = t->step(false);
    if (r == ncclInProgress) return r;
  }
  t->join();
  comm->initTask.reset();
  return r;
}

ncclResult_t resolveInitDevice(int requested, int localRank, const char* call, int* dev) {
  std::string env = knobStr(Knob::Device);
  int ndev = cudaUsableDeviceCount();
  if (requested == MCCL_DEVICE_HOST || env == "host") {
    *dev = MCCL_DEVICE_HOST;
    return ncclSuccess;
  }
  // An explicit device must exist: a program that asked for GPU 3 and silently got a host
  // communicator would pass device pointers to host code.
  if (requested >= 0) {
    if (requested >= ndev)
      return MCCL_ERR(ncclInvalidArgument, nullptr,
                      "%s: cudaDev = %d names no usable CUDA device (%d visible); pass "
                      "MCCL_DEVICE_AUTO or MCCL_DEVICE_HOST for a host communicator",
                      call, requested, ndev);
    *dev = requested;
    return ncclSuccess;
  }
  if (ndev == 0) {  // AUTO without a GPU: a host communicator
    *dev = MCCL_DEVICE_HOST;
    return ncclSuccess;
  }
  // AUTO
  int64_t forced;
  if (!env.empty() && env != "auto" && parseKnobInt(env.c_str(), &forced)) {
    if (forced < 0 || forced >= ndev)
      return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: MCCL_DEVICE=%s but only %d CUDA devices are visible",
                      call, env.c_str(), ndev);
    *dev = static_cast<int>(forced);
    return ncclSuccess;
  }
  if (localRank >= 0) {
    *dev = localRank % ndev;
    return ncclSuccess;
  }
  return cudaGetCurrentDevice(dev);
}

}  // namespace mccl
