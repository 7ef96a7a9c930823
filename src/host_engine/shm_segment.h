// The shared-memory segment of a host communicator whose ranks share one node: its layout,
// and how ranks attach to it and leave it. Small collectives (host_engine/shm_coll.cc) and
// small point-to-point messages (host_engine/shm_p2p.cc) run in it.
//
// Layout (POSIX shared memory, /mccl-shm-<token>; n ranks):
//   header          slot size and rank count (checked: equal on every rank), and the
//                   attach word (below)
//   cell[r][c]      64 per rank: 8 cache lines, each 56 B of rank r's data and the
//                   collective's sequence number (shm_coll.cc)
//   packed[r][c]    64 per rank, 512 B each: rank r's collective data from 169 B to 512 B
//   done[r]         the last collective rank r has finished reading, and whether rank r has
//                   attached (a sender waits for that before its first message to r)
//   slot[r][d]      d per rank (slotDepth): rank r's collective data above 512 B
//   p2pDone[r][q]   the last message rank r has read from rank q (row r written by r alone)
//   p2pCell[r][q][k] p2pDepth per ordered pair: message k from rank q to rank r, its
//                   number, size and slot in the first 32 bytes, then up to 480 B of data
//   p2pSlotRead[q][j] the last use of rank q's message slot j that its receiver has read
//   p2pSlot[q][j]   d per rank (as the collective slots): rank q's messages above 480 B
//
// Attaching (every rank opens the name with O_CREAT, so the first creates it zero-filled):
// one atomic word counts the ranks attached and the ranks still there. The name is
// unlinked when the last rank attaches (nobody else will open it), or when the last rank
// still there leaves before that and no message waits in it for a rank that has not come
// yet (ranks that never attached may still come: they make a new segment of the same name,
// and nobody is left in the old one; where a message waits for one, the name stays until
// that rank has come and, the last one there, leaves). Whoever unlinks marks the word
// closed first; a rank that finds it closed opens the name again (the unlink is a moment
// behind), so no two live ranks ever sit in different segments.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mccl {

constexpr size_t kShmLine = 128;     // two cache lines: the adjacent-line prefetcher pairs them
constexpr size_t kShmCacheLine = 64;
constexpr size_t kShmLineData = kShmCacheLine - sizeof(uint64_t);  // 56
constexpr int kShmCellLines = 8;
constexpr size_t kShmCell = kShmCellLines * kShmCacheLine;  // 512
constexpr int kShmCells = 64;        // cells (and packed cells) per rank

// A rank's slots for collective data above a packed cell: as many as fit min(1 MiB, 4 MiB /
// ranks), at least 2, at most 16.
constexpr int kShmMaxSlotDepth = 16;
inline int shmSlotDepth(size_t slotBytes, int nranks) {
  size_t budget = (size_t{1} << 20) < (size_t{4} << 20) / static_cast<size_t>(nranks)
                      ? (size_t{1} << 20)
                      : (size_t{4} << 20) / static_cast<size_t>(nranks);
  size_t d = budget / slotBytes;
  return d < 2 ? 2 : d > static_cast<size_t>(kShmMaxSlotDepth) ? kShmMaxSlotDepth : static_cast<int>(d);
}

// Contiguous data in pieces, so that readers copy or reduce one piece while the writer
// fills the next: up to 8 pieces, none under kShmPieceMin bytes (or one piece).
constexpr size_t kShmPieceMin = 2048;
struct ShmPieces {
  int count = 0;
  size_t bytes = 0;  // of every piece but the last; a multiple of 64, so of every element size
  size_t at(int p) const { return static_cast<size_t>(p) * bytes; }
  size_t len(int p, size_t total) const { return bytes < total - at(p) ? bytes : total - at(p); }
};
inline ShmPieces shmPiecesOf(size_t total, bool split) {
  size_t want = split ? total / kShmPieceMin : 1;
  want = want < 1 ? 1 : want > static_cast<size_t>(kShmCellLines) ? kShmCellLines : want;
  ShmPieces ps;
  ps.bytes = ((total + want - 1) / want + kShmCacheLine - 1) & ~(kShmCacheLine - 1);
  ps.count = static_cast<int>((total + ps.bytes - 1) / ps.bytes);
  return ps;
}

