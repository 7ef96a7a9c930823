// Calls of the NCCL 2.28 API that this version of mccl does not implement: symmetric memory
// windows and the device API's communicators. They are defined (a program built for NCCL
// 2.28 links, and a call never falls through to another library that happens to be loaded),
// check their arguments like any call, and answer ncclInvalidUsage with a sentence.
// Also the deprecated ncclResetDebugInit, kept for the ABI.
#include "core/comm.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/knobs.h"

using namespace mccl;

// The device API's types (nccl_device.h), of which these calls only pass pointers (and
// one small struct by value, ncclTeam, laid out as NVIDIA's).
struct ncclDevComm;
struct ncclDevCommRequirements;
struct ncclDevResourceRequirements;
struct ncclLsaBarrierHandle;
struct ncclGinBarrierHandle;
struct ncclLLA2AHandle;
struct ncclTeam {
  int nRanks, rank, stride;
};

namespace {

ncclResult_t unsupported(ncclComm* comm, const char* call, const char* what) {
  return MCCL_ERR(ncclInvalidUsage, comm,
                  "%s: %s is not supported by this version of mccl (see the README's status table)",
                  call, what);
}

}  // namespace

NCCL_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size,
                                             ncclWindow_t* win, int winFlags) {
  MCCL_API_BEGIN
  const char* call = "ncclCommWindowRegister";
  MCCL_CHECK(checkCommArg(comm, call));
  if (win == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: win is NULL", call);
  if (buff == nullptr && size > 0)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: buff is NULL with size = %zu", call, size);
  if (winFlags != NCCL_WIN_DEFAULT && winFlags != NCCL_WIN_COLL_SYMMETRIC)
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: winFlags = %d is not NCCL_WIN_DEFAULT or NCCL_WIN_COLL_SYMMETRIC", call,
                    winFlags);
  *win = nullptr;
  return unsupported(comm, call, "memory window registration");
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommWindowRegister)

NCCL_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  MCCL_API_BEGIN
  const char* call = "ncclCommWindowDeregister";
  MCCL_CHECK(checkCommArg(comm, call));
  // No window was ever handed out, so none can be valid.
  if (win == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: win is NULL", call);
  return unsupported(comm, call, "memory window registration");
  MCCL_API_END
}
NCCL_API_ALIAS(ncclCommWindowDeregister)

NCCL_API ncclResult_t ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements* reqs,
                                        ncclDevComm* outDevComm) {
  MCCL_API_BEGIN
  const char* call = "ncclDevCommCreate";
  MCCL_CHECK(checkCommArg(comm, call));
  if (reqs == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: reqs is NULL", call);
  if (outDevComm == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: outDevComm is NULL", call);
  return unsupported(comm, call, "the device API (nccl_device.h)");
  MCCL_API_END
}

NCCL_API ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm* devComm) {
  MCCL_API_BEGIN
  const char* call = "ncclDevCommDestroy";
  MCCL_CHECK(checkCommArg(comm, call));
  if (devComm == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: devComm is NULL", call);
  return unsupported(comm, call, "the device API (nccl_device.h)");
  MCCL_API_END
}

// The requirement builders of the device API's host side: a device communicator can never
// be made, so neither can what it would need.
NCCL_API ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam team, int nBarriers,
                                                      ncclLsaBarrierHandle* outHandle,
                                                      ncclDevResourceRequirements* outReq) {
  MCCL_API_BEGIN
  const char* call = "ncclLsaBarrierCreateRequirement";
  if (outHandle == nullptr || outReq == nullptr)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: %s is NULL", call, outHandle ? "outReq" : "outHandle");
  if (nBarriers < 0) return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: nBarriers = %d is negative", call, nBarriers);
  return unsupported(nullptr, call, "the device API (nccl_device.h)");
  MCCL_API_END
}

NCCL_API ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam team, int nBarriers,
                                                      ncclGinBarrierHandle* outHandle,
                                                      ncclDevResourceRequirements* outReq) {
  MCCL_API_BEGIN
  const char* call = "ncclGinBarrierCreateRequirement";
  MCCL_CHECK(checkCommArg(comm, call));
  if (outHandle == nullptr || outReq == nullptr)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: %s is NULL", call, outHandle ? "outReq" : "outHandle");
  if (nBarriers < 0) return MCCL_ERR(ncclInvalidArgument, comm, "%s: nBarriers = %d is negative", call, nBarriers);
  return unsupported(comm, call, "the GPU-initiated network (GIN) of the device API");
  MCCL_API_END
}

NCCL_API ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle* outHandle,
                                                 ncclDevResourceRequirements* outReq) {
  MCCL_API_BEGIN
  const char* call = "ncclLLA2ACreateRequirement";
  if (outHandle == nullptr || outReq == nullptr)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: %s is NULL", call, outHandle ? "outReq" : "outHandle");
  if (nBlocks <= 0 || nSlots <= 0)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: nBlocks = %d and nSlots = %d must be positive", call,
                    nBlocks, nSlots);
  return unsupported(nullptr, call, "the device API (nccl_device.h)");
  MCCL_API_END
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
NCCL_API void ncclResetDebugInit() {
  try {
    knobsReload();
    logReset();
  } catch (...) {
  }
}
NCCL_API_ALIAS(ncclResetDebugInit)
#pragma GCC diagnostic pop
