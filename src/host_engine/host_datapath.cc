#include "host_engine/host_datapath.h"

#include "core/comm.h"
#include "core/error.h"

namespace mccl {

ncclResult_t HostDataPath::submit(std::vector<OpDesc>& ops, std::unique_ptr<Work>*) {
  return MCCL_ERR(ncclInvalidUsage, comm_, "nccl%s on a host communicator: not implemented yet",
                  ops.empty() ? "?" : opKindName(ops[0].kind));
}

}  // namespace mccl
