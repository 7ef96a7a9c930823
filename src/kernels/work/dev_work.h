// What a GPU kernel sees: connections, the communicator's device state, and the work of
// one launch. Plain data, shared by host code (g++) and device code (nvcc).
//
// A launch carries its work by value in the kernel parameters, so a launch captured in a
// CUDA graph needs nothing from the host when it replays. Connections keep their step
// counters in device memory, so replays and eager launches continue where the last left.
#pragma once

#include <stddef.h>
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

// Layout of a receiver's FIFO region in device memory.
struct ConnRegion {
  static constexpr uint64_t kFlagOff = 0;     // tail, written by the sender
  static constexpr uint64_t kUnitOff = 8;     // Simple units: a word per slot (kUnitSlots)
  static constexpr uint64_t kAgreeOff = 216;  // units by agreement: the receiver's word, the sender's
  static constexpr uint64_t kOfferOff = 232;  // user buffers: the receiver's offer (two words)
  static constexpr uint64_t kAckOff = 248;    // user buffers: the sender's answer
  static constexpr uint64_t kDataOff = 256;   // FIFO slots
};

// Simple works with units (DevWork::units): a large ring or chain collective, or a Send
// and its Recv (beyond two ranks by agreement, below), is cut into units (a ring AllReduce's loop of chunk x nranks
// elements, else a chunk), and a channel takes the next unit when it is done with one, so
// blocks on slower SMs do less (one H200 block moves 1.3-1.6x another's over NVLink
// depending on where it runs, and a fixed range a channel made every launch wait for its
// slowest block). Channel c starts with unit c; the leader (ring position 0, the chain's
// head, the Send) claims the unit that follows from DevComm::claims and names it in the
// unit word of every message of the current unit, which every rank forwards in its own
// messages: each rank knows it before the unit ends.
// A unit word: kUnitUnknown, kUnitEnd (the channel is done), or the unit + 1.
constexpr int kUnitSlots = static_cast<int>((ConnRegion::kAgreeOff - ConnRegion::kUnitOff) / 8);  // 26
// DevWork::units: kUnitsOn where both ends know the other takes units too (a collective's
// own Simple launch; a Send/Recv on two ranks, whose groups hold the same number of
// operations with the peer). Beyond two ranks a Send's and its Recv's groups differ, and
// with them the kernel each runs in (the Simple kernel takes units, the generic one does
// not): kUnitsAgree, units only where both ends run the Simple kernel, agreed per work and
// connection at its start, as the user-buffer offer is (below; the two words at kAgreeOff,
// counts doubled, the low bit the answer):
//   * the receiver posts 2 (count + 1) + 1 in the first word (the generic kernel: + 0);
//   * the sender waits for it, takes units if it says 1 and its own kernel is the Simple
//     one, and writes 2 (count + 1) + that into the second (the generic kernel: + 0);
//   * the receiver waits for the second word, then both run the channel alike: its units,
//     or its fixed range.
// The sender waits for the receiver's word of this work before it writes its own, so a
// word is never overwritten before it is read. A round trip, at the start of works of
// twice kUnitsPerChannel units a channel or more, never a Gather's or Scatter's (unitsOf,
// gpu_plan.cc, with the figures).
constexpr uint8_t kUnitsOn = 1;
constexpr uint8_t kUnitsAgree = 2;

// User buffers (ipc_transport/user_buffers.h): a Simple AllGather, Broadcast or Send/Recv
// whose receiver's output is mapped in its sender's process moves each byte once: the
// sender writes straight into the receiver's output, where the FIFO slot would have been
// copied, and the receiver moves nothing it only receives. A ring AllReduce does so with
// its final data (the steps that gather the reduced chunks; its reduce steps keep the
// FIFO): the outputs' layouts are the same on every rank, and a chunk's final value comes
// after every rank has read its input of that chunk, so in place is safe too. The steps,
// flags and slots' flow control stay as they are; only where the data lies changes. Per call and connection,
// in the kernels, as NCCL's ptrExchange:
//   * a receiving block of a work marked kXchgRecv posts its offer at the work's start: the
//     output's address as the sender reaches it (DevWork::offer, null: none) in the offer's
//     first word, then the connection's step count + 1 in its second (release);
//   * a sending block of a work marked kXchgSend waits for that count (acquire) in its
//     peer's region, takes the address, and where it is not null writes its answer (the
//     same count) into the peer's ack word and its data into the peer's output; the fence
//     before its first tail orders the answer before the first message;
//   * the receiver reads the ack after its first message: its count says the data of this
//     work is already in place (an older count: it is in the FIFO, as when the generic
//     kernel sends, which posts offers of null but never answers).
// Both ends mark a work alike from what both know (the size, the collective, the
// connection over CUDA IPC); whether the address is null is one end's business only.
constexpr uint8_t kXchgRecv = 1;
constexpr uint8_t kXchgSend = 2;
constexpr uint64_t kUnitUnknown = 0;
constexpr uint64_t kUnitEnd = ~0ull;
// Elements of a unit: a ring AllReduce's loop (a chunk for each rank), else a chunk.
MCCL_HD int64_t unitElems(const Schedule& s) {
  return s.algo == Algo::Ring && s.coll == Coll::AllReduce ? s.chunk * s.nranks : s.chunk;
}

