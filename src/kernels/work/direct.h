// Collectives on symmetric windows (NCCL_WIN_COLL_SYMMETRIC): every rank of one node reads
// its peers' input, or writes its peers' output, in place over NVLink (CUDA IPC mappings of
// the windows); no FIFO, no copy through a connection. Plain data shared by host code
// (direct_plan.cc plans the works) and device code (direct_kernel.cu runs them).
//
// A work is bracketed by two barriers of its block with the same block of every peer:
// on entry (each peer's kernel has started, so its input is written and its output no
// longer used by what came before it on its stream) and on exit (each peer is done with
// this rank's buffers: reads finished, writes visible). A barrier is one flag store into
// each peer's barrier array and a spin on this rank's own: flags count barriers per block
// and never reset, so a flag at or above the target means the peer got there.
//
// What each collective does (block b of n works on its share of the elements):
//   AllReduce one-shot  read every rank's input, reduce in rank order, write own output
//                       (out of place: the input is not overwritten while peers read it)
//   AllReduce two-shot  rank r reduces the r-th part from every input and writes it into
//                       every rank's output (in place too: only rank r touches part r)
//   ReduceScatter       read the own part of every input, reduce, write own output
//   Reduce              the root reads every input, reduces, writes its output
//   AllGather           write own input into every rank's output at its place
//   Broadcast           the root writes its input into every rank's output
// Every rank reduces in the same order, so results agree bit for bit across ranks.
//
// Plain buffers (DirectWork::plain): the same works on buffers that are no window (any
// cudaMalloc'ed or registered buffer, ipc_transport/user_buffers.h), on a communicator of
// one node's GPUs. No host knows a peer's buffers, so each block brings them with its entry
// barrier, on the LL connection of its channel with each peer (kernels/work/dev_work.h): there
// its LL region's header, which the LL protocol leaves unused, holds three lines that carry
// a 64-bit word each in LL's 16-byte form (two copies of a flag beside the data, one
// store, no fence): this rank's input and output as the peer maps them (the host found
// them: DirectWork::in[p], out[p]; null where the peer does not map them, a buffer's first
// use or memory CUDA IPC cannot share), then the exit's done line. A work takes
// kPlainSteps steps of each connection (both ends count alike), whose flag its lines
// carry. Where an offer is null, the data a peer would have read or written in place
// travels through that connection's FIFO slots instead, as LL lines of the same steps
// (staged): the owner of an input that is not offered writes the part each peer reads
// into it, and a writer whose peer's output is not offered writes its part there, which
// the peer copies out after the exit. Both ends of a pair know the offer, so each pair
// decides alike without another round; a work's staged bytes per channel and peer fit
// its steps' slots (kPlainRoleLines), which the host's plan checks.
#pragma once

#include <stdint.h>

#include "kernels/work/dev_work.h"

namespace mccl {

constexpr int kDirectMaxRanks = 8;      // LSA members a direct work serves
constexpr int kDirectMaxChannels = 32;  // blocks of a direct launch (barrier slots per rank)
// Bytes of a rank's barrier array: a flag per channel and LSA member.
constexpr uint64_t kDirectFlagBytes = sizeof(uint64_t) * kDirectMaxChannels * kDirectMaxRanks;

// kDirectCopyEngine: AllGather and Broadcast whose bytes the copy engines move
// (cudaMemcpyAsync into the peers' windows, no SM), between two one-block barrier kernels;
// such works never reach the direct kernel (direct_plan.cc launchCopyEngines).
enum DirectAlgo : uint8_t { kDirectOneShot = 0, kDirectTwoShot = 1, kDirectCopyEngine = 2 };

struct DirectWork {
  uint8_t* in[kDirectMaxRanks];   // each member's input as reached here (own: the local one)
  uint8_t* out[kDirectMaxRanks];  // each member's output as reached here
  uint64_t count;                 // elements: the vector, or per rank (AllGather, ReduceScatter)
  uint64_t scalarBits;            // PreMulSum scalar (the same on every rank: ncclAvg)
  const void* scalarPtr;          // or in device memory
  int32_t postDiv;                // integer ncclAvg: divide the final result
  int16_t nchannels;              // blocks that run this work
  uint8_t coll;                   // Coll
  uint8_t algo;                   // DirectAlgo (AllReduce)
  uint8_t type;                   // ncclDataType_t
  uint8_t red;                    // DevRed
  uint8_t premul;                 // multiply every input by the scalar (float ncclAvg)
  int8_t root;                    // Broadcast, Reduce: the root's LSA rank
  uint8_t esize;                  // bytes of an element
  uint8_t plain;                  // buffers that are no window (above): in[p], out[p] (p not
                                  // this rank) are this rank's as p maps them, or null
  uint8_t pad[2];
};

// Plain buffers: the steps a work takes on each LL connection it uses (every slot, so a
// staged part fills up to all of them), the header lines (byte offsets in the receiver's
// region, DevConn::tail), and the LL lines a staged part may take per channel and peer:
// one role (a part read from an input, or written into an output) takes every slot; a
// two-shot AllReduce's two roles half of them each (its input's part from slot 0, its
// result's from kPlainSteps / 2).
constexpr int kPlainSteps = kLlSlots;
constexpr uint64_t kPlainLineIn = 16, kPlainLineOut = 32, kPlainLineDone = 48;
constexpr uint64_t kPlainRoleLines = static_cast<uint64_t>(kLlSlots) * kLlLines;

template <int MaxWorks>
struct DirectArgs {
  static constexpr int kWorks = MaxWorks;
  DevComm comm;                      // abort flag, timeout, error words
  uint64_t* flags[kDirectMaxRanks];  // each member's barrier array as reached here
  int32_t rank;                      // LSA rank (the team is the whole communicator)
  int32_t nranks;
  int32_t nworks;
  int32_t pad;
  DirectWork works[MaxWorks];
};

constexpr int kDirectSmallLaunch = 1;  // one work: the common launch
constexpr int kDirectLaunch = 8;       // works of one launch; more take several

}  // namespace mccl
