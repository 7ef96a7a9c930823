// ncclCommShrink and ncclCommRevoke (NCCL 2.28): a communicator of the surviving ranks,
// made without the excluded ones, also after a rank died in the middle of an operation.
//
// What a call does and answers (docs/DESIGN.md, "Shrink and revoke"):
// * ncclCommRevoke(comm, 0): local, not collective. Stops what comm has in flight (the
//   data path's abort flag: GPU kernels and host waits leave) and returns once comm is
//   quiescent, also for a nonblocking communicator (ncclCommGetAsyncError then says
//   ncclSuccess, the state NCCL reaches when its revoke completes). Afterwards collectives,
//   point to point and ncclCommFinalize return ncclInvalidUsage; ncclCommSplit,
//   ncclCommShrink, ncclCommDestroy and ncclCommAbort work. Revoking twice, revoking a
//   finalized communicator and revokeFlags other than NCCL_REVOKE_DEFAULT are
//   ncclInvalidArgument.
// * ncclCommShrink: the ranks not in excludeRanksList call it (an excluded rank calling it
//   is ncclInvalidArgument, as in NCCL) and get a communicator of themselves, ranked in
//   parent-rank order. Only they talk to each other (Bootstrap::shrink). NCCL_SHRINK_DEFAULT
//   wants a healthy (or revoked) parent; NCCL_SHRINK_ABORT first revokes the parent, so it
//   also works when operations failed or a rank is dead; the parent stays revoked.
//   excludeRanksCount 0 is accepted (a copy of the parent; NCCL 2.27 refuses it).
#include <cstdint>
#include <vector>

#include "bootstrap_mpi/bootstrap.h"
#include "core/comm.h"
#include "core/datapath.h"
#include "core/error.h"
#include "core/init.h"

using namespace mccl;

namespace {

// The ranks that stay, ascending; every bad list is ncclInvalidArgument naming the entry.
ncclResult_t survivorsOf(ncclComm* comm, const int* list, int count, const char* call,
                         std::vector<int>* members) {
  const int n = comm->nranks;
  if (count < 0 || count > n)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: excludeRanksCount = %d is out of range 0..%d (nranks)",
                    call, count, n);
  if (count > 0 && list == nullptr)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: excludeRanksList is NULL but excludeRanksCount = %d",
                    call, count);
  std::vector<char> excluded(static_cast<size_t>(n), 0);
  for (int i = 0; i < count; ++i) {
    int r = list[i];
    if (r < 0 || r >= n)
      return MCCL_ERR(ncclInvalidArgument, comm,
                      "%s: excludeRanksList[%d] = %d is not a rank of the communicator (0..%d)", call, i,
                      r, n - 1);
    if (excluded[r])
      return MCCL_ERR(ncclInvalidArgument, comm, "%s: excludeRanksList[%d] = %d appears twice", call, i, r);
    excluded[r] = 1;
  }
  if (count == n)
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: excludeRanksList names all %d ranks; no communicator would be left", call, n);
  if (excluded[comm->rank])
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: this rank (%d) is in excludeRanksList; excluded ranks must not call "
                    "ncclCommShrink (they destroy or abort the parent)",
                    call, comm->rank);
  members->clear();
  for (int r = 0; r < n; ++r)
    if (!excluded[r]) members->push_back(r);
  return ncclSuccess;
}

// Stops the operations comm has in flight and waits until they have left: the abort flag
// makes GPU kernels and host waits give up, flush waits for the last kernel (bounded by
// MCCL_TIMEOUT). Its error, if any, is what the aborted kernel reports and is not the caller's.
void revokeNow(ncclComm* comm) {
  comm->revoked.store(true);
  if (comm->dataPath) {
    comm->dataPath->abort();
    (void)comm->dataPath->flush();
  }
}

}  // namespace

