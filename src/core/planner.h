// The planner: which algorithm, protocol and how many channels an operation uses, and a
// cost model (also behind ncclGroupSimulateEnd).
#pragma once

#include "core/op.h"

struct ncclComm;

namespace mccl {

// Estimated microseconds of op on comm (alpha-beta model of the chosen algorithm).
double estimateOpTimeUs(const ncclComm* comm, const OpDesc& op);

}  // namespace mccl
