#include "core/datapath.h"

#include "core/comm.h"
#include "core/error.h"
#include "host_engine/host_datapath.h"
#ifdef MCCL_HAVE_CUDA
#include "kernels/launch/gpu_datapath.h"
#endif

namespace mccl {

ncclResult_t createDataPath(ncclComm* comm, std::unique_ptr<DataPath>* out) {
  if (comm->isHost()) {
    out->reset(new HostDataPath(comm));
    return ncclSuccess;
  }
#ifdef MCCL_HAVE_CUDA
  return createGpuDataPath(comm, out);
#else
  return MCCL_ERR(ncclInternalError, comm, "GPU communicator in a build without CUDA");
#endif
}

}  // namespace mccl