// Copies n bytes into the segment for another core to read: with streaming stores where
// `stream` (x86-64; elsewhere an ordinary copy), visible to a reader before any later store
// of this thread (the release store that announces them).
void shmPut(char* dst, const char* src, size_t n, bool stream);

inline uint64_t shmNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}
// Nanoseconds since t0 (a shmNowNs), less what reading the clock costs: 24 ns on the 2-core
// VM (TSC in the vDSO), but a clock read by system call costs a microsecond, which would
// make every timed 4 KiB copy look slow.
uint64_t shmElapsedNs(uint64_t t0);

// Whether a rank writes its slots with streaming stores (MCCL_HOST_SHM_STREAM, from
// MCCL_HOST_SHM_STREAM_BYTES). An ordinary store to a line that a reader on another core
// read last must first fetch the line from it: cheap where the two cores share a cache, a
// round trip per line where they do not, which a store buffer overlaps only a few deep.
// Streaming stores fetch nothing but leave the data in memory, where a reader that shares
// a cache with the writer finds it slower than in that cache. On the 2-core EPYC VM
// (bench/results/host-2core-2026-12-07c/) the two vCPUs share an L3 in some launches and
// not in others, and changed within one: a 64 KiB Broadcast took 6.6 or 25.1 us with
// ordinary copies, 5.8 or 5.3 streamed, a 64 KiB AllReduce 6.8 or 40.7 ordinary, 13.3 or
// 13.4 streamed; ordinary copies of 4-64 KiB into a slot ran at 0.03-0.15 ns a byte (10th
// to 90th percentile) sharing the L3 and 0.13-0.96 not (medians 0.23-0.52). So under auto
// a rank times every 8th ordinary copy into a slot, less the clock's own cost (a slot's
// first use to a size, which faults its pages in, aside), and streams while the average of its times (each weighing a
// quarter, none above twice the line) is above 0.2 ns a byte: one preempted copy does not
// tip it, two in a row do; while it streams, every 128th copy is an ordinary one, timed.
// ShmColls::setup turns auto into never where ranks outnumber cores.
class ShmStreamChoice {
 public:
  enum class Mode { Never, Always, Auto };
  ShmStreamChoice() = default;
  ShmStreamChoice(Mode mode, size_t minBytes) : mode_(mode), min_(minBytes) {}
  // Before a copy of `bytes` into a slot: whether it streams; *time: whether to time it (an
  // ordinary copy) and report the time to copied().
  bool stream(size_t bytes, bool* time) {
    *time = false;
    if (mode_ == Mode::Never || bytes < min_) return false;
    if (mode_ == Mode::Always) return true;
    ++copies_;
    if (streaming_ && copies_ % kProbeEvery != 0) return true;
    *time = streaming_ || copies_ % kSampleEvery == 0;
    return false;
  }
  // The same for a copy into a slot that has held at most *slotHigh bytes so far (raised to
  // bytes): one to pages not touched before faults them in, and is not timed.
  bool stream(size_t bytes, size_t* slotHigh, bool* time) {
    const bool s = stream(bytes, time);
    *time = *time && bytes <= *slotHigh;
    *slotHigh = bytes > *slotHigh ? bytes : *slotHigh;
    return s;
  }
  void copied(size_t bytes, uint64_t ns) {
    const uint64_t ps = bytes == 0 ? 0 : ns * 1000 / bytes;
    avg_ = (3 * avg_ + (ps < 2 * kSlowPsPerByte ? ps : 2 * kSlowPsPerByte)) / 4;
    streaming_ = avg_ > kSlowPsPerByte;
  }
  bool streaming() const { return streaming_; }
  static constexpr uint32_t kSampleEvery = 8, kProbeEvery = 128;
  static constexpr uint64_t kSlowPsPerByte = 200;  // 5 GB/s