NCCL_API ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  MCCL_API_BEGIN
  const char* call = "ncclCommRevoke";
  MCCL_CHECK(checkCommArg(comm, call));
  if (revokeFlags != NCCL_REVOKE_DEFAULT)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: revokeFlags = %d must be NCCL_REVOKE_DEFAULT (0)", call,
                    revokeFlags);
  if (comm->revoked.load())
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: the communicator is already revoked", call);
  if (comm->finalized.load())
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: the communicator was finalized; destroy it", call);
  if (comm->initTask) {
    ncclResult_t r = progressInit(comm);
    if (r == ncclInProgress)
      return MCCL_ERR(ncclInvalidUsage, comm,
                      "%s: the communicator is still being initialised; poll ncclCommGetAsyncError "
                      "first (or ncclCommAbort it)",
                      call);
    if (r != ncclSuccess) return r;
  }
  revokeNow(comm);
  return ncclSuccess;
  MCCL_API_END
}

NCCL_API ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                     ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  MCCL_API_BEGIN
  const char* call = "ncclCommShrink";
  MCCL_CHECK(checkCommArg(comm, call));
  if (newcomm == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: newcomm is NULL", call);
  if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT)
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: shrinkFlags = %d is not NCCL_SHRINK_DEFAULT (0) or NCCL_SHRINK_ABORT (1)", call,
                    shrinkFlags);
  std::vector<int> members;
  MCCL_CHECK(survivorsOf(comm, excludeRanksList, excludeRanksCount, call, &members));
  CommConfig cfg;
  MCCL_CHECK(parseConfigOver(config, comm->config, call, &cfg));
  // NCCL_SHRINK_ABORT: the parent's operations are stopped first and it stays revoked, so
  // whatever failed on it (a dead rank) does not stop the shrink.
  if (shrinkFlags == NCCL_SHRINK_ABORT && !comm->initTask && !comm->aborted.load() &&
      !comm->finalized.load() && !comm->revoked.load())
    revokeNow(comm);
  if (ncclResult_t r = comm->checkUsable(call, /*management=*/true); r != ncclSuccess) {
    if (r == ncclInvalidUsage) return r;
    return MCCL_ERR(r, comm,
                    "%s: the parent communicator failed earlier (%s); shrink it with "
                    "NCCL_SHRINK_ABORT or revoke it first",
                    call, comm->failureMessage().c_str());
  }
  *newcomm = nullptr;
  // Equal on every survivor without talking: the set of survivors and how many shrinks to
  // that same set came before (a per-rank count would differ between ranks that were
  // excluded from different earlier shrinks).
  uint64_t setHash = 0xcbf29ce484222325ull;
  for (int r : members) setHash = (setHash ^ static_cast<uint64_t>(r + 1)) * 0x100000001b3ull;
  const uint64_t index = (setHash ^ (setHash >> 32)) + 0x9e3779b9ull * comm->shrinkCounts[setHash]++;
  std::unique_ptr<Bootstrap> child;
  if (ncclResult_t r = comm->bootstrap->shrink(members, index, &child); r != ncclSuccess) return r;
  InitParams p;
  p.source = InitParams::Source::Ready;
  p.rank = child->rank();
  p.nranks = child->size();
  p.cudaDev = comm->cudaDev;
  p.bootstrap = std::move(child);
  p.commHash = comm->commHash ^ setHash ^ (0xc2b2ae3d27d4eb4full * (index + 1));
  p.call = call;
  ncclComm* c = createComm(cfg);
  ncclResult_t r = launchInit(c, std::move(p), /*deferToGroup=*/false);
  if (r != ncclSuccess && r != ncclInProgress) {
    destroyComm(c, /*abortFirst=*/true);  // a failed shrink leaves nothing to clean up
    return r;
  }
  *newcomm = c;
  return r;
  MCCL_API_END
}

NCCL_API_ALIAS(ncclCommRevoke)
NCCL_API_ALIAS(ncclCommShrink)
