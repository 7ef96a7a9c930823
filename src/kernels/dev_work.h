// What a GPU kernel sees: connections, the communicator's device state, and the work of
// one launch. Plain data, shared by host code (g++) and device code (nvcc).
//
// A launch carries its work by value in the kernel parameters, so a launch captured in a
// CUDA graph needs nothing from the host when it replays. Connections keep their step
// counters in device memory, so replays and eager launches continue where the last left.
#pragma once

#include <stdint.h>

#include "algorithms/schedule.h"

namespace mccl {

// One direction of a GPU connection as one side sees it. The receiver's FIFO and tail
// live in the receiver's memory; the head lives in the sender's memory.
struct DevConn {
  uint8_t* buf;         // FIFO data (send: the peer's, reached over NVLink; recv: mine)
  uint64_t* tail;       // messages posted (send: the peer's word; recv: mine)
  uint64_t* head;       // messages consumed (send: mine; recv: the peer's word)
  uint64_t* step;       // my persistent counter (posted for send, consumed for recv)
  uint64_t* sizes;      // network send: where each posted slice lies in its slot (the
                        // proxy puts only those bytes); null over CUDA IPC
  uint64_t slotBytes;
  uint32_t slots;
  uint32_t peer;
};

// Layout of a connection's region in device memory.
struct ConnRegion {
  static constexpr uint64_t kFlagOff = 0;     // tail (receiver) or head (sender)
  static constexpr uint64_t kStepOff = 128;   // posted/consumed counter
  static constexpr uint64_t kDataOff = 256;   // FIFO slots (receiver only)
};

// Kernel error codes, written to host-mapped memory.
enum DevError : int32_t { kDevOk = 0, kDevTimeout = 1, kDevAborted = 2 };

struct DevComm {
  int32_t rank;
  int32_t nranks;
  int32_t maxChannels;
  int32_t pad;
  volatile int32_t* abortFlag;  // host-mapped; set by ncclCommAbort
  int32_t* error;               // host-mapped; first DevError of a kernel
  int32_t* errorPeer;           // host-mapped; the peer a timed-out wait was for
  uint64_t timeoutNs;           // MCCL_TIMEOUT
  int32_t fence;                // 0: fence.acq_rel.sys (default), 1: fence.sc.sys
  int32_t slices;               // flags per FIFO slot: a step's chunk moves in this many slices
  const int32_t* ring;          // ring order (device copy)
  const int32_t* ringPos;
  DevConn* conns;
  int32_t* connIndex;           // [cls][channel][peer][dir] -> index into conns, or -1
};

__host__ __device__ inline int connSlot(const DevComm& c, ConnClass cls, int channel, int peer, bool send) {
  return (((static_cast<int>(cls) * c.maxChannels) + channel) * c.nranks + peer) * 2 + (send ? 1 : 0);
}

enum DevRed : uint8_t { kRedSum = 0, kRedProd = 1, kRedMax = 2, kRedMin = 3 };

struct DevWork {
  Schedule s;            // ring pointers are device pointers
  const void* in;
  void* out;
  void* scratch;         // one chunk per channel and lane (binomial Reduce), or null
  uint64_t scalarBits;   // PreMulSum scalar (host-resolved)
  const void* scalarPtr; // PreMulSum scalar in device memory (ncclScalarDevice), or null
  int32_t postDiv;       // integer ncclAvg: divide the final result
  uint8_t type;          // ncclDataType_t
  uint8_t red;           // DevRed
  uint8_t premul;        // multiply the local input by the scalar
  uint8_t pad;
};

// A queue is run by one block, over the works in call order: the collectives that use
// its channel, or the point-to-point operations with one peer in one direction.
struct DevQueue {
  int16_t channel;  // the channel (point to point: of the peer's operations)
  int16_t peer;     // point to point: the peer; collectives: -1
  int8_t send;      // point to point: sends (1) or receives (0)
  int8_t pad[3];
};

constexpr int kMaxQueues = 128;

template <int MaxWorks>
struct KernelArgs {
  DevComm* comm;
  int32_t nqueues;
  int32_t nworks;
  DevQueue queues[kMaxQueues];
  DevWork works[MaxWorks];
};

constexpr int kSmallLaunch = 8;     // works that fit the small (fast to launch) kernel
constexpr int kLargeLaunch = 128;   // works of the large kernel

}  // namespace mccl
