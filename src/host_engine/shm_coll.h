// Small collectives of a host communicator whose ranks share one node, in one shared-memory
// segment: every rank writes its contribution and a sequence number into its own slot, then
// reads the slots it needs and reduces or copies locally (one-shot). One cache-line handoff
// per peer instead of a ring's FIFO round trips; the answer to MPI's shared-memory
// collectives for 8 B .. tens of KiB (docs/DESIGN.md, "Host engine").
//
// Segment (POSIX shared memory, made on the first operation that uses it; its name comes
// from a random token rank 0 sent in the init exchange):
//   header          attach count, slot size and rank count (checked: equal on every rank)
//   cell[r][c]      64 per rank: 8 cache lines, each 56 B of rank r's data and the
//                   operation's sequence number (the reader polls every line it needs at
//                   once, so they travel in parallel); data to 168 B goes here, in up to 3
//                   lines; the first line's number also announces larger data
//   packed[r][c]    64 per rank, 512 B each: rank r's data from 169 B to 512 B, contiguous
//   done[r]         the last operation rank r has finished reading
//   slot[r][d]      D per rank (min(1 MiB, 4 MiB / ranks) of slots, 2 <= D <= 16): rank r's
//                   data above 512 B
// Operation s (1, 2, ... on every rank, in call order) uses cell and packed cell s % 64 and
// slot s % D. A rank writes them only when every rank has finished the operation that used
// them last (done >= s - 64, or s - D for a slot), so no reader ever sees its data
// overwritten, and the done counters are read only every few operations. Every rank reduces
// the contributions in rank order, so all ranks get the same bits.
//
// Which operations come here (the same answer on every rank for the same call): AllReduce,
// Broadcast, Reduce, AllGather and ReduceScatter, every datatype and operator, when what one
// rank writes fits a slot (MCCL_HOST_SHM_MAX_BYTES) and every rank is on this node; on a
// one-rank communicator every size (a local copy). NCCL_ALGO can exclude it ("oneshot"),
// NCCL_SHM_DISABLE=1 turns it off.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/op.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

class ShmSegment;

// One operation on the segment: a state machine that never blocks.
struct ShmCollOp {
  OpDesc op;
  uint64_t s = 0;  // sequence number on the segment
  int state = 0;   // 0: waiting for its cell or slot to be free, 1: waiting for peers' data, 2: done
  int waitRank = -1;  // the rank it waits for (hang reports)
  int piece = 0;      // the next piece to read (data in a packed cell or a slot)
  bool done() const { return state == 2; }
  std::string describe() const;
};

class ShmColls {
 public:
  explicit ShmColls(ncclComm* comm);
  ~ShmColls();
  ShmColls(const ShmColls&) = delete;
  ShmColls& operator=(const ShmColls&) = delete;

  // Decides whether the path is on (after the init exchange: every rank knows every node).
  void setup();
  bool on() const { return maxBytes_ > 0; }
  // Whether op comes here (the same answer on every rank for the same call).
  bool takes(const OpDesc& op) const;
  // takes(op), and the segment is mapped (the first time: made; where /dev/shm cannot give
  // it, the path turns off with a warning and false).
  bool use(const OpDesc& op);
  // Gives op its sequence number (in call order).
  void start(const OpDesc& op, ShmCollOp* out);
  // Advances op without blocking.
  ncclResult_t progress(ShmCollOp& o);
  // A lone operation, run to completion on the caller's thread with the engine's checks
  // (abort, lost peer, MCCL_TIMEOUT).
  ncclResult_t runAlone(const OpDesc& op, const std::atomic<bool>& aborted);

 private:
  ncclResult_t join();  // checks the segment's header and counts this rank in
  ncclResult_t runLocal(const OpDesc& op);

  ncclComm* comm_;
  MPI_Comm mpiComm_ = MPI_COMM_NULL;  // kept progressing while a lone operation waits
  size_t maxBytes_ = 0;  // bytes one rank writes, at most (0: off)
  uint64_t nextSeq_ = 1;
  uint64_t minDone_ = 0;  // every rank's done counter is at least this (last seen)
  bool joined_ = false;   // this rank is counted in the segment
  bool ready_ = false;    // every rank has attached
  std::shared_ptr<ShmSegment> seg_;
};

// Operations run on the segment so far in this process (tests check which path ran).
uint64_t hostShmCollCount();

}  // namespace mccl
