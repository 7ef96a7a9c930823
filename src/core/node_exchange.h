// The init exchange of MPI-backed communicators by node (issue 17): each rank receives the
// records of its own node's ranks and a few O(1) collectives' results, not every rank's
// record, and builds the compact Topology (core/peer_info.h).
//
//   1. agree   MPI_Iallreduce(MIN) of "may block in MPI now" (blocking init, or init on
//              its own thread). A nonblocking init polled from the user's thread says no,
//              and then every rank takes the full exchange (one MPI_Iallgather of the
//              64-byte record), so polled init never blocks and mixed configs still agree.
//              The agreement is waited for like every bootstrap wait (timeout, abort):
//              once it is done every rank is in the exchange, so the blocking
//              MPI_Comm_split below cannot wait for a rank that never comes.
//   2. node    MPI_Comm_split by a colour from the host hash (MCCL_HOST_ID fake nodes
//              included), MPI_Allgather of the records inside it; records whose full hash
//              differs (a colour collision) are dropped.
//   3. facts   one MPI_Allreduce(MAX) of 5 int64 over the whole communicator: contiguity,
//              largest node, smallest node other than the last, rank 0's watchdog secret,
//              whether a process drives one device for two ranks.
//   4. only when the mapping is not contiguous with equal nodes (scattered):
//              MPI_Allgather of each rank's node leader (4 bytes per rank) for the
//              fallback ring tables.
#pragma once

#include <mpi.h>

#include "core/peer_info.h"
#include "nccl.h"

namespace mccl {

class MpiBootstrap;

class NodeExchange {
 public:
  explicit NodeExchange(MpiBootstrap* b);
  ~NodeExchange();
  NodeExchange(const NodeExchange&) = delete;
  NodeExchange& operator=(const NodeExchange&) = delete;
  // Starts the agreement; mayBlock: this rank may block in MPI collectives now.
  ncclResult_t start(bool mayBlock);
  // *done once every rank answered; *byNode: every rank may block, take run().
  ncclResult_t test(bool* done, bool* byNode);
  // Steps 2-4 (blocking MPI collectives among ranks that are all here).
  ncclResult_t run(const PeerInfo& me, Topology* out);

  // Bytes the agreement received (counted into the exchange's bytes).
  static constexpr size_t kAgreeBytes = sizeof(int);

 private:
  MpiBootstrap* b_;
  MPI_Request req_ = MPI_REQUEST_NULL;
  int* buf_;  // the agreement's send and receive ints (left to MPI if still pending)
};

}  // namespace mccl
