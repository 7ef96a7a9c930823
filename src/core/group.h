// ncclGroupStart / ncclGroupEnd: the calling thread's group (NCCL's semantics are per
// thread, so this is the one thread-local object of the library).
#pragma once

#include <functional>

#include "core/op.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

int groupDepth();
ncclResult_t groupStart();
// simulate: ncclGroupSimulateEnd (check simInfo, fill in the estimate, drop the operations,
// run nothing but the group's deferred communicator inits).
ncclResult_t groupEnd(bool simulate = false, ncclSimInfo_t* simInfo = nullptr);

// Inside a group: queue; the outermost ncclGroupEnd runs them.
void groupAddInit(ncclComm* comm);
void groupAddOp(ncclComm* comm, const OpDesc& op);
// A collective setup call (ncclCommWindowRegister, ncclDevCommCreate) made inside a group:
// it runs at the outermost ncclGroupEnd, after the group's inits and before its
// operations, each communicator's calls in order on a thread of their own, so that one
// thread may make the call for several communicators (ranks) that rendezvous.
void groupAddSetup(ncclComm* comm, std::function<ncclResult_t()> call);
// Runs when the outermost ncclGroupEnd is through with the group's operations: launched
// (GPU: later work on their streams is ordered after them) or done (host), or dropped with
// a failed group. Releases what a call staged for them (in-place AlltoAll's input copy).
void groupAddAfter(std::function<void()> fn);
// An error inside a group fails the whole group at ncclGroupEnd.
void groupSetError(ncclResult_t r);
// A communicator destroyed or aborted while queued is dropped from the group.
void groupForget(ncclComm* comm);

// Runs one operation now (a group of one).
ncclResult_t runSingleOp(ncclComm* comm, const OpDesc& op);

}  // namespace mccl
