#include "host_engine/shm_coll.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/comm.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/types.h"
#include "host_engine/lone_wait.h"
#include "host_engine/reduce.h"
#include "host_engine/shm_segment.h"

namespace mccl {
namespace {

std::atomic<uint64_t> gCount{0}, gP2pCount{0};

// A cell is 8 cache lines of 56 data bytes and the operation's sequence number each (LL128's
// idea on host memory). The writer fills a line, then stores its number (release); the
// reader polls every line it needs at once, so the lines travel in parallel and the data
// has arrived when the numbers have. Up to three lines: each further line costs more than
// one contiguous copy (np 2, AllReduce of 256 B in five lines 0.30 us, 0.27 contiguous; 64 B
// in two lines 0.20, 0.23 contiguous). Larger data goes contiguous to the rank's packed cell
// of the same index (to 512 B; as deep as the cells, which matters where ranks outnumber
// cores: np 4, Broadcast of 256 B 0.19 us from a cell, 0.91 from a slot) or to a slot,
// announced by the first line's number.
constexpr size_t kLineData = kShmLineData;
constexpr size_t kLinesMaxBytes = 3 * kLineData;  // 168
constexpr size_t kPackedBytes = kShmCell;
static_assert(kLineData % 8 == 0, "a line holds whole elements of every type");
// Cells per rank: operation s publishes in cell s % 64, so a writer waits for the readers
// only every few operations (done >= s - 64), and a reader's done counter stays in its own
// cache most of the time. Slots likewise (s % slots, done >= s - slots), as many as fit the
// slot budget (shmSlotDepth: 16 at the default slot size up to 4 ranks, 8 at 8, 2 from 32).
// Depth matters most when ranks outnumber cores: a root can run that many operations ahead
// while its readers wait for a core (4 ranks on 2 cores, 4 slots of 64 KiB against 16:
// Reduce of 1 KiB 2.02 against 0.72 us, Broadcast of 4 KiB 2.29 against 1.03;
// bench/results/host-2core-2026-12-04.md).
constexpr int kLines = kShmCells;
using Line = ShmLine;

// Where one operation's data goes (the same on every rank: it depends on the size alone).
enum class Where { Lines, Packed, Slot };

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

// Whether one rank writes a block for every rank: a ReduceScatter's input, an AlltoAll's or
// a Scatter's root's blocks.
bool writesEveryRanksBlock(OpKind k) {
  return k == OpKind::ReduceScatter || k == OpKind::AlltoAll || k == OpKind::Scatter;
}

}  // namespace

uint64_t hostShmCollCount() { return gCount.load(std::memory_order_relaxed); }
uint64_t hostShmP2pCount() { return gP2pCount.load(std::memory_order_relaxed); }

std::string ShmOp::describe() const {
  char buf[200];
  if (op.isP2p())
    std::snprintf(buf, sizeof buf, "%s of %zu x %s %s rank %d (its message %llu) in shared memory", opKindName(op.kind),
                  op.count, datatypeName(op.datatype), op.kind == OpKind::Send ? "to" : "from", op.root,
                  static_cast<unsigned long long>(s));
  else if (waitRank >= 0)
    std::snprintf(buf, sizeof buf, "%s seq %llu (%zu x %s) in shared memory, waiting for rank %d", opKindName(op.kind),
                  static_cast<unsigned long long>(op.seq), op.count, datatypeName(op.datatype), waitRank);
  else
    std::snprintf(buf, sizeof buf, "%s seq %llu (%zu x %s) in shared memory, waiting for every rank to attach",
                  opKindName(op.kind), static_cast<unsigned long long>(op.seq), op.count, datatypeName(op.datatype));
  return buf;
}

ShmColls::ShmColls(ncclComm* comm) : comm_(comm) {}

ShmColls::~ShmColls() {
  // A failed communicator's peers are gone or failing too: remove the name now rather
  // than wait for ranks that may never leave.
  if (seg_) seg_->detach(comm_->aborted.load() || comm_->asyncError.load() != ncclSuccess);
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
  const int64_t streamFrom = knobInt(Knob::HostShmStreamBytes);
  bool always = false;
  ShmStreamChoice::Mode mode = ShmStreamChoice::Mode::Auto;
  if (knobForced(Knob::HostShmStream, &always))
    mode = always ? ShmStreamChoice::Mode::Always : ShmStreamChoice::Mode::Never;
  // Where ranks wait by yielding their cores (they outnumber them: MCCL_IDLE_YIELD), a
  // timed copy measures the scheduler as much as the caches, and streaming measured slower
  // there (4 ranks on 2 cores: AllReduce 64 KiB 24.8 us ordinary, 34.5 streamed).
  if (mode == ShmStreamChoice::Mode::Auto && comm_->idleYieldSoon) mode = ShmStreamChoice::Mode::Never;
  if (streamFrom <= 0) mode = ShmStreamChoice::Mode::Never;
  stream_ = ShmStreamChoice(mode, streamFrom > 0 ? static_cast<size_t>(streamFrom) : 0);
  p2pDepth_ = shmP2pDepth(comm_->nranks);
  if (p2pDepth_ > 0) {
    const size_t n = static_cast<size_t>(comm_->nranks);
    sendSeq_.assign(n, 0);
    recvSeq_.assign(n, 0);
    sent_.assign(n, 0);
    recvDone_.assign(n, 0);
    sendFreed_.assign(n, 0);
  }
}

bool ShmColls::takes(const OpDesc& op) const {
  if (maxBytes_ == 0 || op.count == 0) return false;
  size_t bytes = op.count * datatypeSize(op.datatype);
  if (op.isP2p()) return p2pDepth_ > 0 && bytes <= maxBytes_;
  if (comm_->nranks == 1) return true;  // a local copy, whatever the size
  if (bytes > maxBytes_) return false;
  // A block for every rank: at most maxBytes_ (2^29) times the ranks, no overflow (and no
  // division on the way of every small call).
  if (writesEveryRanksBlock(op.kind)) bytes *= static_cast<size_t>(comm_->nranks);
  return bytes <= maxBytes_;
}

void ShmColls::start(const OpDesc& op, ShmOp* out, bool same) {
  if (!same) out->op = op;
  out->state = 0;
  out->waitRank = -1;
  out->piece = 0;
  if (op.isP2p()) {
    out->s = numberP2p(op);
    return;
  }
  out->s = comm_->nranks == 1 ? 0 : nextSeq_++;
  // Not a read-modify-write: a count for tests (one thread per process), not worth an
  // atomic instruction per call; ranks that are threads of one process may lose counts.
  gCount.store(gCount.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

uint64_t ShmColls::numberP2p(const OpDesc& op) {
  gP2pCount.store(gP2pCount.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // Numbered per pair in call order on both ends: NCCL's matching of Sends and Recvs.
  return ++(op.kind == OpKind::Send ? sendSeq_ : recvSeq_)[static_cast<size_t>(op.root)];
}

bool ShmColls::use(const OpDesc& op) {
  if (!takes(op)) return false;
  if (seg_ || comm_->nranks == 1) return true;
  // The first operation that comes here maps the segment and attaches this rank. Every rank
  // of the node sees the same /dev/shm, so where it cannot give the segment every rank
  // turns the path off at this same operation, and the engine runs it.
  char name[64];
  std::snprintf(name, sizeof name, "/mccl-shm-%016llx", static_cast<unsigned long long>(comm_->topo.shmToken()));
  std::string why;
  if (ShmSegment::attach(name, ShmLayout(comm_->nranks, maxBytes_), &seg_, &why)) {
    seg_->done(comm_->rank)->attached.store(1, std::memory_order_release);
    return true;
  }
  WARN("rank %d: small collectives and messages of this communicator run on the engine, not in shared memory: %s",
       comm_->rank, why.c_str());
  maxBytes_ = 0;
  return false;
}

ncclResult_t ShmColls::join() {
  const int n = comm_->nranks;
  ShmHeader* h = seg_->header();
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

ncclResult_t ShmColls::progress(ShmOp& o) {
  const OpDesc& op = o.op;
  if (o.state == 2) return ncclSuccess;
  if (op.isP2p()) return progressP2p(o);
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
  const size_t writeBytes = writesEveryRanksBlock(op.kind) ? bytes * static_cast<size_t>(n) : bytes;
  const char* const in = static_cast<const char*>(op.sendbuff);
  char* const out = static_cast<char*>(op.recvbuff);
  const size_t outBytes = op.kind == OpKind::AllGather ? bytes * static_cast<size_t>(n) : bytes;
  // (as integers: a buffer a rank does not use may be null)
  const uintptr_t inAt = reinterpret_cast<uintptr_t>(in), outAt = reinterpret_cast<uintptr_t>(out);
  const bool apart = outAt + outBytes <= inAt || inAt + writeBytes <= outAt;
  // Who publishes and who reads: a Broadcast's and a Scatter's root publishes, the others
  // read; a Reduce's and a Gather's root reads, the others publish (a Reduce's root too
  // where its output overlaps its input); every rank of the rest does both.
  bool writes = true, reads = true;
  switch (op.kind) {
    case OpKind::Broadcast:
    case OpKind::Scatter: writes = me == op.root, reads = !writes; break;
    case OpKind::Reduce: reads = me == op.root, writes = !(reads && apart); break;
    case OpKind::Gather: reads = me == op.root, writes = !reads; break;
    default: break;
  }
  const Where where = writeBytes <= kLinesMaxBytes ? Where::Lines
                      : writeBytes <= kPackedBytes ? Where::Packed
                                                   : Where::Slot;
  const bool inLine = where == Where::Lines;
  const int lines = inLine ? static_cast<int>((writeBytes + kLineData - 1) / kLineData) : 1;
  // Contiguous data (Packed, Slot) travels in pieces, piece p announced by line p's number,
  // so readers copy or reduce one piece while the writer fills the next.
  const ShmPieces pieces = inLine ? ShmPieces{} : shmPiecesOf(writeBytes, where == Where::Slot);
  // Rank r's contiguous data (Packed, Slot).
  auto data = [&](int r) {
    return where == Where::Packed ? seg_->packed(r, o.s) : seg_->slot(r, o.s);
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
      // The first collective waits until every rank has attached (and the last one
      // unlinked the name): a root that finished early and left could otherwise be the
      // last one there, and remove the name under a rank that has not opened it yet.
      if (seg_->attachedRanks() < static_cast<uint64_t>(n)) return ncclSuccess;
      ready_ = true;
    }
    if (writes) {
      // Line and slot free: every rank has finished the operation that used them last.
      const uint64_t back = where == Where::Slot ? static_cast<uint64_t>(seg_->layout().slotDepth) : kLines;
      if (o.s > back && minDone_ < o.s - back) {
        uint64_t m = ~uint64_t{0};
        for (int r = 0; r < n; ++r) {
          uint64_t d = seg_->done(r)->done.load(std::memory_order_acquire);
          if (d < m) {
            m = d;
            o.waitRank = r;
          }
        }
        minDone_ = m;
        if (m < o.s - back) return ncclSuccess;
      }
      Line* c = seg_->cell(me, o.s);
      // A Scatter's root and an AlltoAll's ranks leave their own block out, which nobody
      // reads (a ReduceScatter in place reads its own from the cell): half of a 2-rank
      // Scatter's copy. [ownFrom, ownTo) is empty for the rest.
      const bool ownOut = op.kind == OpKind::Scatter || op.kind == OpKind::AlltoAll;
      const size_t ownFrom = ownOut ? static_cast<size_t>(me) * bytes : 0;
      const size_t ownTo = ownOut ? ownFrom + bytes : 0;
      // Copies the input's bytes [at, at + len), less [ownFrom, ownTo), to dst (where `at`
      // goes); into a slot with streaming stores where stream_ says so (shm_segment.h).
      bool timed = false;
      const bool stream =
          where == Where::Slot &&
          stream_.stream(writeBytes, &slotHigh_[o.s % static_cast<uint64_t>(seg_->layout().slotDepth)], &timed);
      auto copyIn = [&](char* dst, size_t at, size_t len) {
        const size_t end = at + len;
        if (ownTo <= at || end <= ownFrom) {
          shmPut(dst, in + at, len, stream);
          return;
        }
        if (at < ownFrom) shmPut(dst, in + at, ownFrom - at, stream);
        if (ownTo < end) shmPut(dst + (ownTo - at), in + ownTo, end - ownTo, stream);
      };
      if (inLine) {
        for (int l = 0; l < lines; ++l) {
          const size_t at = static_cast<size_t>(l) * kLineData;
          copyIn(c[l].data, at, std::min(kLineData, writeBytes - at));
          c[l].seq.store(o.s, std::memory_order_release);
        }
      } else {
        char* d = data(me);
        const uint64_t t0 = timed ? shmNowNs() : 0;
        for (int p = 0; p < pieces.count; ++p) {
          copyIn(d + pieces.at(p), pieces.at(p), pieces.len(p, writeBytes));
          c[p].seq.store(o.s, std::memory_order_release);
        }
        if (timed) stream_.copied(writeBytes - (ownTo - ownFrom), shmElapsedNs(t0));
      }
    }
    // This rank's own block (in place: already there).
    const size_t mine = static_cast<size_t>(me) * bytes;
    switch (op.kind) {
      case OpKind::Broadcast:
        if (me == op.root && out != in) std::memcpy(out, in, bytes);
        break;
      case OpKind::AlltoAll:
        if (out != in) std::memcpy(out + mine, in + mine, bytes);
        break;
      case OpKind::Gather:
        if (me == op.root && out + mine != in) std::memcpy(out + mine, in, bytes);
        break;
      case OpKind::Scatter:
        if (me == op.root && out != in + mine) std::memcpy(out, in + mine, bytes);
        break;
      default: break;
    }
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
  // AlltoAll, Gather, Scatter: each block this rank reads (rank r's block for this rank, or
  // a Gather's every block), a line or piece at a time as each is there (o.waitRank: the
  // rank read now, o.piece: its next line or piece). False while waiting.
  auto readBlocks = [&] {
    const size_t unit = inLine ? kLineData : pieces.bytes;
    const int units = inLine ? lines : pieces.count;
    const size_t off = op.kind == OpKind::Gather ? 0 : static_cast<size_t>(me) * bytes, end = off + bytes;
    for (; o.waitRank < n; ++o.waitRank, o.piece = 0) {
      const int r = o.waitRank;
      if (r == me || (op.kind == OpKind::Scatter && r != op.root)) continue;
      char* dst = op.kind == OpKind::Scatter ? out : out + static_cast<size_t>(r) * bytes;
      const char* src = inLine ? nullptr : data(r);
      for (o.piece = std::max(o.piece, static_cast<int>(off / unit)); o.piece < units; ++o.piece) {
        const size_t at = static_cast<size_t>(o.piece) * unit;
        if (at >= end) break;
        if (!lineIn(r, o.piece)) return false;
        const size_t from = std::max(off, at), to = std::min(end, at + unit);
        const char* p = inLine ? seg_->cell(r, o.s)[o.piece].data + (from - at) : src + from;
        std::memcpy(dst + (from - off), p, to - from);
      }
    }
    return true;
  };
  if (reads) {
    const bool got = op.isWholeP2pCall() ? readBlocks() : inLine ? readLines() : readPieces();
    if (!got) return ncclSuccess;
  }
  seg_->done(me)->done.store(o.s, std::memory_order_release);
  o.state = 2;
  o.waitRank = -1;
  return ncclSuccess;
}

ncclResult_t ShmColls::runAlone(const OpDesc& op, const std::atomic<bool>& aborted) {
  ShmOp o(op);  // not ShmOp o: its constructor clears it first (`rep stos`, start-up heavy)
  start(op, &o, true);
  LoneWait wait(comm_, aborted, mpiComm_);
  for (;;) {
    MCCL_CHECK(progress(o));
    if (o.done()) return ncclSuccess;
    MCCL_CHECK(wait.idle([&] { return o.describe(); }));
  }
}

void ShmColls::add(ShmBatch& b, const OpDesc& op) {
  b.ops.emplace_back(op);
  start(op, &b.ops.back(), true);
  ++b.left;
}

ncclResult_t ShmColls::advance(ShmBatch& b, bool* moved) {
  auto skip = [&] {
    while (b.coll < b.ops.size() && (b.ops[b.coll].op.isP2p() || b.ops[b.coll].done())) ++b.coll;
  };
  skip();
  for (size_t i = 0; b.left > 0 && i < b.ops.size(); ++i) {
    ShmOp& o = b.ops[i];
    if (o.done() || (!o.op.isP2p() && i != b.coll)) continue;
    MCCL_CHECK(progress(o));
    if (!o.done()) continue;
    *moved = true;
    --b.left;
    skip();
  }
  return ncclSuccess;
}

std::string ShmBatch::describe() const {
  for (const ShmOp& o : ops)
    if (!o.done()) return o.describe();
  return "completing";
}

ncclResult_t ShmColls::runGroup(const std::vector<OpDesc>& ops, const std::atomic<bool>& aborted) {
  bool onlyP2p = true;
  for (const OpDesc& op : ops) onlyP2p = onlyP2p && op.isP2p();
  if (onlyP2p) return runP2pGroup(ops, aborted);
  group_.clear();
  for (const OpDesc& op : ops) add(group_, op);
  LoneWait wait(comm_, aborted, mpiComm_);
  for (;;) {
    bool moved = false;
    MCCL_CHECK(advance(group_, &moved));
    if (group_.done()) return ncclSuccess;
    if (moved)
      wait.progressed();
    else
      MCCL_CHECK(wait.idle([&] { return group_.describe(); }));
  }
}

}  // namespace mccl
