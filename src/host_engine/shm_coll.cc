#include "host_engine/shm_coll.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "core/comm.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/types.h"
#include "host_engine/lone_wait.h"
#include "host_engine/reduce.h"

namespace mccl {
namespace {

std::atomic<uint64_t> gCount{0};

constexpr size_t kLine = 128;  // two cache lines: the adjacent-line prefetcher pairs them
// A rank's publication of one operation, a cell: 8 cache lines of 56 data bytes and the
// operation's sequence number each (LL128's idea on host memory). The writer fills a line,
// then stores its number (release); the reader polls every line it needs at once, so the
// lines travel in parallel and the data has arrived when the numbers have. Up to three lines:
// each further line costs more than one contiguous copy (np 2, AllReduce of 256 B in five
// lines 0.30 us, 0.27 contiguous; 64 B in two lines 0.20, 0.23 contiguous). Larger data goes
// contiguous to the rank's packed cell of the same index (to 512 B; as deep as the cells,
// which matters where ranks outnumber cores: np 4, Broadcast of 256 B 0.19 us from a cell,
// 0.91 from a slot) or to a slot, announced by the first line's number.
constexpr size_t kCacheLine = 64;
constexpr size_t kLineData = kCacheLine - sizeof(uint64_t);
constexpr int kCellLines = 8;
constexpr size_t kCell = kCellLines * kCacheLine;
constexpr size_t kLinesMaxBytes = 3 * kLineData;  // 168
constexpr size_t kPackedBytes = kCell;
static_assert(kLineData % 8 == 0, "a line holds whole elements of every type");
// Cells per rank: operation s publishes in cell s % kLines, so a writer waits for the
// readers only every few operations (done >= s - kLines), and a reader's done counter
// stays in its own cache most of the time. Slots likewise (s % slots, done >= s - slots),
// as many as fit the slot budget (at least 2, at most 16): 1 MiB per rank, less on a node
// of more than 4 ranks so the segment stays near 4 MiB of slots (16 at the default slot size
// up to 4 ranks, 8 at 8, 2 from 32). Depth matters most when ranks outnumber cores: a root
// can run that many operations ahead while its readers wait for a core (4 ranks on 2 cores,
// 4 slots of 64 KiB against 16: Reduce of 1 KiB 2.02 against 0.72 us, Broadcast of 4 KiB
// 2.29 against 1.03; bench/results/host-2core-2026-12-04.md).
constexpr int kLines = 64;

int slotDepth(size_t slotBytes, int nranks) {
  size_t budget = std::min<size_t>(1 << 20, (size_t{4} << 20) / static_cast<size_t>(nranks));
  size_t d = budget / slotBytes;
  return d < 2 ? 2 : d > 16 ? 16 : static_cast<int>(d);
}

struct alignas(kLine) Header {
  std::atomic<uint64_t> slotBytes;  // 0 until the first rank attaches
  std::atomic<uint64_t> nranks;
  std::atomic<uint64_t> attached;
};
struct alignas(kCacheLine) Line {
  char data[kLineData];
  std::atomic<uint64_t> seq;  // the operation whose data this line (or the slot) holds
};
struct alignas(kLine) DoneLine {
  std::atomic<uint64_t> done;  // the last operation this rank finished reading
};
static_assert(sizeof(Line) == kCacheLine && sizeof(DoneLine) == kLine && sizeof(Header) == kLine, "segment lines");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the segment's counters are shared between processes");

// Where one operation's data goes (the same on every rank: it depends on the size alone).
enum class Where { Lines, Packed, Slot };

// Contiguous data in pieces, piece p announced by line p of the writer's cell, so readers
// copy or reduce one piece while the writer fills the next: in a slot up to one piece a line,
// none under kPieceMin bytes; a packed cell in one piece.
constexpr size_t kPieceMin = 2048;
struct Pieces {
  int count = 0;
  size_t bytes = 0;  // of every piece but the last; a multiple of 64, so of every element size
  size_t at(int p) const { return static_cast<size_t>(p) * bytes; }
  size_t len(int p, size_t total) const { return std::min(bytes, total - at(p)); }
};

Pieces piecesOf(size_t total, bool split) {
  const size_t want = split ? std::max<size_t>(1, std::min<size_t>(kCellLines, total / kPieceMin)) : 1;
  Pieces ps;
  ps.bytes = ((total + want - 1) / want + kCacheLine - 1) & ~(kCacheLine - 1);
  ps.count = static_cast<int>((total + ps.bytes - 1) / ps.bytes);
  return ps;
}

// Pointers to every rank's contribution: on the stack up to 64 ranks.
class Sources {
 public:
  explicit Sources(int n) {
    if (n > 64) many_.resize(static_cast<size_t>(n));
  }
  const char** get() { return many_.empty() ? small_ : many_.data(); }

