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

// Bytes of each peer's data an LL channel (block) takes: what the lean LL kernel's fastest
// form moves in one step (a line of 8 data bytes per thread of a 512-thread block,
// llLeanLines). 8 KiB on one channel ran the general LL kernel, 1.5-2.5 us slower (2 x H100,
// AllReduce 16 KiB: 4 channels 5.3 us against 2 channels' 6.8; ReduceScatter 64 KiB 5.7
// against 7.9; bench/results/gpu-2xH100-2026-11-25/llsweep.md). It costs blocks: an
// AllReduce of 32 KiB takes 8 (NCCL 4), of 128 KiB 32 (NCCL 16). Up to this much a peer,
// an LL launch is one block (the copy engines' threshold under NCCL_CTA_POLICY_ZERO,
// kernels/plan/direct_plan.cc copyEnginesMove).
constexpr size_t kLlBytesPerChannel = 4 * 1024;

// Threads a block of the GPU kernels has: NCCL_NTHREADS rounded down to a multiple of 64,
// 64 to kGpuMaxThreads (512 where it is unset).
constexpr int kGpuMaxThreads = 512;
int launchThreads();
// The fewest a block needs to serve a peer's Sends and Recvs in two halves, each with a
// posting warp and movers (kernels/plan/gpu_plan.cc joinBothWays): below, a block a direction.
constexpr int kBothWaysMinThreads = 256;

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
