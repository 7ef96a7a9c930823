// Hang reports for every communicator of the process (mcclDumpState, SIGUSR2).
#pragma once

namespace mccl {

// Writes one line per live communicator: the operation it is in and the peers it waits for.
void dumpState();
// With MCCL_DUMP_SIGNAL=1, makes SIGUSR2 call dumpState() (once per process).
void installDumpSignal();

}  // namespace mccl
