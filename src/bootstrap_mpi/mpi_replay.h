// The blocking calls libmccl_mpi runs as one mccl collective: waited for on the completion
// word their launch raises (core/completion.h), and, made again with the same arguments,
// replayed from a CUDA graph of that launch (mpi_replay.cc).
#pragma once

#include <mpi.h>

#include <cstddef>

#include "bootstrap_mpi/fn_ref.h"
#include "nccl.h"

namespace mccl {

// A blocking call's arguments when it runs as one mccl collective and nothing after it: its
// launch may raise a completion word (core/completion.h), and the call made again with the
// same arguments may replay a CUDA graph of that launch (Replays). Null for other calls.
struct OneCall {
  const char* call;  // the call's name, one literal a call site
  const void* send;
  const void* recv;
  size_t count;
  MPI_Datatype dt;
  MPI_Op op;
  int root;
  bool operator==(const OneCall& o) const {
    return call == o.call && send == o.send && recv == o.recv && count == o.count && dt == o.dt && op == o.op &&
           root == o.root;
  }
};

// The mccl call a routed call runs, on the stream it is given.
using Run = FnRef<ncclResult_t(cudaStream_t)>;

// Runs a blocking call that mccl took (run, on communicator c's stream s, device dev current)
// and waits for it, turning MPI's progress on comm: one's launch raises a completion word the
// wait spins on; a blocking call of at most MCCL_MPI_GRAPH_BYTES bytes is captured at its
// second sight and replayed from then on (a nonblocking one completed here is not: its
// request is the program's to reuse). one null: run is more than one collective (launched,
// waited for on the stream). *graph: a graph ran it.
ncclResult_t runAndWait(const char* call, size_t bytes, const OneCall* one, bool blocking, const Run& run,
                        MPI_Comm comm, ncclComm_t c, int dev, cudaStream_t s, bool* graph);

// MCCL_PROFILE: where the host's time goes in the blocking calls runAndWait launches or
// replays, from the route's entry (routeEntered, called first thing by the calling thread):
// to runAndWait (the route's checks, the communicator and its stream), the launch (mccl's
// enqueue, planning and kernel launch; or the word cleared and cudaGraphLaunch), and the wait
// (the kernel's run until its word rises, and MPI's progress); averages of each, launched and
// replayed apart, printed on stderr at the process's exit, the first kProfileWarmup calls of
// each left out. Calls captured at their second sight are not counted.
void routeEntered();

}  // namespace mccl
