// The user-buffer path: a peer on this node writes into this rank's own output buffer
// (ncclCommRegister'ed, or any cudaMalloc'ed buffer: MCCL_USER_BUFFERS=2, the default) instead of
// into the FIFO, so the Simple protocol moves each byte once (kernels/work/dev_work.h, "User
// buffers", says how the two kernels agree per call).
//
// The address a receiver offers must already be mapped in the sender's process. The
// receiver's host has its allocation imported there before its kernel runs: each process
// runs an import service, a thread that only opens (and closes) CUDA IPC handles and answers,
// reached over a node-local socket named by the process's hash. It never calls MPI and takes
// no lock of a communicator, so a receiver may block on it whatever the sender's own threads
// are doing (in an MPI call, capturing a graph, waiting on a stream). Never a rendezvous of
// the two ranks' main threads: one rank enqueuing while the other waits in MPI for it would
// deadlock.
//
// Mappings are cached by (peer process, allocation) and checked per call against the
// allocation's CU_POINTER_ATTRIBUTE_BUFFER_ID: an address freed and allocated again is
// imported again (and the peer closes the old mapping). ncclCommDeregister closes the peers'
// mappings of the registration's allocation. No CUDA hook tells of a cudaFree, and a peer's
// mapping keeps a freed allocation's memory alive: a thread of the owner's process looks at
// its exported allocations every 100 ms and has the peers close the mappings of those freed.
// A plain (not registered) buffer is imported the second time a call uses it, so a buffer
// allocated for one call and freed never costs an import.
#pragma once

#include <cstddef>
#include <cstdint>

struct ncclComm;

namespace mccl {

// Starts this process's import service once (later calls return the first result), named
// by localProcessHash() (the PeerInfo::processHash peers know). A process whose service
// cannot start still offers its own buffers; peers find no service and use the FIFO.
bool startImportService();

// [p, p + bytes) of comm's GPU as rank peer's process reaches it (peer: a rank of this node
// whose process's import service maps the allocation), or null where it cannot be had (not
// one CUDA allocation of comm's device, not shareable through CUDA IPC, no service, the
// peer refused, being imported by another thread) or not yet: an allocation seen for the
// first time is imported at once only when kept (registered, or captured into a graph,
// which keeps it as long as the graph lives), else the next time. A rank of this process
// gets p itself where it reaches it: on the same GPU, or on another for a cudaMalloc'ed
// allocation (peer access is enabled with the connection). Thread-safe; a cache hit costs
// one driver query; the peer's service is asked without a lock held.
void* userBufferAtPeer(const ncclComm* comm, int peer, const void* p, size_t bytes, bool kept);

// What this rank offers peer of [p, p + bytes) under MCCL_USER_BUFFERS: userBufferAtPeer
// where the mode lets the buffer take the path (0 none; 1 registered buffers only; 2 also
// cudaMalloc'ed ones, kept at once when registered or captured into a graph), else null.
void* offerUserBuffer(const ncclComm* comm, int peer, const void* p, size_t bytes, bool capturing);

// Closes every peer's mapping of the allocations overlapping [base, base + bytes) (a
// deregistered buffer), waiting at most a few seconds per peer process.
void forgetUserBuffer(const void* base, size_t bytes);

// This process's import service: the peers' allocations it maps now, and how many it has
// opened since the process started (tests).
size_t importedUserBuffers();
size_t userBufferImportsMade();

}  // namespace mccl
