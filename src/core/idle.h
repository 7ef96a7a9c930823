// How a rank that waits for its peers on the host uses its core. It polls shared memory
// (or the engine's FIFOs) in a loop; where the node has a CPU for every rank, the poll that
// sees the peer's data first is the one that answers soonest, and a sched_yield between
// polls only delays it (the CG example on 2 ranks and 2 cores: 36 us an iteration with a
// yield after 64 empty polls, 29 us without, MPI 29 us; bench/results/host-2core-2026-12-04c.md).
// Where ranks outnumber CPUs, the peer may be waiting for this very core, and yielding
// soon is what lets it run (4 ranks on 2 cores), as Open MPI's mpi_yield_when_idle does.
#pragma once

namespace mccl {

// Whether waits of a communicator with nodeRanks ranks on this node yield soon
// (MCCL_IDLE_YIELD; auto: Open MPI's oversubscription verdict when mpirun gave one, else
// the job's or the communicator's ranks on this node against its online CPUs).
bool idleYieldsSoon(int nodeRanks);

// Empty polls (or engine passes) before every further one yields the core. Soon is after
// the first, as Open MPI yields after every empty progress pass: on 4 ranks and 2 cores,
// against yielding after 64, AllReduce of 8 - 512 B 1.29-1.31 -> 1.63-1.66x MPI, Send/Recv
// of 8 - 64 B 0.75-0.79 -> 0.91-0.97x (bench/results/host-2core-2026-12-07/).
constexpr unsigned kIdlePollsSoon = 1, kIdlePollsLate = 1u << 16;
inline unsigned idlePollsBeforeYield(bool soon) { return soon ? kIdlePollsSoon : kIdlePollsLate; }

}  // namespace mccl
