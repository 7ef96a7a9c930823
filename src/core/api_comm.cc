// Entry points of the communicator's life: versions, ids, init, split, finalize, destroy,
// abort, queries and errors. Each is a few lines: validate, then hand over to core.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

#include "bootstrap_mpi/bootstrap_inproc.h"
#include "bootstrap_mpi/bootstrap_tcp.h"
#include "core/comm.h"
#include "core/cuda_util.h"
#include "core/datapath.h"
#include "core/error.h"
#include "core/group.h"
#include "core/init.h"
#include "core/knobs.h"
#include "mccl.h"


using namespace mccl;

namespace {

// Common part of ncclCommInitRank, ...Config and ...Scalable.
ncclResult_t initRankFromIds(ncclComm_t* out, int nranks, int rank, const ncclUniqueId* ids, int nId,
                             ncclConfig_t* config, const char* call) {
  printVersionOnce();
  if (out == nullptr) return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: comm is NULL", call);
  if (nranks < 1)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: nranks = %d must be at least 1", call, nranks);
  if (rank < 0 || rank >= nranks)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: rank = %d is out of range for nranks = %d",
                    call, rank, nranks);
  if (nId < 1 || nId > nranks)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: nId = %d must be in 1..nranks (%d)", call,
                    nId, nranks);
  CommConfig cfg;
  MCCL_CHECK(parseConfig(config, call, &cfg));
  InitParams p;
  p.source = InitParams::Source::UniqueIds;
  p.rank = rank;
  p.nranks = nranks;
  p.call = call;
  p.ids.resize(static_cast<size_t>(nId));
  for (int i = 0; i < nId; ++i) MCCL_CHECK(decodeUniqueId(ids[i], &p.ids[i], call));
  p.commHash = p.ids[0].nonce;
  MCCL_CHECK(resolveInitDevice(MCCL_DEVICE_AUTO, -1, call, &p.cudaDev));
  ncclComm* c = createComm(cfg);
  *out = c;
  return launchInit(c, std::move(p), /*deferToGroup=*/true);
}

}  // namespace

NCCL_API const char* mcclGetVersionString(void) {
  static char s[128];
  std::snprintf(s, sizeof s, "mccl %d.%d.%d (NCCL API %d.%d.%d, CUDA %s)", MCCL_VERSION_MAJOR,
                MCCL_VERSION_MINOR, MCCL_VERSION_PATCH, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH,
                cudaBuilt() ? "on" : "off");
  return s;
}

NCCL_API const char* mcclKnobHelp(void) {
  static const std::string help = knobsHelp();
  return help.c_str();
}

NCCL_API ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return MCCL_ERR(ncclInvalidArgument, nullptr, "ncclGetVersion: version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}
NCCL_API_ALIAS(ncclGetVersion)

NCCL_API ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  MCCL_API_BEGIN
  printVersionOnce();
  if (uniqueId == nullptr)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "ncclGetUniqueId: uniqueId is NULL");
  return TcpBootstrap::createRoot(uniqueId);
  MCCL_API_END
}
NCCL_API_ALIAS(ncclGetUniqueId)

NCCL_API ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                             int rank, ncclConfig_t* config) {
  MCCL_API_BEGIN
  return initRankFromIds(comm, nranks, rank, &commId, 1, config, "ncclCommInitRankConfig");
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommInitRankConfig)

NCCL_API ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  MCCL_API_BEGIN
  return initRankFromIds(comm, nranks, rank, &commId, 1, nullptr, "ncclCommInitRank");
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommInitRank)

NCCL_API ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                               ncclUniqueId* commIds, ncclConfig_t* config) {
  MCCL_API_BEGIN
  if (commIds == nullptr)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "ncclCommInitRankScalable: commIds is NULL");
  return initRankFromIds(newcomm, nranks, myrank, commIds, nId, config, "ncclCommInitRankScalable");
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommInitRankScalable)