 private:
  const char* small_[64];
  std::vector<const char*> many_;
};

size_t segmentBytes(int n, size_t slot) {
  return kLine + static_cast<size_t>(n) * (2 * kLines * kCell + kLine + slotDepth(slot, n) * slot);
}

}  // namespace

// One mapping of a segment, shared by the ranks of this process that use it (threads as
// ranks): they see one another's stores at the same addresses.
class ShmSegment {
 public:
  ShmSegment(std::string name, char* base, size_t bytes) : name_(std::move(name)), base_(base), bytes_(bytes) {}
  ~ShmSegment() {
    munmap(base_, bytes_);
    // Still named when a rank never attached (its communicator failed before its first
    // operation here): nothing else will attach now.
    if (!unlinked_.load()) shm_unlink(name_.c_str());
  }
  // Maps the segment name (made if absent); false with the reason in *why when /dev/shm
  // cannot give it.
  static bool open(const std::string& name, size_t bytes, std::shared_ptr<ShmSegment>* out, std::string* why);

  Header* header() const { return reinterpret_cast<Header*>(base_); }
  // The cell of rank r for operation s: kCellLines lines.
  Line* cell(int r, uint64_t s) const {
    return reinterpret_cast<Line*>(base_ + kLine + (static_cast<size_t>(r) * kLines + s % kLines) * kCell);
  }
  // The packed cell of rank r for operation s: kPackedBytes contiguous bytes.
  char* packed(int n, int r, uint64_t s) const {
    return base_ + kLine + (static_cast<size_t>(n + r) * kLines + s % kLines) * kCell;
  }
  DoneLine* done(int n, int r) const {
    return reinterpret_cast<DoneLine*>(base_ + kLine + static_cast<size_t>(n) * 2 * kLines * kCell + r * kLine);
  }
  char* slot(int n, int r, uint64_t s, size_t slotBytes) const {
    const int depth = slotDepth(slotBytes, n);
    return base_ + kLine + static_cast<size_t>(n) * (2 * kLines * kCell + kLine) +
           (static_cast<size_t>(depth) * r + s % static_cast<uint64_t>(depth)) * slotBytes;
  }
  // Every rank has attached: the name is no longer needed.
  void unlink() {
    if (!unlinked_.exchange(true)) shm_unlink(name_.c_str());
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  char* base_;
  size_t bytes_;
  std::atomic<bool> unlinked_{false};
};

bool ShmSegment::open(const std::string& name, size_t bytes, std::shared_ptr<ShmSegment>* out, std::string* why) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<ShmSegment>> mapped;
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = mapped.begin(); it != mapped.end();) it = it->second.expired() ? mapped.erase(it) : std::next(it);
  auto it = mapped.find(name);
  if (it != mapped.end()) {
    *out = it->second.lock();
    if (*out) return true;
  }
  auto fail = [&](const char* what, int e, bool unlink) {
    *why = std::string(what) + " " + name + " (" + std::to_string(bytes) + " bytes): " + std::strerror(e);
    if (unlink) shm_unlink(name.c_str());  // the other ranks fail alike and make their own
    return false;
  };
  // Every rank opens with O_CREAT and sizes it the same: whichever comes first creates it,
  // zero-filled, which is the initial state of every counter.
  int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) return fail("shm_open", errno, false);
  struct stat st;
  int rc = fstat(fd, &st);
  if (rc == 0 && static_cast<size_t>(st.st_size) < bytes) rc = ftruncate(fd, static_cast<off_t>(bytes));
  if (rc != 0) {
    int e = errno;
    close(fd);
    return fail("sizing", e, true);
  }
  // Reserve the pages now: a full /dev/shm is found here, not by a SIGBUS later.
  int fe = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (fe != 0 && fe != EINVAL && fe != EOPNOTSUPP) {
    close(fd);
    return fail("reserving", fe, true);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (p == MAP_FAILED) return fail("mapping", e, true);
  out->reset(new ShmSegment(name, static_cast<char*>(p), bytes));
  mapped[name] = *out;
  return true;
}

