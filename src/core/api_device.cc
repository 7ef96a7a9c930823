// The host side of the device API (nccl_device.h) that is not windows: ncclDevCommCreate /
// ncclDevCommDestroy (the checks; SymState in window.cc builds the device communicator), the
// host team functions, and the LSA barrier and LL all-to-all requirements.
#include <nccl_device.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/comm.h"
#include "core/error.h"
#include "core/group.h"
#include "core/window.h"

namespace mccl {
namespace {

// GIN and the LL all-to-all: what a device communicator of mccl cannot provide.
const char* unsupportedRequirement(const ncclDevCommRequirements* r) {
  if (r->ginForceEnable) return "ginForceEnable (the GPU-initiated network, GIN)";
  if (r->ginSignalCount != 0) return "ginSignalCount (GIN signals)";
  if (r->ginCounterCount != 0) return "ginCounterCount (GIN counters)";
  if (r->railGinBarrierCount != 0) return "railGinBarrierCount (GIN barriers)";
  if (r->barrierCount != 0) return "barrierCount (world barriers, which combine LSA and GIN barriers)";
  // As NCCL on GPUs without NVLink SHARP: multicast memory cannot be had, so asking fails.
  if (r->lsaMultimem) return "lsaMultimem (NVLink multicast memory, which mccl never uses)";
  int n = 0;
  for (const ncclTeamRequirements* t = r->teamRequirementsList; t != nullptr && n < 4096; t = t->next, n++)
    if (t->multimem) return "multimem in teamRequirementsList (NVLink multicast memory, which mccl never uses)";
  return nullptr;
}

}  // namespace
}  // namespace mccl

using namespace mccl;