NCCL_API ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  MCCL_API_BEGIN
  const char* call = "ncclCommInitAll";
  printVersionOnce();
  if (comms == nullptr) return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: comm is NULL", call);
  if (ndev < 1)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: ndev = %d must be at least 1", call, ndev);
  int visible = cudaUsableDeviceCount();
  bool host = visible == 0 || knobStr(Knob::Device) == "host";
  std::vector<int> devs(static_cast<size_t>(ndev), MCCL_DEVICE_HOST);
  if (!host) {
    for (int i = 0; i < ndev; ++i) {
      int d = devlist ? devlist[i] : i;
      if (d < 0 || d >= visible)
        return MCCL_ERR(ncclInvalidArgument, nullptr,
                        "%s: devlist[%d] = %d is not a visible CUDA device (0..%d)", call, i, d,
                        visible - 1);
      if (knobInt(Knob::SharedGpu) <= 0 && std::find(devs.begin(), devs.begin() + i, d) != devs.begin() + i)
        return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: device %d appears twice in devlist",
                        call, d);
      devs[i] = d;
    }
  }
  CommConfig cfg;
  MCCL_CHECK(parseConfig(nullptr, call, &cfg));
  cfg.blocking = true;
  std::string key = InProcBootstrap::newGroupKey();
  uint64_t hash = std::hash<std::string>()(key) ^ reinterpret_cast<uintptr_t>(comms);
  std::vector<ncclComm*> made(static_cast<size_t>(ndev));
  for (int i = 0; i < ndev; ++i) {
    made[i] = createComm(cfg);
    InitParams p;
    p.source = InitParams::Source::InProc;
    p.inprocKey = key;
    p.rank = i;
    p.nranks = ndev;
    p.cudaDev = devs[i];
    p.commHash = hash;
    p.call = call;
    made[i]->asyncError.store(ncclInProgress);
    made[i]->rank = i;
    made[i]->nranks = ndev;
    made[i]->cudaDev = devs[i];
    made[i]->commHash = hash;
    made[i]->initTask.reset(new InitTask(made[i], std::move(p)));
  }
  for (ncclComm* c : made) c->initTask->startThread();
  ncclResult_t first = ncclSuccess;
  for (ncclComm* c : made) {
    c->initTask->join();
    ncclResult_t r = c->initTask->result();
    c->initTask.reset();
    if (r != ncclSuccess && first == ncclSuccess) first = r;
  }
  if (first != ncclSuccess) {
    for (ncclComm* c : made) destroyComm(c, true);
    return first;
  }
  for (int i = 0; i < ndev; ++i) comms[i] = made[i];
  return ncclSuccess;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommInitAll)

NCCL_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                    ncclConfig_t* config) {
  MCCL_API_BEGIN
  const char* call = "ncclCommSplit";
  MCCL_CHECK(checkCommArg(comm, call));
  if (newcomm == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: newcomm is NULL", call);
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: color = %d must be >= 0 or NCCL_SPLIT_NOCOLOR", call, color);
  CommConfig cfg;
  MCCL_CHECK(parseConfigOver(config, comm->config, call, &cfg));
  MCCL_CHECK(comm->checkUsable(call, /*management=*/true));
  *newcomm = nullptr;
  InitParams p;
  ScopedPhaseLog profile(&p.prof);
  std::unique_ptr<Bootstrap> child;
  if (ncclResult_t r = comm->bootstrap->split(color, key, &child); r != ncclSuccess)
    return comm->attributeRemoteError(r);
  phaseMark("bootstrap-split");
  uint64_t splitIndex = comm->splitCount++;
  if (!child) return ncclSuccess;
  p.source = InitParams::Source::Ready;
  p.rank = child->rank();
  p.nranks = child->size();
  p.cudaDev = comm->cudaDev;
  p.bootstrap = std::move(child);
  p.commHash = comm->commHash ^ (0x9e3779b97f4a7c15ull * (splitIndex + 1)) ^
               (static_cast<uint64_t>(static_cast<uint32_t>(color)) << 17);
  p.call = call;
  ncclComm* c = createComm(cfg);
  *newcomm = c;
  return launchInit(c, std::move(p), /*deferToGroup=*/false);
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommSplit)

NCCL_API ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  MCCL_API_BEGIN
  MCCL_CHECK(checkCommArg(comm, "ncclCommFinalize"));
  MCCL_CHECK(comm->checkUsable("ncclCommFinalize"));
  ncclResult_t r = comm->dataPath ? comm->dataPath->flush() : ncclSuccess;
  comm->finalized.store(true);
  return r;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommFinalize)

NCCL_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  MCCL_API_BEGIN
  if (comm == nullptr) return ncclSuccess;
  MCCL_CHECK(checkCommArg(comm, "ncclCommDestroy"));
  PhaseLog prof;
  ScopedPhaseLog profile(&prof);
  const int rank = comm->rank, nranks = comm->nranks;
  // A communicator still initialising in the background finishes (or fails) first.
  if (comm->initTask && !comm->initTask->polled()) comm->initTask->join();
  ncclResult_t r = ncclSuccess;
  bool healthy = !comm->aborted.load() && !comm->initTask &&
                 (comm->asyncError.load() == ncclSuccess);
  phaseMark("join-init");
  // A revoked communicator is quiescent: nothing to flush, but a healthy one still says
  // farewell to its peers.
  if (healthy && comm->dataPath && !comm->finalized.load() && !comm->revoked.load())
    r = comm->dataPath->flush();
  phaseMark("flush");
  destroyComm(comm, /*abortFirst=*/!healthy);
  prof.print("ncclCommDestroy", rank, nranks);
  return r;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommDestroy)

