// The user-buffer path's host side (user_buffers.h): the import service of this process and
// the cache of this process's buffers imported by its peers.
#include "ipc_transport/user_buffers.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/comm.h"
#include "core/cuda_guard.h"
#include "core/cuda_util.h"
#include "core/debug.h"
#include "core/knobs.h"
#include "core/peer_info.h"

namespace mccl {
namespace {

constexpr uint32_t kMagic = 0x75627566;  // "ubuf"
enum Op : uint32_t { kOpOpen = 1, kOpClose = 2 };
constexpr int kCallTimeoutMs = 5000;

struct Request {
  uint32_t magic;
  uint32_t op;
  int32_t dev;  // the importer's CUDA device (its own numbering)
  int32_t pad;
  cudaIpcMemHandle_t handle;
};
struct Reply {
  int32_t status;  // cudaError_t of the open, or -1: refused
  int32_t pad;
  uint64_t ptr;    // the allocation's base in the importer
};

socklen_t serviceAddress(uint64_t processHash, sockaddr_un* a) {
  std::memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  // Abstract namespace (leading NUL): nothing on disk to clean up after a crash.
  const int n = std::snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "mccl-ubuf-%016llx",
                              static_cast<unsigned long long>(processHash));
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

// Whole-message I/O with a deadline (poll before every read and write).
bool transfer(int fd, void* buf, size_t len, bool send, int timeoutMs) {
  char* p = static_cast<char*>(buf);
  while (len > 0) {
    pollfd pfd{fd, static_cast<short>(send ? POLLOUT : POLLIN), 0};
    const int r = poll(&pfd, 1, timeoutMs);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    const ssize_t n = send ? ::send(fd, p, len, MSG_NOSIGNAL) : ::recv(fd, p, len, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

std::atomic<size_t> g_imported{0}, g_importsMade{0};

// The service: one thread, one request per connection, answered in order; closes are left
// to a second thread. Closing an IPC mapping synchronizes the device (it waits for the
// kernels in flight), and a kernel in flight may be waiting for the very peer that asked
// for the close: the service answers at once and the closer waits for the device.
class ImportService {
 public:
  bool start(uint64_t processHash) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return false;
    sockaddr_un a;
    const socklen_t len = serviceAddress(processHash, &a);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(fd_, 64) != 0) {
      WARN("user buffers: cannot open the import service's socket: %s", std::strerror(errno));
      ::close(fd_);
      fd_ = -1;
      return false;
    }
    std::thread([this] { run(); }).detach();
    std::thread([this] { closer(); }).detach();
    return true;
  }

 private:
  // No CUDA call before the first request, and the request's device made current first: a
  // runtime call on a thread with no device set would make a context on device 0.
  static void useDevice(int dev, bool* relaxed) {
    cudaSetDevice(dev);
    if (!*relaxed) {
      // Its CUDA calls are allowed while the process's other threads capture graphs in the
      // global mode (PyTorch's default), and invalidate none of their captures.
      cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
      cudaThreadExchangeStreamCaptureMode(&mode);
      *relaxed = true;
    }
  }

  void closer() {
    bool relaxed = false;
    for (;;) {
      Imported m;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !closing_.empty(); });
        m = closing_.begin()->second;
        closing_.erase(closing_.begin());
      }
      useDevice(m.dev, &relaxed);
      cudaIpcCloseMemHandle(m.ptr);
      cudaGetLastError();
      g_imported.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  void run() {
    for (;;) {
      const int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) {
        if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) continue;
        return;
      }
      serve(c);
      ::close(c);
    }
  }