NCCL_API ncclResult_t ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements* reqs, ncclDevComm* outDevComm) {
  MCCL_API_BEGIN
  const char* call = "ncclDevCommCreate";
  MCCL_CHECK(checkCommArg(comm, call));
  if (reqs == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: reqs is NULL", call);
  if (outDevComm == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: outDevComm is NULL", call);
  if (reqs->lsaBarrierCount < 0)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: reqs->lsaBarrierCount = %d is negative", call, reqs->lsaBarrierCount);
  if (reqs->barrierCount < 0 || reqs->railGinBarrierCount < 0 || reqs->lsaLLA2ABlockCount < 0 ||
      reqs->lsaLLA2ASlotCount < 0 || reqs->ginContextCount < 0 || reqs->ginSignalCount < 0 || reqs->ginCounterCount < 0)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: reqs has a negative count", call);
  if (const char* what = unsupportedRequirement(reqs))
    return MCCL_ERR(ncclInvalidUsage, comm,
                    "%s: reqs asks for %s, which mccl does not provide: its device API covers load/store among "
                    "the ranks of one node (LSA team) only",
                    call, what);
  int nRes = 0;
  for (const ncclDevResourceRequirements* q = reqs->resourceRequirementsList; q != nullptr; q = q->next, nRes++) {
    if (nRes >= 4096)
      return MCCL_ERR(ncclInvalidArgument, comm, "%s: reqs->resourceRequirementsList has more than 4096 entries (a cycle?)", call);
    if (q->ginSignalCount != 0 || q->ginCounterCount != 0)
      return MCCL_ERR(ncclInvalidUsage, comm,
                      "%s: resource requirement %d asks for GIN signals or counters, which mccl does not provide", call, nRes);
    if (q->bufferAlign != 0 && (q->bufferAlign & (q->bufferAlign - 1)) != 0)
      return MCCL_ERR(ncclInvalidArgument, comm, "%s: resource requirement %d: bufferAlign = %zu is not a power of two",
                      call, nRes, q->bufferAlign);
    if (q->bufferSize > (size_t{1} << 40) || q->bufferAlign > (size_t{1} << 30))
      return MCCL_ERR(ncclInvalidArgument, comm, "%s: resource requirement %d: bufferSize = %zu is too large", call, nRes,
                      q->bufferSize);
  }
  MCCL_CHECK(comm->checkUsable(call));
  MCCL_CHECK(needGpuComm(comm, call, "device communicators"));
  if (groupDepth() > 0) {
    // Collective: inside a group it runs at ncclGroupEnd (as ncclCommWindowRegister), on a
    // copy of the requirements and their lists.
    struct Reqs {
      ncclDevCommRequirements reqs;
      std::vector<ncclDevResourceRequirements> res;
      std::vector<ncclTeamRequirements> teams;
    };
    auto copy = std::make_shared<Reqs>();
    copy->reqs = *reqs;
    for (const ncclDevResourceRequirements* q = reqs->resourceRequirementsList; q != nullptr; q = q->next)
      copy->res.push_back(*q);
    for (const ncclTeamRequirements* t = reqs->teamRequirementsList; t != nullptr && copy->teams.size() < 4096; t = t->next)
      copy->teams.push_back(*t);
    for (size_t i = 0; i < copy->res.size(); ++i) copy->res[i].next = i + 1 < copy->res.size() ? &copy->res[i + 1] : nullptr;
    for (size_t i = 0; i < copy->teams.size(); ++i)
      copy->teams[i].next = i + 1 < copy->teams.size() ? &copy->teams[i + 1] : nullptr;
    copy->reqs.resourceRequirementsList = copy->res.empty() ? nullptr : copy->res.data();
    copy->reqs.teamRequirementsList = copy->teams.empty() ? nullptr : copy->teams.data();
    groupAddSetup(comm, [comm, copy, outDevComm, call] { return comm->sym->createDevComm(&copy->reqs, outDevComm, call); });
    return ncclSuccess;
  }
  return comm->sym->createDevComm(reqs, outDevComm, call);
  MCCL_API_END
}
NCCL_API_ALIAS(ncclDevCommCreate)

NCCL_API ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm* devComm) {
  MCCL_API_BEGIN
  const char* call = "ncclDevCommDestroy";
  MCCL_CHECK(checkCommArg(comm, call));
  if (devComm == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: devComm is NULL", call);
  if (comm->isHost())
    return MCCL_ERR(ncclInvalidUsage, comm, "%s: comm is a host communicator, which has no device communicators", call);
  if (!comm->sym)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: devComm is not a device communicator of this communicator", call);
  return comm->sym->destroyDevComm(devComm, call);
  MCCL_API_END
}
NCCL_API_ALIAS(ncclDevCommDestroy)

// The host team functions: a team cannot carry an error, so a bad communicator gives the
// empty team (nRanks 0) and rank -1, with the sentence in ncclGetLastError.
NCCL_API ncclTeam_t ncclTeamWorld(ncclComm_t comm) {
  ncclTeam_t t{0, 0, 1};
  if (checkCommArg(comm, "ncclTeamWorld") != ncclSuccess) return t;
  t.nRanks = comm->nranks;
  t.rank = comm->rank;
  return t;
}
NCCL_API_ALIAS_OF(ncclTeam_t, ncclTeamWorld, (ncclComm_t))

NCCL_API ncclTeam_t ncclTeamLsa(ncclComm_t comm) {
  ncclTeam_t t{0, 0, 1};
  if (checkCommArg(comm, "ncclTeamLsa") != ncclSuccess) return t;
  LsaTeam l = lsaTeamOf(comm);
  t.nRanks = l.size;
  t.rank = l.rank;
  return t;
}
NCCL_API_ALIAS_OF(ncclTeam_t, ncclTeamLsa, (ncclComm_t))

NCCL_API ncclTeam_t ncclTeamRail(ncclComm_t comm) {
  ncclTeam_t t{0, 0, 1};
  if (checkCommArg(comm, "ncclTeamRail") != ncclSuccess) return t;
  LsaTeam l = lsaTeamOf(comm);
  t.nRanks = comm->nranks / l.size;
  t.rank = comm->rank / l.size;
  t.stride = l.size;
  return t;
}
NCCL_API_ALIAS_OF(ncclTeam_t, ncclTeamRail, (ncclComm_t))

NCCL_API int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank) {
  if (checkCommArg(comm, "ncclTeamRankToWorld") != ncclSuccess) return -1;
  return comm->rank + (rank - team.rank) * team.stride;
}
NCCL_API_ALIAS_OF(int, ncclTeamRankToWorld, (ncclComm_t, ncclTeam_t, int))

NCCL_API int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank) {
  if (checkCommArg(comm, "ncclTeamRankToLsa") != ncclSuccess) return -1;
  return lsaTeamOf(comm).rank + (rank - team.rank) * team.stride;
}
NCCL_API_ALIAS_OF(int, ncclTeamRankToLsa, (ncclComm_t, ncclTeam_t, int))