// Each connection's control words, in its peer's block of the table (devCtrl): the
// kernel's step counter (posted for a sender, consumed for a receiver) and, for a sender,
// the credit word. In a whole table (one cudaMalloc, exported through CUDA IPC) the credit
// word is the sender's head itself, written by its receiver (DevConn::head points at it),
// so an LL sender has its head at setup beside the connection. Beside a sparse table,
// whose mapped pages CUDA IPC cannot export, the heads live in per-peer blocks of their own
// and the credit word stays 0: an LL sender reads its head through DevConn::head once its
// FIFO's kLlSlots steps are in use, a load more a launch. (A credit kept by the kernel, the
// head read on the side and saved at the last step, cost every table 0.3 us a launch:
// bench/results/gpu-2xH200-2026-11-26g.)
constexpr int kCtrlWords = 2;
constexpr int kCtrlStep = 0;
constexpr int kCtrlCredit = 1;

// Kernel error codes, written to host-mapped memory.
enum DevError : int32_t { kDevOk = 0, kDevTimeout = 1, kDevAborted = 2 };

// The lean LL kernel reads its parameters straight from the constant bank, and each 64-byte
// line of them is a miss of its own at a block's start (a launch's parameters are new to
// every SM; about 0.1 us a line on an H100, bench/results/gpu-1x-2026-12-07c). On sm_90 the
// parameters begin at c[0][0x210], 16 bytes into a line, so the fields that kernel reads
// before its first store come first here: the first 48 bytes of KernelArgs, one line.
// DevWork's come first in it for the same reason (below).
struct DevComm {
  // Hot: the lean LL kernel's (ll_kernel.cu, ll_proto.cuh).
  int32_t rank;
  int32_t nranks;
  int32_t maxChannels;
  uint32_t doneTarget;          // nonzero: the launch raises its host's completion word (core/
                                // completion.h), word kDoneFlagWord of the abortFlag block, to this
                                // value, its blocks, when claims[kDoneWord] counts them all; 0 in
                                // most launches
  uint8_t* table;               // the connection table: a block of peerBytes per peer (devConn,
                                // devCtrl), zero until connected; see src/ipc_transport/conn_table.h
  uint64_t peerBytes;
  unsigned long long* prof;     // MCCL_PROFILE: kProfWords counters (device memory), else null
  uint32_t* claims;             // kClaimWords: units claimed per work of a launch, then its blocks
                                // done (the last one out zeroes them all); then kDoneWord
  // Read by waits that last (dev_sync.cuh) and by the other kernels, which copy the whole
  // communicator to shared memory first (block_start.cuh).
  volatile int32_t* abortFlag;  // host-mapped; set by ncclCommAbort
  int32_t* error;               // host-mapped; first DevError of a kernel
  int32_t* errorPeer;           // host-mapped; the peer a timed-out wait was for
  uint64_t timeoutNs;           // MCCL_TIMEOUT
  const int32_t* ring;          // ring order (device copy)
  const int32_t* ringPos;
  int32_t ringPosition;         // this rank's place in the ring, and its neighbours there: what
  int32_t ringPrev;             // the Simple kernels need before their first wait, without a
  int32_t ringNext;             // dependent load of the ring tables
  int32_t fence;                // 0: fence.acq_rel.sys (default), 1: fence.sc.sys
  int32_t slices;               // flags per FIFO slot: a step's chunk moves in this many slices
  int32_t postWarp;             // Simple kernel: a sending work's last warp fences and posts
                                // (MCCL_SIMPLE_POST_WARP; simple_kernel.cuh)
};
// The lean kernel's fields in the parameters' first line (KernelArgs starts with DevComm).
static_assert(offsetof(DevComm, claims) + sizeof(uint32_t*) <= 48, "DevComm's hot fields fit 48 bytes");
static_assert(sizeof(DevComm) == 120, "DevComm's size: KernelArgs::works lie 16 bytes into a line (DevWork)");

