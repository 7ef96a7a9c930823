// The network path of GPU communicators: a proxy thread moves what the kernels post.
//
// A network connection has one host-memory region on each side, in the same layout
// (NetLayout), pinned and mapped into the GPU, and registered with UCX:
//
//   sender region                      receiver region
//   tail  @0   kernel posts slices     tail  @0   the sender's proxy puts it (after data)
//   head  @64  the receiver's proxy    head  @64  kernel: slices consumed
//              puts it (flow control)
//   sizes @128 kernel: offset and size of each posted slice
//   data       kernel writes slots     data       the sender's proxy puts slots; the
//                                                 kernel reads them
//
// The kernels run the same protocol as over CUDA IPC (DevConn: buf, tail, head); only the
// pointers differ. The proxy of the sender sees a new tail, puts the new slices' bytes into
// the receiver's slots, fences, and puts the tail; the proxy of the receiver sees the
// kernel's head advance and puts it into the sender's head. A sender never runs more than
// `slots` slots ahead of the receiver's head, so no slot is overwritten before it is read.
//
// Nothing here knows CUDA: the regions are plain host memory to the proxy (the GPU data
// path allocates them pinned and mapped), so the proxy is tested with host threads
// playing the kernels. The proxy never calls MPI.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "ucx_transport/ucx.h"

namespace mccl {

struct NetLayout {
  uint32_t slots = 8;
  uint32_t slices = 1;  // flags per slot (DevComm::slices)
  uint64_t slotBytes = 0;
  static constexpr uint64_t kTailOff = 0;
  static constexpr uint64_t kHeadOff = 64;
  static constexpr uint64_t kSizesOff = 128;
  uint64_t sizeEntries() const { return static_cast<uint64_t>(slots) * slices; }
  uint64_t dataOff() const { return (kSizesOff + 8 * sizeEntries() + 255) & ~255ull; }
  uint64_t bytes() const { return dataOff() + slots * slotBytes; }
  // A posted slice's place in its slot: what the kernel stores in sizes[].
  static uint64_t packSize(uint64_t offset, uint64_t bytes) { return offset << 32 | bytes; }
};

// One direction of a network connection, as the proxy drives it.
class NetConn {
 public:
  NetConn(bool send, int peer, NetLayout layout, uint8_t* local, UcxWorker* worker, ucp_ep_h ep,
          UcxRemote remote);
  // Moves what the local side posted since the last call. Sets *moved when it did.
  ncclResult_t step(bool* moved);
  bool send() const { return send_; }
  int peer() const { return peer_; }
  // True while the local side posted what step() has not moved yet.
  bool pending() const;
  uint64_t done() const { return done_; }

 private:
  bool send_;
  int peer_;
  NetLayout layout_;
  uint8_t* local_;
  UcxWorker* worker_;
  ucp_ep_h ep_;
  UcxRemote remote_;
  uint64_t done_ = 0;             // slices moved (send) or head values forwarded (recv)
  std::vector<uint64_t> words_;   // counter values being put: stable until complete
};

// The connections of one communicator, served by the process's proxy thread.
class ProxyClient {
 public:
  explicit ProxyClient(UcxWorker* worker) : worker_(worker) {}
  void add(std::unique_ptr<NetConn> conn);  // caller holds lock()
  // Held by the proxy during a pass: whoever else uses the worker (connection set-up)
  // takes it too, so the worker is never driven from two threads.
  std::mutex& lock() { return mu_; }
  // One pass over every connection and the UCX worker; called by the proxy thread.
  ncclResult_t pass(bool* moved);
  // True when every send connection's posts are moved and the worker's puts complete
  // here (progresses the worker; any thread: takes lock()). True at once without sends.
  ncclResult_t drained(bool* done);
  // First failure, kept with its message (ncclSuccess while none).
  ncclResult_t status(std::string* why) const;
  void fail(ncclResult_t r, const std::string& why);

 private:
  UcxWorker* worker_;
  mutable std::mutex mu_;  // the worker, conns_ (added by the communicator's thread)
  mutable std::mutex errMu_;
  std::vector<std::unique_ptr<NetConn>> conns_;
  std::atomic<ncclResult_t> status_{ncclSuccess};
  std::string why_;
};

// The proxy thread of the process: created with its first client, bound near the GPU of
// the first client (hwloc), stopped with its last client.
class Proxy {
 public:
  // Registers client. The thread, when this starts it, binds itself near the GPU with PCI
  // bus id busId (empty: anywhere in the process's cpuset).
  static void attach(ProxyClient* client, const std::string& busId);
  // Unregisters client; once this returns the thread no longer touches it.
  static void detach(ProxyClient* client);

 private:
  void run();
  std::mutex mu_;
  std::vector<ProxyClient*> clients_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  int busy_ = 0;  // passes in progress (detach waits for 0)
  std::condition_variable idle_;
};

}  // namespace mccl
