// Liveness of the other ranks of a communicator. One background thread per communicator
// keeps a TCP connection to the ranks of other processes at ring distances 1, 2, 4, 8, ...
// on each side (at most 2*ceil(log2 N) links per rank, every rank when N <= 5), and sends
// a heartbeat every 500 ms on each:
//   * a rank whose process dies is seen at once: its connection closes without the
//     farewell a clean ncclCommDestroy sends;
//   * a rank that stops answering (SIGSTOP, a hung node) is seen when it has been silent
//     for half of MCCL_TIMEOUT (at least 2 s).
// A rank that loses a peer tells all its own peers, which tell theirs (once per lost rank),
// so every survivor learns in O(log N) hops. A rank that leaves after a failure (an abort,
// a failed init) says so: its peers name the rank it lost, or it only when they find no
// loss of their own within a grace period, so survivors name the rank that failed first. Every wait of the data path asks lostRank()
// and fails with ncclRemoteError naming the rank and its host; GPU kernels are stopped through DataPath::peerLost(). The thread
// never calls MPI. A connection starts with a hello that proves the communicator's secret
// (drawn by rank 0, exchanged inside the init allgather); anything else is dropped.
// The listening addresses are not in the init allgather: at init each rank sends its
// LiveRecord (address, host name) through the bootstrap to its watch peers only
// (watchPeers(), O(log N) messages each way), so no rank holds a non-neighbour's.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>

#include "core/peer_info.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

// What a rank sends each of its watch peers at init (bootstrap tag kTagLive).
struct LiveRecord {
  static constexpr uint32_t kMagic = 0x6c697665;  // "live"
  uint32_t magic = kMagic;
  uint32_t valid = 0;  // 1: addr is the watchdog's listening address
  uint8_t addr[20] = {0};  // SockAddr wire form
  uint32_t reserved = 0;
  char host[64] = {0};  // the sender's host name (error messages name the lost rank's)
};
constexpr uint64_t kTagLive = 0xB4000000ull << 32;

class Watchdog {
 public:
  // Before the init exchange: opens the listening socket, fills *mine and draws this
  // rank's secret (*secret; rank 0's is the communicator's). Does nothing but fill in the
  // host name when every rank is a thread of this process (peersMayBeRemote false).
  static ncclResult_t listen(bool peersMayBeRemote, int rank, LiveRecord* mine, uint64_t* secret, int* listenFd);
  // The ranks this rank watches, from the init exchange (comm->peers): those of other
  // processes at ring distances 1, 2, 4, ... each side. Symmetric: q is in r's list exactly
  // when r is in q's, so the LiveRecords sent along it pair up.
  static std::vector<int> watchPeers(const ncclComm* comm);
  // After the exchange: starts watching the ranks of watchPeers() whose records (records[i]
  // from watched[i]) are valid (takes listenFd). *out stays null when none are.
  static ncclResult_t start(ncclComm* comm, int listenFd, const std::vector<int>& peers,
                            const std::vector<LiveRecord>& records, std::unique_ptr<Watchdog>* out);
  ~Watchdog();

  // The first rank found lost (-1 if none) and a sentence saying how.
  int lostRank(std::string* why) const;
  // Whether a peer was lost: one load, for the polls of every wait (lostRank says which).
  bool anyLost() const { return anyLost_.load(std::memory_order_acquire); }
  // Tells every peer this rank leaves on purpose (clean destroy), so its closing
  // connection is not taken for a crash.
  void farewell();
  // Tells every peer this rank leaves after a failure (an abort), with the rank it lost if
  // it knows one: a peer names that rank, or this one only when it finds no loss of its
  // own within a grace period (the failure was most likely another rank's death).
  void leaveAfterFailure();
  // The same from a rank whose init failed after the LiveRecords were exchanged (no
  // watchdog was started): a failure hello to each peer of a valid record.
  static void leaveFailedInit(int rank, uint64_t secret, const std::vector<LiveRecord>& records);

 private:
  struct Peer;
  Watchdog(ncclComm* comm, int listenFd);
  void run();
  void stopThread();  // wakes the thread's poll and joins it (no waiting out its timeout)
  void leave(bool failed);
  void markLost(int rank, const char* how);
  // p left after a failure, having lost `lost` (-1: none known).
  void leftAfterFailure(Peer& p, int lost);
  void connectInitiated(Peer& p);
  // p's link ended badly: lost after a grace period unless its farewell arrives.
  void suspect(Peer& p, const char* why);
  // Parses bytes from p; false when p's connection ended (farewell, bad message).
  bool consume(Peer& p, const uint8_t* data, size_t n);
  // Reads the hellos of the first `polled` pending connections (those pfds describes).
  void acceptHellos(std::vector<int>& pending, size_t polled, const ::pollfd* pfds);

  ncclComm* comm_;
  int rank_;
  uint64_t secret_ = 0;
  int listenFd_ = -1;
  double silenceLimit_ = 15.0;
  std::chrono::steady_clock::time_point started_{};  // when run() began
  std::vector<int> pending_;  // accepted connections whose hello is not read yet (thread's)
  std::vector<std::unique_ptr<Peer>> peers_;
  std::thread thread_;
  int wake_[2] = {-1, -1};  // a pipe: a byte written to wake_[1] ends the thread's poll
  std::atomic<bool> stop_{false};
  std::atomic<bool> anyLost_{false};
  mutable std::mutex mu_;  // guards lost_, why_ and the peers' fds during farewell
  int lost_ = -1;
  std::string why_;
  int weak_ = -1;  // a peer that left after a failure, not yet named (thread's)
  std::chrono::steady_clock::time_point weakAt_{};
};

}  // namespace mccl