// MCCL_PROFILE counters: nanoseconds thread 0 of each block spent per phase of a step,
// summed over blocks and steps, per protocol (Simple: wait for flags / move data / fence
// and post; LL: setup / send (credit waits included) / receive and reduce / step barrier),
// and outside the steps, with the number of blocks measured: Simple, from the block's start
// to its first step (of which: the parameters copied to shared memory, the work's setup
// before its step loop, the first step's schedule), from its last post to the block's end,
// and between a step's post and the next step's start (the next step's schedule); LL, from
// the block's start to its first work's setup; direct works (kernels/work/direct.h), per block
// and work: the block's start to its first work (the previous kernel's end under PDL), the
// entry barrier (plain buffers: the offers and the staged inputs), the work, the exit
// barrier (plain: the done lines and the staged outputs), how many were plain, and a plain
// entry's parts (direct_kernel.cu; only in a build with MCCL_DIRECT_PROFILE); the lean LL
// kernel's block start in parts (ll_kernel.cu; only in a build with MCCL_LL_PROFILE): its
// first instruction to its first parameter, then to its queue entry, to its work's range, to
// the end of the grid wait, over the blocks that stamped them all.
enum ProfWord : int {
  kProfSimpleSteps, kProfSimpleWait, kProfSimpleMove, kProfSimplePost, kProfSimpleBytes,
  kProfSimpleStart, kProfSimpleArgs, kProfSimpleSetup, kProfSimpleEnd, kProfSimpleBlocks,
  kProfSimpleGap, kProfSimpleGaps,
  kProfLlSteps, kProfLlSetup, kProfLlSend, kProfLlRecv, kProfLlEnd, kProfLlBytes, kProfLlStart, kProfLlStarts,
  // (LL's words end here: LlShared keeps a sum for each of them, ll_proto.cuh.)
  kProfDirectWorks, kProfDirectStart, kProfDirectEntry, kProfDirectRun, kProfDirectExit, kProfDirectPlain,
  kProfDirectEntrySync, kProfDirectEntryConn, kProfDirectEntryOffer, kProfDirectBlocks,
  kProfLlStartParam, kProfLlStartQueue, kProfLlStartRange, kProfLlStartWait, kProfLlStartRest, kProfLlStamped,
  kProfWords
};

// A connection's index inside its peer's block: [class][channel][direction].
__host__ __device__ inline int connIndex(const DevComm& c, ConnClass cls, int channel, bool send) {
  return ((static_cast<int>(cls) * c.maxChannels) + channel) * 2 + (send ? 1 : 0);
}
// A peer's block: its connections, then their control words. Peer-major, so a rank's
// table has memory only where its connected peers' blocks lie (ConnTable maps those pages).
__host__ __device__ inline uint64_t connBlockBytes(int maxChannels) {
  return sizeof(DevConn) * kNumConnClasses * static_cast<uint64_t>(maxChannels) * 2;
}
__host__ __device__ inline uint64_t peerBlockBytes(int maxChannels) {
  return connBlockBytes(maxChannels) + sizeof(uint64_t) * kCtrlWords * kNumConnClasses * static_cast<uint64_t>(maxChannels) * 2;
}
__host__ __device__ inline DevConn* devConn(const DevComm& c, int peer, int index) {
  return reinterpret_cast<DevConn*>(c.table + static_cast<uint64_t>(peer) * c.peerBytes) + index;
}
__host__ __device__ inline uint64_t* devCtrl(const DevComm& c, int peer, int index) {
  return reinterpret_cast<uint64_t*>(c.table + static_cast<uint64_t>(peer) * c.peerBytes + connBlockBytes(c.maxChannels)) +
         kCtrlWords * index;
}

enum DevRed : uint8_t { kRedSum = 0, kRedProd = 1, kRedMax = 2, kRedMin = 3 };