 private:
  Mode mode_ = Mode::Never;
  size_t min_ = 0;
  uint32_t copies_ = 0;
  uint64_t avg_ = 0;  // picoseconds a byte
  bool streaming_ = false;
};

// Point-to-point cells: 512 B, a message of up to 480 B after a 32-byte header (to 32 B the
// message shares the header's cache line); per ordered pair as many as fit 4 MiB for the
// node (16 up to 16 ranks, 8 at 32, 2 at 64), none above 64 ranks. Larger messages go
// through the sender's message slots (as many as its collective slots, of the same size),
// the cell carrying their header.
constexpr size_t kShmP2pCell = 512;
constexpr size_t kShmP2pHeader = 4 * sizeof(uint64_t);
constexpr size_t kShmP2pInlineBytes = kShmP2pCell - kShmP2pHeader;
constexpr int kShmP2pMaxRanks = 64;
inline int shmP2pDepth(int nranks) {
  if (nranks < 2 || nranks > kShmP2pMaxRanks) return 0;
  size_t d = (size_t{4} << 20) / (static_cast<size_t>(nranks) * static_cast<size_t>(nranks) * kShmP2pCell);
  return d < 2 ? 2 : d > 16 ? 16 : static_cast<int>(d);
}

struct alignas(kShmLine) ShmHeader {
  std::atomic<uint64_t> slotBytes;  // 0 until the first rank attaches
  std::atomic<uint64_t> nranks;
  // Bits 0-23: ranks still there; 24-47: ranks that have attached; 63: closed.
  std::atomic<uint64_t> attach;
};
struct alignas(kShmCacheLine) ShmLine {
  char data[kShmLineData];
  std::atomic<uint64_t> seq;  // the operation whose data this line (or the slot) holds
};
struct alignas(kShmLine) ShmDoneLine {
  std::atomic<uint64_t> done;      // the last collective this rank finished reading
  std::atomic<uint64_t> attached;  // nonzero once this rank has attached (it may have left)
};
struct alignas(kShmCacheLine) ShmP2pCell {
  std::atomic<uint64_t> seq;  // the message this cell holds (1, 2, ... per ordered pair)
  uint64_t bytes;             // its size (the receiver checks it against its own)
  uint64_t slotUse;           // above kShmP2pInlineBytes: the sender's slot use u (slot u % depth)
  std::atomic<uint64_t> written;  // bytes of it in the slot so far (set after seq)
  char data[kShmP2pInlineBytes];  // to kShmP2pInlineBytes: the message
};
static_assert(sizeof(ShmLine) == kShmCacheLine && sizeof(ShmDoneLine) == kShmLine &&
                  sizeof(ShmHeader) == kShmLine && sizeof(ShmP2pCell) == kShmP2pCell,
              "segment lines");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the segment's counters are shared between processes");

// Offsets of the segment's parts for n ranks and slots of slotBytes (the same on every rank).
struct ShmLayout {
  int nranks = 0;
  size_t slotBytes = 0;
  int slotDepth = 0;
  int p2pDepth = 0;
  size_t p2pRow = 0;  // bytes of a p2pDone row: whole 128-byte lines, so rows never share one
  size_t p2pSlotRow = 0;  // bytes of a p2pSlotRead row: whole 128-byte lines
  size_t cells = 0, packed = 0, done = 0, slots = 0, p2pDone = 0, p2pCells = 0, p2pSlotRead = 0, p2pSlots = 0,
         bytes = 0;
  ShmLayout(int n, size_t slot);
};

