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
#pragma once

#include <stdint.h>

#include "kernels/dev_work.h"

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
  uint8_t pad[3];
};

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
