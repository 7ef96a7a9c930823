#include "host_engine/shm_segment.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

namespace mccl {
namespace {

constexpr uint64_t kLiveMask = (uint64_t{1} << 24) - 1;
constexpr uint64_t kAttachedOne = uint64_t{1} << 24;
constexpr uint64_t kClosed = uint64_t{1} << 63;
uint64_t attachedOf(uint64_t w) { return (w >> 24) & kLiveMask; }

size_t roundUp(size_t x, size_t to) { return (x + to - 1) / to * to; }

}  // namespace

uint64_t shmElapsedNs(uint64_t t0) {
  const uint64_t t = shmNowNs() - t0;
  static const uint64_t overhead = [] {  // measured once, after the first time is read
    uint64_t least = ~uint64_t{0};
    for (int i = 0; i < 16; ++i) {
      const uint64_t a = shmNowNs(), b = shmNowNs();
      least = b - a < least ? b - a : least;
    }
    return least;
  }();
  return t > overhead ? t - overhead : 0;
}

void shmPut(char* dst, const char* src, size_t n, bool stream) {
#if defined(__x86_64__)
  if (stream) {
    // Up to dst's next 16-byte boundary an ordinary copy, then whole lines of four 16-byte
    // streaming stores (the write-combining buffer sends a full line at once), the rest
    // ordinary again; the fence orders the streaming stores before the announcement.
    size_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
    head = head < n ? head : n;
    std::memcpy(dst, src, head);
    dst += head, src += head, n -= head;
    for (; n >= 64; n -= 64, dst += 64, src += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), d);
    }
    for (; n >= 16; n -= 16, dst += 16, src += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
    std::memcpy(dst, src, n);
    _mm_sfence();
    return;
  }
#else
  (void)stream;
#endif
  std::memcpy(dst, src, n);
}

ShmLayout::ShmLayout(int n, size_t slot) : nranks(n), slotBytes(slot) {
  const size_t nr = static_cast<size_t>(n);
  slotDepth = shmSlotDepth(slot, n);
  p2pDepth = shmP2pDepth(n);
  p2pRow = roundUp(nr * sizeof(uint64_t), kShmLine);
  cells = kShmLine;
  packed = cells + nr * kShmCells * kShmCell;
  done = packed + nr * kShmCells * kShmCell;
  slots = done + nr * kShmLine;
  p2pDone = slots + nr * static_cast<size_t>(slotDepth) * slot;
  p2pSlotRow = roundUp(static_cast<size_t>(slotDepth) * sizeof(uint64_t), kShmLine);
  const bool p2p = p2pDepth > 0;
  p2pCells = p2pDone + (p2p ? nr * p2pRow : 0);
  p2pSlotRead = p2pCells + nr * nr * static_cast<size_t>(p2pDepth) * kShmP2pCell;
  p2pSlots = p2pSlotRead + (p2p ? nr * p2pSlotRow : 0);
  bytes = p2pSlots + (p2p ? nr * static_cast<size_t>(slotDepth) * slot : 0);
}

ShmSegment::~ShmSegment() { munmap(base_, layout_.bytes); }

bool ShmSegment::map(const std::string& name, const ShmLayout& layout, const ShmSegment* stale,
                     std::shared_ptr<ShmSegment>* out, std::string* why) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<ShmSegment>> mapped;
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = mapped.begin(); it != mapped.end();) it = it->second.expired() ? mapped.erase(it) : std::next(it);
  auto it = mapped.find(name);
  if (it != mapped.end()) {
    std::shared_ptr<ShmSegment> have = it->second.lock();
    if (have && have.get() != stale) {
      *out = std::move(have);
      return true;
    }
    mapped.erase(it);
  }
  const size_t bytes = layout.bytes;
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
  out->reset(new ShmSegment(name, static_cast<char*>(p), layout));
  mapped[name] = *out;
  return true;
}

bool ShmSegment::attach(const std::string& name, const ShmLayout& layout, std::shared_ptr<ShmSegment>* out,
                        std::string* why) {
  // A closed segment is one whose name is being unlinked: open the name again until it
  // gives the new one (the unlinking rank is a few instructions from shm_unlink; should it
  // never get there, give up after ten seconds).
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<ShmSegment> seg;
  for (const ShmSegment* stale = nullptr;; stale = seg.get()) {
    std::shared_ptr<ShmSegment> prev = std::move(seg);  // keeps stale's address unreused
    if (!map(name, layout, stale, &seg, why)) return false;
    std::atomic<uint64_t>& word = seg->header()->attach;
    uint64_t w = word.load(std::memory_order_acquire);
    while (!(w & kClosed)) {
      uint64_t next = w + 1 + kAttachedOne;
      const bool last = attachedOf(next) >= static_cast<uint64_t>(layout.nranks);
      if (last) next |= kClosed;
      if (word.compare_exchange_weak(w, next, std::memory_order_acq_rel)) {
        if (last) shm_unlink(name.c_str());  // every rank has it mapped: the name is no longer needed
        *out = std::move(seg);
        return true;
      }
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
      *why = "segment " + name + " stayed closed for 10 s";
      return false;
    }
    sched_yield();
  }
}

void ShmSegment::detach(bool force) {
  std::atomic<uint64_t>& word = header()->attach;
  uint64_t w = word.load(std::memory_order_acquire);
  while (!word.compare_exchange_weak(w, w - 1, std::memory_order_acq_rel)) {
  }
  w -= 1;
  if (w & kClosed) return;  // every rank attached: the name is gone already
  if (!force && ((w & kLiveMask) != 0 || messagesForAbsentRanks())) return;
  // The last one here (or a failed communicator): close, unless a rank attached meanwhile.
  while (!(w & kClosed) && (force || (w & kLiveMask) == 0))
    if (word.compare_exchange_weak(w, w | kClosed, std::memory_order_acq_rel)) {
      shm_unlink(name_.c_str());
      return;
    }
}

bool ShmSegment::messagesForAbsentRanks() const {
  if (layout_.p2pDepth == 0) return false;
  for (int to = 0; to < layout_.nranks; ++to) {
    if (done(to)->attached.load(std::memory_order_acquire) != 0) continue;
    for (int from = 0; from < layout_.nranks; ++from) {
      const uint64_t read = p2pDone(to, from)->load(std::memory_order_acquire);
      for (int k = 0; k < layout_.p2pDepth; ++k)
        if (p2pCell(to, from, static_cast<uint64_t>(k))->seq.load(std::memory_order_acquire) > read) return true;
    }
  }
  return false;
}

uint64_t ShmSegment::attachedRanks() const {
  return attachedOf(header()->attach.load(std::memory_order_acquire));
}

}  // namespace mccl