uint64_t hostShmCollCount() { return gCount.load(std::memory_order_relaxed); }

std::string ShmCollOp::describe() const {
  char buf[200];
  if (waitRank >= 0)
    std::snprintf(buf, sizeof buf, "%s seq %llu (%zu x %s) in shared memory, waiting for rank %d", opKindName(op.kind),
                  static_cast<unsigned long long>(op.seq), op.count, datatypeName(op.datatype), waitRank);
  else
    std::snprintf(buf, sizeof buf, "%s seq %llu (%zu x %s) in shared memory, waiting for every rank to attach",
                  opKindName(op.kind), static_cast<unsigned long long>(op.seq), op.count, datatypeName(op.datatype));
  return buf;
}

ShmColls::ShmColls(ncclComm* comm) : comm_(comm) {}

ShmColls::~ShmColls() {
  if (seg_ && !ready_) seg_->unlink();
}

void ShmColls::setup() {
  maxBytes_ = 0;
  int64_t limit = knobInt(Knob::HostShmMaxBytes);
  if (limit <= 0 || knobBool(Knob::ShmDisable) || !knobListAllows(knobStr(Knob::Algo), "oneshot")) return;
  if (comm_->topo.nNodes() != 1) return;
  auto* mb = dynamic_cast<MpiBootstrap*>(comm_->bootstrap.get());
  if (mb) mpiComm_ = mb->comm();
  // Slots hold whole cache lines; the segment stays addressable (at most 1 GiB per rank).
  size_t cap = (size_t{1} << 30) / 2;
  size_t bytes = static_cast<size_t>(limit) < cap ? static_cast<size_t>(limit) : cap;
  maxBytes_ = (bytes + 63) & ~size_t{63};
}

bool ShmColls::takes(const OpDesc& op) const {
  if (maxBytes_ == 0 || op.isP2p() || op.count == 0) return false;
  if (comm_->nranks == 1) return true;  // a local copy, whatever the size
  size_t bytes = op.count * datatypeSize(op.datatype);
  if (op.kind == OpKind::ReduceScatter) {
    if (bytes > maxBytes_ / static_cast<size_t>(comm_->nranks)) return false;
    bytes *= static_cast<size_t>(comm_->nranks);
  }
  return bytes <= maxBytes_;
}