NCCL_API ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers, ncclLsaBarrierHandle_t* outHandle,
                                                      ncclDevResourceRequirements_t* outReq) {
  MCCL_API_BEGIN
  const char* call = "ncclLsaBarrierCreateRequirement";
  if (outHandle == nullptr || outReq == nullptr)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: %s is NULL", call, outHandle ? "outReq" : "outHandle");
  if (nBarriers < 0) return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: nBarriers = %d is negative", call, nBarriers);
  if (team.nRanks <= 0 || team.rank < 0 || team.rank >= team.nRanks)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: team = {nRanks %d, rank %d, stride %d} is not a team", call,
                    team.nRanks, team.rank, team.stride);
  std::memset(outReq, 0, sizeof *outReq);
  outReq->bufferSize = sizeof(uint32_t) * static_cast<size_t>(nBarriers) * (1 + static_cast<size_t>(team.nRanks));
  outReq->bufferAlign = 16;
  outReq->outBufferHandle = &outHandle->bufHandle;
  outHandle->bufHandle = 0;
  outHandle->nBarriers = nBarriers;
  return ncclSuccess;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclLsaBarrierCreateRequirement)

// The LL all-to-all (nccl_device/ll_a2a.h): a value of maxEltSize bytes takes a line per 8
// of them; a block's buffer is a header line and two halves of nSlots lines (16 bytes each).
NCCL_API int ncclLLA2ACalcSlots(int maxElts, int maxEltSize) {
  if (maxElts < 0 || maxEltSize < 0) {
    (void)MCCL_ERR(ncclInvalidArgument, nullptr, "ncclLLA2ACalcSlots: maxElts = %d and maxEltSize = %d must not be negative",
                   maxElts, maxEltSize);
    return -1;
  }
  const int64_t slots = static_cast<int64_t>(maxElts) * ((static_cast<int64_t>(maxEltSize) + 7) / 8);
  if (slots > INT32_MAX) {
    (void)MCCL_ERR(ncclInvalidArgument, nullptr, "ncclLLA2ACalcSlots: %d values of %d bytes need more than 2^31 slots",
                   maxElts, maxEltSize);
    return -1;
  }
  return static_cast<int>(slots);
}
NCCL_API_ALIAS(ncclLLA2ACalcSlots)

NCCL_API ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                                                 ncclDevResourceRequirements_t* outReq) {
  MCCL_API_BEGIN
  const char* call = "ncclLLA2ACreateRequirement";
  if (outHandle == nullptr || outReq == nullptr)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: %s is NULL", call, outHandle ? "outReq" : "outHandle");
  if (nBlocks < 0 || nSlots < 0)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: nBlocks = %d and nSlots = %d must not be negative", call, nBlocks,
                    nSlots);
  std::memset(outReq, 0, sizeof *outReq);
  outReq->bufferSize = static_cast<size_t>(nBlocks) * (1 + 2 * static_cast<size_t>(nSlots)) * 16;
  outReq->bufferAlign = 16;
  outReq->outBufferHandle = &outHandle->bufHandle;
  outHandle->bufHandle = 0;
  outHandle->nSlots = static_cast<uint32_t>(nSlots);
  return ncclSuccess;
  MCCL_API_END
}
NCCL_API_ALIAS(ncclLLA2ACreateRequirement)