NCCL_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  MCCL_API_BEGIN
  if (comm == nullptr) return ncclSuccess;
  MCCL_CHECK(checkCommArg(comm, "ncclCommAbort"));
  destroyComm(comm, /*abortFirst=*/true);
  return ncclSuccess;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommAbort)

NCCL_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  MCCL_API_BEGIN
  MCCL_CHECK(checkCommArg(comm, "ncclCommGetAsyncError"));
  if (asyncError == nullptr)
    return MCCL_ERR(ncclInvalidArgument, comm, "ncclCommGetAsyncError: asyncError is NULL");
  if (comm->revoked.load()) {
    // Revoke returns once the communicator is quiescent (core/shrink.cc), as NCCL's
    // state does when it leaves ncclInProgress.
    *asyncError = ncclSuccess;
    return ncclSuccess;
  }
  if (comm->initTask) progressInit(comm);
  if (!comm->initTask && comm->dataPath) comm->dataPath->asyncStatus();
  if (!comm->initTask) comm->checkPeers();
  *asyncError = comm->asyncError.load();
  return ncclSuccess;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommGetAsyncError)

NCCL_API ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  MCCL_CHECK(checkCommArg(comm, "ncclCommCount"));
  if (count == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "ncclCommCount: count is NULL");
  *count = comm->nranks;
  return ncclSuccess;
}
NCCL_API_ALIAS(ncclCommCount)

NCCL_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  MCCL_CHECK(checkCommArg(comm, "ncclCommCuDevice"));
  if (device == nullptr)
    return MCCL_ERR(ncclInvalidArgument, comm, "ncclCommCuDevice: device is NULL");
  *device = comm->cudaDev;  // MCCL_DEVICE_HOST for a host communicator
  return ncclSuccess;
}
NCCL_API_ALIAS(ncclCommCuDevice)

NCCL_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  MCCL_CHECK(checkCommArg(comm, "ncclCommUserRank"));
  if (rank == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "ncclCommUserRank: rank is NULL");
  *rank = comm->rank;
  return ncclSuccess;
}
NCCL_API_ALIAS(ncclCommUserRank)

NCCL_API ncclResult_t mcclCommIsHost(const ncclComm_t comm, int* isHost) {
  MCCL_CHECK(checkCommArg(comm, "mcclCommIsHost"));
  if (isHost == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "mcclCommIsHost: isHost is NULL");
  *isHost = comm->isHost() ? 1 : 0;
  return ncclSuccess;
}

NCCL_API ncclResult_t mcclCommMemoryInfo(const ncclComm_t comm, mcclMemoryInfo_t* info) {
  MCCL_CHECK(checkCommArg(comm, "mcclCommMemoryInfo"));
  if (info == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "mcclCommMemoryInfo: info is NULL");
  MCCL_CHECK(comm->checkUsable("mcclCommMemoryInfo"));  // not while a nonblocking init runs
  mcclMemoryInfo_t m{};
  m.fifoBytes = comm->mem.get(MemKind::Fifo);
  m.controlBytes = comm->mem.get(MemKind::Control);
  m.scratchBytes = comm->mem.get(MemKind::Scratch);
  m.tableBytes = comm->mem.get(MemKind::Tables);
  m.hostMappedBytes = comm->mem.get(MemKind::HostMapped);
  m.peerMappedBytes = comm->mem.get(MemKind::PeerMapped);
  m.kernelStackBytes = comm->dataPath ? comm->dataPath->kernelStackBytes() : 0;
  *info = m;
  return ncclSuccess;
}

NCCL_API ncclResult_t mcclCommLaunchGraphCounters(const ncclComm_t comm, uint64_t* made, uint64_t* replayed) {
  MCCL_CHECK(checkCommArg(comm, "mcclCommLaunchGraphCounters"));
  if (made == nullptr || replayed == nullptr)
    return MCCL_ERR(ncclInvalidArgument, comm, "mcclCommLaunchGraphCounters: %s is NULL", made ? "replayed" : "made");
  MCCL_CHECK(comm->checkUsable("mcclCommLaunchGraphCounters"));
  uint64_t m = 0, r = 0;
  if (comm->dataPath) comm->dataPath->launchGraphCounters(&m, &r);
  *made = m;
  *replayed = r;
  return ncclSuccess;
}

NCCL_API const char* ncclGetErrorString(ncclResult_t result) { return resultString(result); }
NCCL_API_ALIAS(ncclGetErrorString)

NCCL_API const char* ncclGetLastError(ncclComm_t comm) {
  // A communicator's own last error when it has one; otherwise this thread's.
  static thread_local std::string copy;
  if (comm != nullptr && isLiveComm(comm)) {
    copy = comm->lastError();
    if (!copy.empty()) return copy.c_str();
  }
  return threadLastError();
}
NCCL_API_ALIAS(ncclGetLastError)
