#include "kernels/gpu_datapath.h"

#include "core/comm.h"
#include "core/error.h"

namespace mccl {
namespace {
class GpuDataPath : public DataPath {
 public:
  explicit GpuDataPath(ncclComm* comm) : DataPath(comm) {}
  ncclResult_t submit(std::vector<OpDesc>& ops, std::unique_ptr<Work>*) override {
    return MCCL_ERR(ncclInvalidUsage, comm_, "nccl%s on a GPU communicator: not implemented yet",
                    ops.empty() ? "?" : opKindName(ops[0].kind));
  }
};
}  // namespace

ncclResult_t createGpuDataPath(ncclComm* comm, std::unique_ptr<DataPath>* out) {
  out->reset(new GpuDataPath(comm));
  return ncclSuccess;
}

}  // namespace mccl