// The fields the lean LL kernel reads come first, then the schedule, whose count, channels
// and root lie within its first 32 bytes: a launch's first work starts 16 bytes into a
// constant line (DevComm), so all of them lie in two lines (the work's first 112 bytes).
struct DevWork {
  const void* in;
  void* out;
  uint64_t scalarBits;   // PreMulSum scalar (host-resolved)
  const void* scalarPtr; // PreMulSum scalar in device memory (ncclScalarDevice), or null
  int32_t postDiv;       // integer ncclAvg: divide the final result
  uint8_t type;          // ncclDataType_t
  uint8_t red;           // DevRed
  uint8_t premul;        // multiply the local input by the scalar
  uint8_t proto;         // DevProto
  uint8_t units;         // Simple: channels take units as they free up (kUnitSlots above):
                         // 0, kUnitsOn or kUnitsAgree
  uint8_t selfCopy;      // a Simple Send to this rank paired with its Recv (GpuWork::pairSelf):
                         // the blocks copy in -> out (the Recv's buffer), no connection
  uint8_t xchg;          // user buffers: kXchgRecv | kXchgSend (above)
  uint8_t twoShot;       // LL128 AllReduce in two hops: a ReduceScatter, then an AllGather of
                         // each rank's block (ll128TwoShot)
  Schedule s;            // ring pointers are device pointers
  void* scratch;         // one chunk per channel and lane (binomial Reduce), or null
  void* offer;           // kXchgRecv: out as the sender's process reaches it, or null
};
static_assert(offsetof(DevWork, s) + offsetof(Schedule, count) + sizeof(int64_t) <= 112 &&
                  offsetof(DevWork, s) + offsetof(Schedule, nchannels) < 112 && offsetof(DevWork, s) + offsetof(Schedule, root) < 112,
              "the lean kernel's fields of a work lie in its first 112 bytes");

// How a work moves its data: Simple follows the schedule s through the FIFOs of its
// connection class; LL and LL128 send every peer its data directly in flagged 16-byte or
// 128-byte lines (src/kernels/protocols/ll_proto.cuh, ll128_proto.cuh), using only s.coll, s.count,
// s.root and s.nchannels.
enum DevProto : uint8_t { kProtoSimple = 0, kProtoLl = 1, kProtoLl128 = 2 };

// ---- LL protocol --------------------------------------------------------------------------
// A line is 16 bytes: two 4-byte data words, each followed by a 4-byte flag, stored with
// one 16-byte store; the reader spins until both flags equal the step's flag, so data and
// "ready" travel together (no fence, no separate flag store). A slot holds one step of
// kLlLines lines; a connection has kLlSlots slots. Flags are the sender's step count + 1,
// never reset: a slot's stale lines carry an older flag.
constexpr int kLlSlots = 4;
constexpr int kLlLines = 4096;                                   // lines per slot
constexpr uint32_t kLlSlotBytes = kLlLines * 16;                 // 64 KiB
constexpr uint32_t kLlPayload = kLlLines * 8;                    // 32 KiB of data per step

// ---- LL128 protocol -----------------------------------------------------------------------
// A line is 128 bytes, written by 8 threads of a warp with one 16-byte store each: 15 data
// words and, in the last word (the 8th thread's second), the step's flag. NVLink delivers a
// warp's 128-byte line whole, so a reader that sees the flag sees the line's data: 94% of
// the bytes are data (LL: 50%), still with no fence and no separate flag. Same slot size
// and count as LL, on connections of their own (ConnClass::Ll128, Ll128P2p).
constexpr int kLl128LineWords = 16;
constexpr int kLl128DataWords = 15;
constexpr int kLl128Lines = kLlSlotBytes / 128;                          // 512 lines a slot
constexpr uint32_t kLl128Payload = kLl128Lines * kLl128DataWords * 8;    // 60 KiB a step

// A queue is run by one block, over the works in call order: the collectives that use
// its channel, or the point-to-point operations with one peer in one direction.
struct DevQueue {
  int16_t channel;  // the channel (point to point: of the peer's operations)
  int16_t peer;     // point to point: the peer; collectives: -1
  int8_t send;      // point to point: sends (1), receives (0), or both (kQueueBothWays)
  int8_t sendWarps; // kQueueBothWays: the warps of the Send half (0: half the block)
  int8_t pad[2];
};

// A Simple launch's queue of a peer's Sends and Recvs on one channel: the block's first
// threads run the Sends, the rest the Recvs (simpleKernel; MCCL_P2P_BLOCK_BOTH_WAYS,
// joinBothWays). Half each, or, where every Recv's data arrives in the output straight from
// the peer and the Recv half only waits, MCCL_P2P_DIRECT_RECV_THREADS for the Recvs.
constexpr int8_t kQueueBothWays = 2;

// True when the block of queue q runs work w: collectives on every channel below their
// count; point-to-point works on the queue of their peer, direction and channel (a queue
// both ways: as its half says, send 1 or 0).
MCCL_HD bool queueRuns(const DevQueue& q, const DevWork& w) {
  const bool p2p = w.s.algo == Algo::P2p;
  if (q.channel >= w.s.nchannels) return false;
  if (q.peer < 0) return !p2p;
  return p2p && w.s.root == q.peer && (w.s.coll == Coll::Send) == (q.send != 0);
}