// One mapping of a segment, shared by the ranks of this process that use it (threads as
// ranks): they see one another's stores at the same addresses.
class ShmSegment {
 public:
  ~ShmSegment();
  // Maps the segment name (made if absent) and attaches this rank to it; false with the
  // reason in *why when /dev/shm cannot give it.
  static bool attach(const std::string& name, const ShmLayout& layout, std::shared_ptr<ShmSegment>* out,
                     std::string* why);
  // This rank leaves (once per attach); unlinks the name when it is the last one there and
  // no message waits for a rank that has not attached, or at once when force (a failed
  // communicator: its peers are gone or going).
  void detach(bool force);
  // Ranks that have attached so far.
  uint64_t attachedRanks() const;

  const ShmLayout& layout() const { return layout_; }
  ShmHeader* header() const { return reinterpret_cast<ShmHeader*>(base_); }
  // The cell of rank r for collective s: kShmCellLines lines.
  ShmLine* cell(int r, uint64_t s) const {
    return reinterpret_cast<ShmLine*>(base_ + layout_.cells + (static_cast<size_t>(r) * kShmCells + s % kShmCells) * kShmCell);
  }
  // The packed cell of rank r for collective s: kShmCell contiguous bytes.
  char* packed(int r, uint64_t s) const {
    return base_ + layout_.packed + (static_cast<size_t>(r) * kShmCells + s % kShmCells) * kShmCell;
  }
  ShmDoneLine* done(int r) const { return reinterpret_cast<ShmDoneLine*>(base_ + layout_.done + r * kShmLine); }
  char* slot(int r, uint64_t s) const {
    const size_t d = static_cast<size_t>(layout_.slotDepth);
    return base_ + layout_.slots + (d * static_cast<size_t>(r) + s % d) * layout_.slotBytes;
  }
  // The last message rank `to` has read from rank `from`.
  std::atomic<uint64_t>* p2pDone(int to, int from) const {
    return reinterpret_cast<std::atomic<uint64_t>*>(base_ + layout_.p2pDone + static_cast<size_t>(to) * layout_.p2pRow +
                                                    static_cast<size_t>(from) * sizeof(uint64_t));
  }
  // Message slot u % depth of rank `from` (u: its slot uses, 1, 2, ...), and the last use of
  // it its receiver has read.
  char* p2pSlot(int from, uint64_t u) const {
    const size_t d = static_cast<size_t>(layout_.slotDepth);
    return base_ + layout_.p2pSlots + (d * static_cast<size_t>(from) + u % d) * layout_.slotBytes;
  }
  std::atomic<uint64_t>* p2pSlotRead(int from, uint64_t u) const {
    return reinterpret_cast<std::atomic<uint64_t>*>(base_ + layout_.p2pSlotRead + static_cast<size_t>(from) * layout_.p2pSlotRow +
                                                    (u % static_cast<uint64_t>(layout_.slotDepth)) * sizeof(uint64_t));
  }
  // The cell of message k from rank `from` to rank `to`. A depth that is a power of two (16
  // up to 16 ranks) is masked: no 64-bit division (tens of cycles) on every small message's way.
  ShmP2pCell* p2pCell(int to, int from, uint64_t k) const {
    const size_t d = static_cast<size_t>(layout_.p2pDepth);
    const size_t at = (d & (d - 1)) == 0 ? k & (d - 1) : k % d;
    const size_t pair = static_cast<size_t>(to) * layout_.nranks + from;
    return reinterpret_cast<ShmP2pCell*>(base_ + layout_.p2pCells + (pair * d + at) * kShmP2pCell);
  }
  const std::string& name() const { return name_; }

 private:
  // A Send/Recv cell holds a message its receiver has not read, and the receiver has never
  // attached (it will come for it).
  bool messagesForAbsentRanks() const;
  ShmSegment(std::string name, char* base, const ShmLayout& layout)
      : name_(std::move(name)), base_(base), layout_(layout) {}
  static bool map(const std::string& name, const ShmLayout& layout, const ShmSegment* stale,
                  std::shared_ptr<ShmSegment>* out, std::string* why);
  std::string name_;
  char* base_;
  ShmLayout layout_;
};

}  // namespace mccl