  void serve(int c) {
    Request r;
    if (!transfer(c, &r, sizeof r, false, kCallTimeoutMs) || r.magic != kMagic) return;
    Reply rep{};
    rep.status = -1;
    const std::string key(reinterpret_cast<const char*>(&r.handle), sizeof r.handle);
    if (r.op == kOpClose) {  // asked without waiting for an answer
      auto it = imports_.find(key);
      if (it != imports_.end() && --it->second.refs == 0) {
        std::lock_guard<std::mutex> lock(mu_);
        closing_[key] = it->second;
        imports_.erase(it);
        cv_.notify_one();
      }
      return;
    }
    if (r.op != kOpOpen) return;
    auto it = imports_.find(key);
    if (it == imports_.end()) {
      // Asked again before the closer got to it: the mapping is still good.
      std::lock_guard<std::mutex> lock(mu_);
      auto pending = closing_.find(key);
      if (pending != closing_.end()) {
        it = imports_.emplace(key, pending->second).first;
        it->second.refs = 0;
        closing_.erase(pending);
      }
    }
    if (it != imports_.end()) {
      ++it->second.refs;
      rep.status = 0;
      rep.ptr = reinterpret_cast<uint64_t>(it->second.ptr);
    } else {
      useDevice(r.dev, &relaxed_);
      void* p = nullptr;
      const cudaError_t e = cudaIpcOpenMemHandle(&p, r.handle, cudaIpcMemLazyEnablePeerAccess);
      rep.status = static_cast<int32_t>(e);
      if (e == cudaSuccess) {
        imports_[key] = Imported{p, 1, r.dev};
        g_imported.fetch_add(1, std::memory_order_relaxed);
        g_importsMade.fetch_add(1, std::memory_order_relaxed);
        rep.ptr = reinterpret_cast<uint64_t>(p);
      } else {
        cudaGetLastError();
      }
    }
    transfer(c, &rep, sizeof rep, true, kCallTimeoutMs);
  }

  struct Imported {
    void* ptr = nullptr;
    int refs = 0;
    int dev = 0;
  };
  int fd_ = -1;
  bool relaxed_ = false;
  std::map<std::string, Imported> imports_;  // by the handle's bytes (one open per allocation)
  std::mutex mu_;                            // closing_, shared with the closer
  std::condition_variable cv_;
  std::map<std::string, Imported> closing_;
};

// One request to peer process's service; false when it cannot be reached or does not answer.
// rep null: no answer is waited for (a close).
bool callService(uint64_t peerHash, const Request& r, Reply* rep) {
  const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  sockaddr_un a;
  const socklen_t len = serviceAddress(peerHash, &a);
  bool ok = connect(s, reinterpret_cast<sockaddr*>(&a), len) == 0;
  Request q = r;
  ok = ok && transfer(s, &q, sizeof q, true, kCallTimeoutMs) &&
       (rep == nullptr || transfer(s, rep, sizeof *rep, false, kCallTimeoutMs));
  ::close(s);
  return ok;
}

// This process's allocations as its peers' processes map them.
struct Export {
  enum State : uint8_t {
    kSeen,       // a plain buffer used once: imported if a later call uses it again
    kImporting,  // a thread is asking the peer's service (its calls meanwhile take the FIFO)
    kMapped,     // peerBase is the peer process's mapping
    kRefused,    // not shareable, or the peer could not map it: asked again from retryNs
  };
  State state = kSeen;
  uint64_t bufferId = 0;
  uint64_t serial = 0;          // which import is in flight (kImporting)
  size_t size = 0;
  uint8_t* peerBase = nullptr;
  int64_t retryNs = 0;          // kRefused: 0 for good (not shareable)
  cudaIpcMemHandle_t handle;
};
using ExportKey = std::tuple<uint64_t, int, uintptr_t>;  // peer process, its device, our base

struct Exports {
  std::mutex mu;
  std::map<ExportKey, Export> map;
  uint64_t serials = 0;
};
Exports& exports() {
  static Exports* e = new Exports();  // never destroyed: used until the process exits
  return *e;
}

void closeAtPeer(const ExportKey& k, const Export& e) {
  if (e.state != Export::kMapped) return;
  Request r{};
  r.magic = kMagic;
  r.op = kOpClose;
  r.dev = std::get<1>(k);
  r.handle = e.handle;
  callService(std::get<0>(k), r, nullptr);
}