// The Simple kernel: the least block (or half block) that keeps a posting warp out of the
// data (simple_kernel.cuh).
constexpr int kPostWarpMin = 128;

constexpr int kMaxQueues = 128;

// A launch's parameters. Their size is paid by every launch: cudaLaunchKernel took 3.64 us
// with 256 bytes of parameters, 4.08 with 2 KiB and 4.67 with 4 KiB on an H100 host
// (bench/micro/launch_args.cu), so the common launch of a small message, one or two LL
// works on up to 32 blocks (what the planner gives an LL collective, or two works of 16),
// takes the tiny form (672 bytes), and the lean kernel's less (LeanOneArgs, LeanTwoArgs).
// With 16 queues (496 bytes) every LL collective on 32 channels and every Send/Recv pair on
// more than 8 ran the general LL kernel instead of the lean one (2 x H200: AllReduce 128
// KiB 7.0 us against 64 KiB's 5.7; ReduceScatter 256 KiB 7.7 against 128 KiB's 5.8;
// bench/results/gpu-2xH200-2026-11-26c).
template <int MaxWorks, int MaxQueues = kMaxQueues>
struct KernelArgs {
  static constexpr int kWorks = MaxWorks;
  static constexpr int kQueues = MaxQueues;
  DevComm comm;  // by value: no dependent load before the first wait
  int32_t nqueues;
  int32_t nworks;
  DevQueue queues[MaxQueues];
  DevWork works[MaxWorks];
};

constexpr int kSmallLaunch = 8;     // works that fit the small kernel (2 KiB of parameters)
constexpr int kClaimWords = kSmallLaunch + 1;  // DevComm::claims: a counter per work of a Simple launch, blocks done
// DevComm::claims[kDoneWord]: the blocks of a launch that raises a completion word
// (DevComm::doneTarget) done so far; its last block zeroes it for the next such launch (a
// launch stopped early leaves it short, and no later kernel of the communicator gets past its
// first check of the abort and error words to count).
constexpr int kDoneWord = kClaimWords;
constexpr int kClaimAllocWords = kClaimWords + 1;
// The completion word's place in the host-mapped block of DevComm::abortFlag (a line away
// from the abort and error words).
constexpr int kDoneFlagWord = 8;
constexpr int kLargeLaunch = 128;   // works of the large kernel
using TinyArgs = KernelArgs<2, 32>; // the general LL kernels' launch of one or two works (672 bytes)
// The lean LL kernel's launch of one work that every block runs, block i on channel i
// (llLeanOne, ll_kernel.cu): no queues, no counts, 264 bytes against TinyArgs' 672. The host
// pays for a launch's parameters (cudaLaunchKernel 3.64 us with 256 bytes, 3.72 with 512, one
// H100: bench/results/gpu-1xH100-shared-2026-11-23), and this is the common eager launch of
// a small collective. Its work starts 8 bytes into a line (c[0][0x288] on sm_90), so its
// fields the kernel reads (the first 80 bytes, DevWork) lie in two lines, as in TinyArgs.
struct LeanOneArgs {
  static constexpr int kWorks = 1;
  DevComm comm;
  DevWork works[1];
};
static_assert(sizeof(LeanOneArgs) == 264, "LeanOneArgs: the communicator and one work");
// The lean LL kernel's launch of two works (or of one whose blocks are not all its channels):
// block b runs work i on channel b - first[i] where that is below the work's channels, in
// order, and no queue is read. A Send/Recv pair's channels follow each other (first 0 and
// the first work's channels), two collectives share theirs (first 0 both), a launch's
// blocks past its works' run nothing (a group's other launch has them); the host takes this
// form where the group's queues say the same (leanTwoLayout, gpu_plan.cc), else TinyArgs
// and the general LL kernel. 416 bytes against TinyArgs' 672, and one constant-cache miss
// fewer before a block knows its work (its queue entry). The first blocks share the
// communicator's last line; a lone work leaves works[1] zero (no channels).
struct LeanTwoArgs {
  static constexpr int kWorks = 2;
  DevComm comm;
  int32_t first[2];
  DevWork works[2];
};
static_assert(sizeof(LeanTwoArgs) == 416 && offsetof(LeanTwoArgs, works) == 128,
              "LeanTwoArgs: the communicator, the first blocks, two works");
// Its works start where the communicator's first line starts (c[0][0x210] on sm_90, 16 bytes
// into a line), so the fields the lean kernel reads span three lines: DevComm, DevWork.
static_assert(offsetof(TinyArgs, works) % 64 == 0, "TinyArgs::works lie as its first byte does in a line");

}  // namespace mccl
