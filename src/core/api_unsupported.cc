// Calls of the NCCL 2.28 API that this version of mccl does not implement: the device API's
// GPU-initiated network (GIN) barriers. They are defined (a program
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

// The requirement builder of the GIN barriers of the device API.
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
NCCL_API_ALIAS(ncclGinBarrierCreateRequirement)

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