using PointerAttributesFn = CUresult (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
PointerAttributesFn pointerAttributes() {
  static const auto f = reinterpret_cast<PointerAttributesFn>(cudaDriverFunction("cuPointerGetAttributes"));
  return f;
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// No CUDA hook tells of a cudaFree, and a peer's mapping keeps a freed allocation's memory
// alive: a thread looks at every exported allocation every kSweepMs (one driver query each,
// which needs no current context: its BUFFER_ID, 0 once freed, another once the address is
// allocated again) and has the peers close their mappings of those that are gone. Started
// with the first export, so a process that never exports makes no thread here; stopped at
// exit before the CUDA runtime's own teardown (registered earlier, so run later).
constexpr int kSweepMs = 100;

bool g_exiting = false;  // under Exports::mu

void sweep() {
  Exports& ex = exports();
  const PointerAttributesFn attributes = pointerAttributes();
  std::vector<std::pair<ExportKey, Export>> gone;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kSweepMs));
    {
      std::lock_guard<std::mutex> lock(ex.mu);
      if (g_exiting) return;
      for (auto it = ex.map.begin(); it != ex.map.end();) {
        unsigned long long id = 0;
        CUpointer_attribute which = CU_POINTER_ATTRIBUTE_BUFFER_ID;
        void* data = &id;
        // An error (the driver shutting down) tells nothing: the entry stays.
        const CUresult r = attributes(1, &which, &data, static_cast<CUdeviceptr>(std::get<2>(it->first)));
        if (r != CUDA_SUCCESS || id == it->second.bufferId) {
          ++it;
          continue;
        }
        gone.emplace_back(it->first, it->second);
        it = ex.map.erase(it);
      }
    }
    for (const auto& g : gone) closeAtPeer(g.first, g.second);
    gone.clear();
  }
}

void startSweeper() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit([] {
      std::lock_guard<std::mutex> lock(exports().mu);  // no sweep in progress after this
      g_exiting = true;
    });
    std::thread(sweep).detach();
  });
}

}  // namespace

bool startImportService() {
  static std::once_flag once;
  static bool started = false;
  std::call_once(once, [&] {
    static ImportService* service = new ImportService();  // lives as long as the process
    started = service->start(localProcessHash());
  });
  return started;
}

void* offerUserBuffer(const ncclComm* comm, int peer, const void* p, size_t bytes, bool capturing) {
  const int64_t mode = knobInt(Knob::UserBuffers);
  if (mode <= 0) return nullptr;
  RegTable::Entry reg;
  const bool registered = comm->regs.find(p, bytes, &reg);
  if (mode == 1 && !registered) return nullptr;
  return userBufferAtPeer(comm, peer, p, bytes, registered || capturing);
}

