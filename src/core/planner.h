// The planner: which algorithm an operation uses, on how many channels, in which chunks,
// and the cost model behind the choice (also behind ncclGroupSimulateEnd).
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/schedule.h"
#include "core/op.h"

struct ncclComm;

namespace mccl {

// How a GPU operation moves its data (dev_work.h): LL for small and LL128 for medium messages
// between GPUs of one node, Simple (the schedule's FIFOs) for the rest and for host
// communicators.
enum class Proto : uint8_t { Simple, LL, LL128 };

struct PlanChoice {
  Algo algo = Algo::Ring;
  Proto proto = Proto::Simple;
  int nchannels = 1;
  int64_t chunk = 0;  // elements per step
  int64_t align = 1;  // elements
  bool twoShot = false;  // LL128 AllReduce in two hops (DevWork::twoShot)
};

// Chooses for op on comm, given the bytes one FIFO slot holds.
PlanChoice choosePlan(const ncclComm* comm, const OpDesc& op, size_t slotBytes);

// Units a channel needs before a Simple collective's channels take units as they free up
// (DevWork::units; gpu_plan.cc, unitsOf). With fewer, the last units leave most channels
// idle: on 2 x H200 at 24 channels a Broadcast of 32 MiB (32 units) took 135.9 us against
// 120.8 with fixed ranges, one of 128 MiB (128 units) 386.9 against 453.7
// (bench/results/gpu-2xH200-2026-11-25). The planner picks steps small enough for it.
constexpr int64_t kUnitsPerChannel = 4;

// The schedule of op at this rank for choice.
Schedule makeSchedule(const ncclComm* comm, const OpDesc& op, const PlanChoice& choice);

// Estimated microseconds of op on comm.
double estimateOpTimeUs(const ncclComm* comm, const OpDesc& op);

// Estimated microseconds of one group's operations on comm (ncclGroupSimulateEnd):
// collectives one after the other; the group's Send/Recv (also those AlltoAll, Gather and
// Scatter become) run at once, limited by the busier direction.
double estimateGroupTimeUs(const ncclComm* comm, const std::vector<OpDesc>& ops);

}  // namespace mccl