void ShmColls::start(const OpDesc& op, ShmCollOp* out) {
  out->op = op;
  out->state = 0;
  out->waitRank = -1;
  out->piece = 0;
  out->s = comm_->nranks == 1 ? 0 : nextSeq_++;
  // Not a read-modify-write: a count for tests (one thread per process), not worth an
  // atomic instruction per call; ranks that are threads of one process may lose counts.
  gCount.store(gCount.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

bool ShmColls::use(const OpDesc& op) {
  if (!takes(op)) return false;
  if (seg_ || comm_->nranks == 1) return true;
  // The first operation that comes here maps the segment. Every rank of the node sees the
  // same /dev/shm, so where it cannot give the segment every rank turns the path off at this
  // same operation, and the engine runs it.
  char name[64];
  std::snprintf(name, sizeof name, "/mccl-shm-%016llx", static_cast<unsigned long long>(comm_->topo.shmToken()));
  std::string why;
  if (ShmSegment::open(name, segmentBytes(comm_->nranks, maxBytes_), &seg_, &why)) return true;
  WARN("rank %d: small collectives of this communicator run on the engine, not in shared memory: %s", comm_->rank,
       why.c_str());
  maxBytes_ = 0;
  return false;
}

ncclResult_t ShmColls::join() {
  const int n = comm_->nranks;
  Header* h = seg_->header();
  uint64_t expect = 0;
  if (!h->slotBytes.compare_exchange_strong(expect, maxBytes_) && expect != maxBytes_)
    return MCCL_ERR(ncclInvalidUsage, comm_,
                    "MCCL_HOST_SHM_MAX_BYTES differs between ranks (%zu here, %llu on another rank): give every "
                    "rank the same value",
                    maxBytes_, static_cast<unsigned long long>(expect));
  expect = 0;
  if (!h->nranks.compare_exchange_strong(expect, static_cast<uint64_t>(n)) && expect != static_cast<uint64_t>(n))
    return MCCL_ERR(ncclInternalError, comm_, "shared memory segment %s holds %llu ranks, not %d", seg_->name().c_str(),
                    static_cast<unsigned long long>(expect), n);
  if (h->attached.fetch_add(1) + 1 == static_cast<uint64_t>(n)) seg_->unlink();
  return ncclSuccess;
}

namespace {

// out = the contributions src[0..n) combined in rank order, as the engine combines them:
// PreMulSum multiplies each contribution by the scalar, SumPostDiv divides the sum.
void reduceInOrder(const OpDesc& op, uint64_t scalarBits, void* out, const char* const* src, int n, size_t count) {
  const ncclDataType_t t = op.datatype;
  const RedOpInfo& red = op.red;
  if (red.kind == RedKind::PreMulSum) {
    // out = s * src[0] + s * src[1] + ..., a chunk at a time through a buffer on the stack
    // (out may be src[0] itself: one-rank communicators in place).
    const size_t esize = datatypeSize(t), step = 4096 / esize;
    alignas(64) char scaled[4096];
    hostScale(t, out, src[0], scalarBits, count);
    for (size_t at = 0; at < count; at += step) {
      const size_t k = std::min(step, count - at);
      char* o = static_cast<char*>(out) + at * esize;
      for (int r = 1; r < n; ++r) {
        hostScale(t, scaled, src[r] + at * esize, scalarBits, k);
        hostReduce(red.kind, t, o, o, scaled, k);
      }
    }
    return;
  }
  if (n == 1) {
    if (out != src[0]) std::memmove(out, src[0], count * datatypeSize(t));
  } else {
    hostReduce(red.kind, t, out, src[0], src[1], count);
    for (int r = 2; r < n; ++r) hostReduce(red.kind, t, out, out, src[r], count);
  }
  if (red.kind == RedKind::SumPostDiv) hostDivide(t, out, red.postDivisor, count);
}

uint64_t scalarOf(const OpDesc& op) {
  uint64_t bits = op.red.scalarBits;
  // ncclScalarDevice on a host communicator: read when the operation runs.
  if (op.red.kind == RedKind::PreMulSum && op.red.scalarPtr)
    std::memcpy(&bits, op.red.scalarPtr, datatypeSize(op.datatype));
  return bits;
}

}  // namespace

ncclResult_t ShmColls::runLocal(const OpDesc& op) {
  const char* in = static_cast<const char*>(op.sendbuff);
  if (op.hasReduction()) {
    reduceInOrder(op, scalarOf(op), op.recvbuff, &in, 1, op.count);
  } else if (op.recvbuff != op.sendbuff) {
    std::memmove(op.recvbuff, in, op.count * datatypeSize(op.datatype));
  }
  return ncclSuccess;
}

ncclResult_t ShmColls::progress(ShmCollOp& o) {
  const OpDesc& op = o.op;
  if (o.state == 2) return ncclSuccess;
  if (comm_->nranks == 1) {
    MCCL_CHECK(runLocal(op));
    o.state = 2;
    return ncclSuccess;
  }
  const int n = comm_->nranks, me = comm_->rank;
  const size_t esize = datatypeSize(op.datatype);
  const size_t bytes = op.count * esize;
  // This rank's own contribution is read from its send buffer, not from the cell it has
  // just written: those lines wait in the store buffer until the peers' copies are
  // invalidated, and a load of them stalls until then (perf on the 2-core CI machine, 2
  // ranks: most of a 256-byte AllReduce's reduction). Not where the output overlaps the
  // input: the reduction writes its output before it has read every contribution.
  const size_t writeBytes = op.kind == OpKind::ReduceScatter ? bytes * static_cast<size_t>(n) : bytes;
  const char* const in = static_cast<const char*>(op.sendbuff);
  char* const out = static_cast<char*>(op.recvbuff);
  const size_t outBytes = op.kind == OpKind::AllGather ? bytes * static_cast<size_t>(n) : bytes;
  // (as integers: a buffer a rank does not use may be null)
  const uintptr_t inAt = reinterpret_cast<uintptr_t>(in), outAt = reinterpret_cast<uintptr_t>(out);
  const bool apart = outAt + outBytes <= inAt || inAt + writeBytes <= outAt;
  // Who publishes: every rank but a Broadcast's non-roots and a Reduce's root (whose cell
  // nobody else reads) where it reads its contribution from the send buffer.
  const bool writes =
      op.kind == OpKind::Broadcast ? me == op.root : !(op.kind == OpKind::Reduce && me == op.root && apart);
  const Where where = writeBytes <= kLinesMaxBytes ? Where::Lines
                      : writeBytes <= kPackedBytes ? Where::Packed
                                                   : Where::Slot;
  const bool inLine = where == Where::Lines;
  const int lines = inLine ? static_cast<int>((writeBytes + kLineData - 1) / kLineData) : 1;
  // Contiguous data (Packed, Slot) travels in pieces, piece p announced by line p's number,
  // so readers copy or reduce one piece while the writer fills the next.
  const Pieces pieces = inLine ? Pieces{} : piecesOf(writeBytes, where == Where::Slot);
  // Rank r's contiguous data (Packed, Slot).
  auto data = [&](int r) {
    return where == Where::Packed ? seg_->packed(n, r, o.s) : seg_->slot(n, r, o.s, maxBytes_);
  };
  // Line l of rank r's cell holds this operation's number: its data (the line's or piece
  // l's) is there.
  auto lineIn = [&](int r, int l) { return seg_->cell(r, o.s)[l].seq.load(std::memory_order_acquire) >= o.s; };
  // Rank r's data for this operation is all there (Lines).
  auto arrived = [&](int r) {
    bool all = true;
    for (int l = 0; l < lines; ++l) all &= lineIn(r, l);
    return all;
  };
  // Copies bytes of rank r's data from offset off to dst (Lines).
  auto copyOut = [&](int r, size_t off, size_t len, char* dst) {
    const Line* c = seg_->cell(r, o.s);
    while (len > 0) {
      size_t l = off / kLineData, at = off % kLineData, k = std::min(len, kLineData - at);
      std::memcpy(dst, c[l].data + at, k);
      dst += k, off += k, len -= k;
    }
  };
  if (o.state == 0) {
    if (!joined_) {
      MCCL_CHECK(join());
      joined_ = true;
    }
    if (!ready_) {
      // The first operation waits until every rank has mapped the segment (and the last
      // one unlinked its name), so a rank that finishes early cannot remove it under a
      // rank that has not opened it yet.
      if (seg_->header()->attached.load(std::memory_order_acquire) < static_cast<uint64_t>(n)) return ncclSuccess;
      ready_ = true;
    }
    if (writes) {
      // Line and slot free: every rank has finished the operation that used them last.
      const uint64_t back = where == Where::Slot ? static_cast<uint64_t>(slotDepth(maxBytes_, n)) : kLines;
      if (o.s > back && minDone_ < o.s - back) {
        uint64_t m = ~uint64_t{0};
        for (int r = 0; r < n; ++r) {
          uint64_t d = seg_->done(n, r)->done.load(std::memory_order_acquire);
          if (d < m) {
            m = d;
            o.waitRank = r;
          }
        }
        minDone_ = m;
        if (m < o.s - back) return ncclSuccess;
      }
      Line* c = seg_->cell(me, o.s);
      if (inLine) {
        for (int l = 0; l < lines; ++l) {
          size_t at = static_cast<size_t>(l) * kLineData;
          std::memcpy(c[l].data, in + at, std::min(kLineData, writeBytes - at));
          c[l].seq.store(o.s, std::memory_order_release);
        }
      } else {
        char* d = data(me);
        for (int p = 0; p < pieces.count; ++p) {
          const size_t at = pieces.at(p);
          std::memcpy(d + at, in + at, pieces.len(p, writeBytes));
          c[p].seq.store(o.s, std::memory_order_release);
        }
      }
    }
    if (op.kind == OpKind::Broadcast && me == op.root && op.recvbuff != op.sendbuff)
      std::memcpy(op.recvbuff, op.sendbuff, bytes);
    o.state = 1;
    o.waitRank = 0;
  }
  // Lines: waits for every line of the ranks it reads, in rank order, then copies or
  // reduces. False while waiting.
  auto readLines = [&] {
    for (int r = op.kind == OpKind::Broadcast ? op.root : o.waitRank; r < n; ++r) {
      if (r != me && !arrived(r)) {
        o.waitRank = r;
        return false;
      }
      if (op.kind == OpKind::Broadcast) break;
    }
    switch (op.kind) {
      case OpKind::Broadcast: copyOut(op.root, 0, bytes, out); break;
      case OpKind::AllGather:
        for (int r = 0; r < n; ++r) {
          char* dst = out + static_cast<size_t>(r) * bytes;
          if (r != me) copyOut(r, 0, bytes, dst);
          else if (dst != in) std::memcpy(dst, in, bytes);  // in place: already there
        }
        break;
      default: {
        Sources src(n);
        const char** s = src.get();
        // Combined a line at a time where they lie (a line holds whole elements), no copy
        // out of the cells first.
        const uint64_t scalar = scalarOf(op);
        const size_t off = op.kind == OpKind::ReduceScatter ? static_cast<size_t>(me) * bytes : 0;
        for (size_t at = off, end = off + bytes; at < end;) {
          const size_t l = at / kLineData, from = at % kLineData, k = std::min(end - at, kLineData - from);
          for (int r = 0; r < n; ++r) s[r] = seg_->cell(r, o.s)[l].data + from;
          if (apart) s[me] = in + at;
          reduceInOrder(op, scalar, out + (at - off), s, n, k / esize);
          at += k;
        }
        break;
      }
    }
    return true;
  };
  // Packed cell and slot: each piece copied or reduced as soon as it is there (o.piece: the
  // next one; AllGather reads rank o.waitRank's). False while waiting.
  auto readPieces = [&] {
    switch (op.kind) {
      case OpKind::Broadcast:
        for (; o.piece < pieces.count; ++o.piece) {
          if (!lineIn(op.root, o.piece)) {
            o.waitRank = op.root;
            return false;
          }
          const size_t at = pieces.at(o.piece);
          std::memcpy(out + at, data(op.root) + at, pieces.len(o.piece, bytes));
        }
        return true;
      case OpKind::AllGather:
        for (; o.waitRank < n; ++o.waitRank, o.piece = 0) {
          const int r = o.waitRank;
          char* dst = out + static_cast<size_t>(r) * bytes;
          if (r == me) {
            if (dst != in) std::memcpy(dst, in, bytes);  // in place: already there
            continue;
          }
          for (; o.piece < pieces.count; ++o.piece) {
            if (!lineIn(r, o.piece)) return false;
            const size_t at = pieces.at(o.piece);
            std::memcpy(dst + at, data(r) + at, pieces.len(o.piece, bytes));
          }
        }
        return true;
      default: {
        // The pieces cover what every rank writes; this rank combines its part, [off, end).
        const size_t off = op.kind == OpKind::ReduceScatter ? static_cast<size_t>(me) * bytes : 0, end = off + bytes;
        const uint64_t scalar = scalarOf(op);
        for (; o.piece < pieces.count; ++o.piece) {
          const size_t at = pieces.at(o.piece);
          const size_t from = std::max(off, at), to = std::min(end, at + pieces.len(o.piece, writeBytes));
          if (from >= to) continue;
          for (int r = 0; r < n; ++r)
            if (r != me && !lineIn(r, o.piece)) {
              o.waitRank = r;
              return false;
            }
          Sources src(n);
          const char** s = src.get();
          for (int r = 0; r < n; ++r) s[r] = data(r) + from;
          if (apart) s[me] = in + from;
          reduceInOrder(op, scalar, out + (from - off), s, n, (to - from) / esize);
        }
        return true;
      }
    }
  };
  const bool reads = op.kind == OpKind::Broadcast ? me != op.root : op.kind != OpKind::Reduce || me == op.root;
  if (reads && !(inLine ? readLines() : readPieces())) return ncclSuccess;
  seg_->done(n, me)->done.store(o.s, std::memory_order_release);
  o.state = 2;
  o.waitRank = -1;
  return ncclSuccess;
}

ncclResult_t ShmColls::runAlone(const OpDesc& op, const std::atomic<bool>& aborted) {
  ShmCollOp o;
  start(op, &o);
  LoneWait wait(comm_, aborted, mpiComm_);
  for (;;) {
    MCCL_CHECK(progress(o));
    if (o.done()) return ncclSuccess;
    MCCL_CHECK(wait.idle([&] { return o.describe(); }));
  }
}

}  // namespace mccl