void* userBufferAtPeer(const ncclComm* comm, int peer, const void* p, size_t bytes, bool kept) {
  const PeerInfo* info = comm->topo.localPeer(peer);
  if (info == nullptr || info->cudaDev < 0 || p == nullptr) return nullptr;
  const bool sameProcess = info->processHash == comm->topo.me().processHash;
  // A rank of this process on the same GPU reaches whatever this rank's kernels reach.
  if (sameProcess && info->cudaDev == comm->cudaDev) return const_cast<void*>(p);
  const PointerAttributesFn attributes = pointerAttributes();
  if (attributes == nullptr) return nullptr;
  unsigned long long id = 0;
  int ordinal = -1, shareable = 0;
  CUdeviceptr start = 0;
  size_t size = 0;
  CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* data[] = {&id, &ordinal, &shareable, &start, &size};
  if (attributes(5, which, data, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return nullptr;
  const uintptr_t base = static_cast<uintptr_t>(start), at = reinterpret_cast<uintptr_t>(p);
  if (ordinal != comm->cudaDev || !shareable || id == 0 || at < base || bytes > size - (at - base)) return nullptr;
  // Another GPU of this process reaches cudaMalloc'ed memory (legacy IPC capable) through
  // the peer access its connection enabled; not a stream-ordered pool's or a VMM
  // allocation's, whose access is granted per device (an illegal address there, seen with
  // three ranks on two GPUs).
  if (sameProcess) return const_cast<void*>(p);
  const ExportKey key{info->processHash, info->cudaDev, base};
  Exports& ex = exports();
  std::unique_lock<std::mutex> lock(ex.mu);
  auto it = ex.map.find(key);
  if (it != ex.map.end() && it->second.bufferId != id) {  // the address was freed and allocated again
    const Export stale = it->second;
    ex.map.erase(it);
    lock.unlock();
    closeAtPeer(key, stale);
    lock.lock();
    it = ex.map.find(key);
  }
  if (it == ex.map.end()) {
    Export e;
    e.bufferId = id;
    e.size = size;
    std::memset(&e.handle, 0, sizeof e.handle);
    it = ex.map.emplace(key, e).first;
    startSweeper();
    // A plain buffer used once may be freed right after this call: importing it would cost
    // more than the call (a round trip to the peer's service and an IPC open there) and keep
    // its memory until the sweep. The second call that uses it imports it.
    if (!kept) return nullptr;
  }
  Export& e = it->second;
  if (e.bufferId != id) return nullptr;  // allocated again meanwhile: the next call sees it
  switch (e.state) {
    case Export::kMapped:
      return e.peerBase + (at - base);
    case Export::kImporting:
      return nullptr;
    case Export::kRefused:
      if (e.retryNs == 0 || nowNs() < e.retryNs) return nullptr;
      break;
    case Export::kSeen:
      break;
  }
  if (e.state == Export::kSeen) {
    CudaDeviceGuard guard(comm->cudaDev);
    CaptureModeRelaxed relaxed;
    if (cudaIpcGetMemHandle(&e.handle, reinterpret_cast<void*>(base)) != cudaSuccess) {
      cudaGetLastError();
      e.state = Export::kRefused;  // not shareable, for good
      e.retryNs = 0;
      return nullptr;
    }
  }
  // The peer's service is asked without the lock held: it may take up to kCallTimeoutMs,
  // and other threads' lookups go on meanwhile (theirs of this allocation take the FIFO).
  e.state = Export::kImporting;
  e.serial = ++ex.serials;
  const uint64_t serial = e.serial;
  Request r{};
  r.magic = kMagic;
  r.op = kOpOpen;
  r.dev = info->cudaDev;
  r.handle = e.handle;
  lock.unlock();
  Reply rep{};
  rep.status = -1;
  const bool answered = callService(info->processHash, r, &rep);
  const bool mapped = answered && rep.status == 0 && rep.ptr != 0;
  lock.lock();
  it = ex.map.find(key);
  if (it == ex.map.end() || it->second.state != Export::kImporting || it->second.serial != serial) {
    // Forgotten (deregistered, freed) while the peer mapped it: the mapping goes too.
    lock.unlock();
    if (mapped) {
      Export undo;
      undo.state = Export::kMapped;
      undo.handle = r.handle;
      closeAtPeer(key, undo);
    }
    return nullptr;
  }
  Export& done = it->second;
  if (mapped) {
    done.state = Export::kMapped;
    done.peerBase = reinterpret_cast<uint8_t*>(rep.ptr);
    INFO(kLogP2p, "user buffers: rank %d's process maps an allocation of %zu bytes of rank %d's outputs", peer, size,
         comm->rank);
    return done.peerBase + (at - base);
  }
  // A peer still in its init has no service yet, or its closer was still closing an
  // earlier mapping of the allocation: ask again in a second.
  done.state = Export::kRefused;
  done.retryNs = nowNs() + 1000000000;
  INFO(kLogInit, "user buffers: rank %d's process could not map an allocation of %zu bytes (status %d); "
                 "its data goes through the FIFO",
       peer, size, static_cast<int>(rep.status));
  return nullptr;
}

void forgetUserBuffer(const void* base, size_t bytes) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(base), hi = lo + bytes;
  Exports& ex = exports();
  std::vector<std::pair<ExportKey, Export>> gone;
  {
    std::lock_guard<std::mutex> lock(ex.mu);
    for (auto it = ex.map.begin(); it != ex.map.end();) {
      const uintptr_t b = std::get<2>(it->first);
      if (b < hi && lo < b + it->second.size) {
        gone.emplace_back(it->first, it->second);
        it = ex.map.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& g : gone) closeAtPeer(g.first, g.second);
}

size_t importedUserBuffers() { return g_imported.load(std::memory_order_relaxed); }
size_t userBufferImportsMade() { return g_importsMade.load(std::memory_order_relaxed); }

}  // namespace mccl
