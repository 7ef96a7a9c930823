#include "ipc_transport/mem_ops.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "core/cuda_util.h"
#include "core/knobs.h"

namespace mccl {

BatchMemOpFn batchMemOp() {
  static const BatchMemOpFn fn = reinterpret_cast<BatchMemOpFn>(cudaDriverFunction("cuStreamBatchMemOp"));
  return fn;
}

bool memOps64(int dev) {
  typedef CUresult (*DeviceGetFn)(CUdevice*, int);
  typedef CUresult (*DeviceAttributeFn)(int*, CUdevice_attribute, CUdevice);
  static const DeviceGetFn get = reinterpret_cast<DeviceGetFn>(cudaDriverFunction("cuDeviceGet"));
  static const DeviceAttributeFn attr = reinterpret_cast<DeviceAttributeFn>(cudaDriverFunction("cuDeviceGetAttribute"));
  CUdevice d = 0;
  int v = 0;
  return get && attr && get(&d, dev) == CUDA_SUCCESS &&
         attr(&v, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, d) == CUDA_SUCCESS && v != 0;
}

CUstreamBatchMemOpParams memOpWrite(uint64_t addr, uint64_t value) {
  CUstreamBatchMemOpParams o;
  std::memset(&o, 0, sizeof o);
  o.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  o.writeValue.address = addr;
  o.writeValue.value64 = value;
  o.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;  // after a memory barrier
  return o;
}

CUstreamBatchMemOpParams memOpWaitGeq(uint64_t addr, uint64_t value) {
  CUstreamBatchMemOpParams o;
  std::memset(&o, 0, sizeof o);
  o.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
  o.waitValue.address = addr;
  o.waitValue.value64 = value;
  o.waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  return o;
}

void* mapSharedPage(const char* name, size_t bytes, bool create, bool exclusive, std::string* why) {
  const int flags = O_RDWR | (create ? O_CREAT : 0) | (exclusive ? O_EXCL : 0);
  const int fd = shm_open(name, flags, 0600);
  if (fd < 0) {
    *why = std::string("shm_open(") + name + "): " + std::strerror(errno);
    return nullptr;
  }
  void* p = MAP_FAILED;
  // Every end sizes it alike: the first makes it zero-filled, a second ftruncate is a no-op.
  if (ftruncate(fd, static_cast<off_t>(bytes)) == 0) p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    *why = std::string("mapping ") + name + ": " + std::strerror(err);
    return nullptr;
  }
  return p;
}

uint64_t registerSharedPage(void* p, size_t bytes) {
  void* d = nullptr;
  if (cudaHostRegister(p, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  if (cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess) {
    cudaGetLastError();
    cudaHostUnregister(p);
    return 0;
  }
  return reinterpret_cast<uint64_t>(d);
}

namespace {

// The watched objects and, for each, the wait it last reported and since when. The thread
// calls into them with mu held, so unwatchMemOpWaits (which takes mu) returns only after
// any call into its object; nothing a watched object's calls take is held around
// watchMemOpWaits or unwatchMemOpWaits (GpuDataPath: its launches and its destructor).
struct MemOpWatch {
  struct Entry {
    MemOpWatched* w;
    uint64_t token;
    std::chrono::steady_clock::time_point since;
    bool told;
  };
  std::mutex mu;
  std::vector<Entry> entries;
  bool started = false;

  void run() {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const int64_t timeout = knobInt(Knob::Timeout);
      const auto now = std::chrono::steady_clock::now();
      std::lock_guard<std::mutex> lock(mu);
      for (Entry& e : entries) {
        int peer = -1;
        const uint64_t token = e.w->memOpWaitToken(&peer);
        if (token != e.token) {
          e.token = token;
          e.since = now;
          e.told = false;
          continue;
        }
        if (token == 0 || e.told || timeout <= 0) continue;
        const double waited = std::chrono::duration<double>(now - e.since).count();
        if (waited < static_cast<double>(timeout)) continue;
        e.told = true;
        e.w->memOpWaitTimedOut(peer, waited);
      }
    }
  }
};

MemOpWatch& memOpWatch() {
  static MemOpWatch* w = new MemOpWatch;  // never destroyed: its thread runs as long as the process
  return *w;
}

}  // namespace

void watchMemOpWaits(MemOpWatched* w) {
  MemOpWatch& m = memOpWatch();
  std::lock_guard<std::mutex> lock(m.mu);
  for (const MemOpWatch::Entry& e : m.entries)
    if (e.w == w) return;
  m.entries.push_back({w, 0, std::chrono::steady_clock::now(), false});
  if (!m.started) {
    m.started = true;
    std::thread([&m] { m.run(); }).detach();
  }
}

void unwatchMemOpWaits(MemOpWatched* w) {
  MemOpWatch& m = memOpWatch();
  std::lock_guard<std::mutex> lock(m.mu);
  m.entries.erase(std::remove_if(m.entries.begin(), m.entries.end(),
                                 [w](const MemOpWatch::Entry& e) { return e.w == w; }),
                  m.entries.end());
}

}  // namespace mccl
