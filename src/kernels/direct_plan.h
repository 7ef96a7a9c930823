// The direct path on the host: collectives whose buffers lie in symmetric windows, read
// and written in place in the peers' windows (kernels/direct.h), planned per operation
// and launched after a group's other kernels (kernels/gpu_datapath.cc).
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "core/redop.h"
#include "kernels/dev_work.h"
#include "kernels/direct.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

struct OpDesc;

// The kernels' operator for a reduction (PreMulSum and SumPostDiv are sums with extras).
inline DevRed devRed(RedKind k) {
  switch (k) {
    case RedKind::Prod: return kRedProd;
    case RedKind::Max: return kRedMax;
    case RedKind::Min: return kRedMin;
    default: return kRedSum;
  }
}

// True when op runs on the direct path, with w filled: the communicator is one node's GPUs
// (2 to kDirectMaxRanks), and the buffer every rank passes (the input of AllReduce,
// ReduceScatter and Reduce, the output of AllGather and Broadcast) lies in a window all
// ranks registered with NCCL_WIN_COLL_SYMMETRIC. Every rank decides alike without talking.
bool planDirect(ncclComm* comm, const OpDesc& op, DirectWork* w);

// Launches the direct works of a group on stream, in call order, once per arithmetic type.
ncclResult_t launchDirect(ncclComm* comm, const DevComm& devComm, const std::vector<DirectWork>& works, int threads,
                          cudaStream_t stream);

}  // namespace mccl
