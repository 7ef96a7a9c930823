// Calls of the NCCL 2.28 API that this version of mccl does not implement: the device API's
// GPU-initiated network (GIN) barriers and the LL all-to-all. They are defined (a program
// built for NCCL 2.28 links, and a call never falls through to another library that happens
// to be loaded), check their arguments like any call, and answer ncclInvalidUsage with a
// sentence. (Windows and device communicators: core/window.cc.)
// Also the deprecated ncclResetDebugInit, kept for the ABI.
#include "core/comm.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/knobs.h"

#include <nccl_device.h>

using namespace mccl;

namespace {

ncclResult_t unsupported(ncclComm* comm, const char* call, const char* what) {
  return MCCL_ERR(ncclInvalidUsage, comm,
                  "%s: %s is not supported by this version of mccl (see the README's status table)",
                  call, what);
}

}  // namespace

// The requirement builders of the GIN and LL all-to-all parts of the device API.
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
