#include "core/watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "bootstrap_mpi/socket.h"
#include "core/comm.h"
#include "core/datapath.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/knobs.h"

namespace mccl {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kHelloMagic = 0x77646f67;     // "wdog": opens a liveness link
constexpr uint32_t kFarewellMagic = 0x77627965;  // "wbye": the rank leaves (no link was up)
constexpr uint32_t kFailMagic = 0x7766616c;      // "wfal": the rank leaves after a failure (a kFail follows)
constexpr size_t kMaxPending = 1024;  // accepted connections whose hello is not read yet
constexpr auto kGrace = std::chrono::milliseconds(300);
// A peer that left after a failure of its own is named as the lost rank only when no rank
// is found lost (a death, or a loss a peer reports) within this time: the failure it left
// on is usually some other rank's death, which its survivors should name.
constexpr auto kWeakGrace = std::chrono::milliseconds(1200);

struct Hello {
  uint32_t magic;
  int32_t rank;
  uint64_t secret;
};

// After the hello, 8-byte messages both ways. kFail: the sender leaves after a failure
// (an abort, a failed init), having lost `rank` (-1: it knows of no lost rank).
enum : uint8_t { kBeat = 'h', kBye = 'b', kLost = 'L', kFail = 'F' };
struct Msg {
  uint8_t type;
  uint8_t pad[3];
  int32_t rank;  // kLost, kFail: the rank the sender lost
};
static_assert(sizeof(Msg) == 8, "fixed wire size");

// One connection attempt (a refused one is a peer that has left already: its socket
// listened from init until its destroy; retrying cost ~310 ms of backoff when both ranks
// left at once), then a hello of the given magic and, for kFailMagic, the kFail message.
void sendLeaveHello(const SockAddr& addr, uint32_t magic, int rank, uint64_t secret, int lost) {
  int fd = -1;
  if (connectTo(addr, Clock::now(), nullptr, &fd, nullptr, true) != ncclSuccess) return;  // gone already
  struct {
    Hello h;
    Msg m;
  } out{{magic, rank, secret}, {kFail, {0, 0, 0}, lost}};
  const size_t bytes = magic == kFailMagic ? sizeof out : sizeof out.h;
  (void)writeAll(fd, &out, bytes, Clock::now() + std::chrono::milliseconds(200), nullptr);
  closeFd(&fd);
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

struct Watchdog::Peer {
  int rank = -1;
  int fd = -1;
  bool initiator = false;  // this side connects (lower rank)
  bool up = false;         // the connection was made once
  bool gone = false;       // said farewell, or lost: no longer watched
  bool warned = false;
  int refusals = 0;  // connection attempts (200 ms of retries each) refused in a row
  // Its link closed without a bye, or its socket refused us: lost unless a farewell hello
  // (sent on its own connection, so it may arrive after the close) comes within kGrace.
  const char* suspectWhy = nullptr;
  Clock::time_point suspectAt;
  uint8_t in[sizeof(Msg)];  // a message read in part
  size_t inBytes = 0;
  SockAddr addr;
  Clock::time_point lastHeard, lastSent, nextTry;
};

ncclResult_t Watchdog::listen(bool peersMayBeRemote, int rank, LiveRecord* me, uint64_t* secret, int* listenFd) {
  *listenFd = -1;
  *me = LiveRecord{};
  std::strncpy(me->host, localHostName().c_str(), sizeof me->host - 1);
  if (!peersMayBeRemote) return ncclSuccess;
  SockAddr addr;
  std::string ifName;
  int fd = -1;
  if (chooseBootstrapAddress(&addr, &ifName) != ncclSuccess || listenOn(&addr, &fd) != ncclSuccess) {
    WARN("rank %d: cannot open the liveness socket; dead peers will only be seen by MCCL_TIMEOUT", rank);
    return ncclSuccess;  // not fatal: the data path's timeouts remain
  }
  static_assert(sizeof me->addr == SockAddr::kWireSize, "wire form");
  addr.toWire(me->addr);
  std::random_device rd;
  *secret = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  me->valid = 1;
  *listenFd = fd;
  return ncclSuccess;
}

std::vector<int> Watchdog::watchPeers(const ncclComm* comm) {
  const int n = comm->nranks, r = comm->rank;
  std::vector<int> out;
  auto watch = [&](int q) {
    if (q == r || comm->topo.sameProcess(q)) return;
    if (std::find(out.begin(), out.end(), q) == out.end()) out.push_back(q);
  };
  // Ring distances 1, 2, 4, ...: a symmetric relation (q watches r when r watches q),
  // O(log N) links per rank, and a lost rank's news crosses the ring in O(log N) hops.
  for (int d = 1; d < n; d *= 2) watch((r + d) % n), watch((r - d % n + n) % n);
  return out;
}

ncclResult_t Watchdog::start(ncclComm* comm, int listenFd, const std::vector<int>& watched,
                             const std::vector<LiveRecord>& records, std::unique_ptr<Watchdog>* out) {
  out->reset();
  const int r = comm->rank;
  std::unique_ptr<Watchdog> w(new Watchdog(comm, listenFd));
  if (listenFd < 0) return ncclSuccess;
  w->secret_ = comm->topo.liveSecret();
  int64_t timeout = knobInt(Knob::Timeout);
  w->silenceLimit_ = timeout > 0 ? std::max(2.0, static_cast<double>(timeout) / 2.0) : 0.0;
  for (size_t i = 0; i < watched.size() && i < records.size(); ++i) {
    const LiveRecord& o = records[i];
    if (!o.valid) continue;
    auto p = std::make_unique<Peer>();
    p->rank = watched[i];
    if (!SockAddr::fromWire(o.addr, &p->addr)) continue;
    p->initiator = r < p->rank;
    p->lastHeard = p->lastSent = p->nextTry = Clock::now();
    w->peers_.push_back(std::move(p));
  }
  if (w->peers_.empty()) return ncclSuccess;  // destructor closes listenFd
  if (::pipe(w->wake_) != 0)
    return MCCL_ERR(ncclSystemError, comm, "watchdog: pipe failed: %s", std::strerror(errno));
  for (int fd : w->wake_) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  w->thread_ = std::thread([p = w.get()] { p->run(); });
  *out = std::move(w);
  return ncclSuccess;
}

Watchdog::Watchdog(ncclComm* comm, int listenFd) : comm_(comm), rank_(comm->rank), listenFd_(listenFd) {}

Watchdog::~Watchdog() {
  stopThread();
  for (auto& p : peers_) closeFd(&p->fd);
  for (int& fd : pending_) closeFd(&fd);
  closeFd(&listenFd_);
  closeFd(&wake_[0]);
  closeFd(&wake_[1]);
}

void Watchdog::stopThread() {
  stop_.store(true);
  if (wake_[1] >= 0) {
    const char b = 1;
    (void)!::write(wake_[1], &b, 1);
  }
  if (thread_.joinable()) thread_.join();
}

void Watchdog::farewell() { leave(false); }

void Watchdog::leaveAfterFailure() { leave(true); }

void Watchdog::leave(bool failed) {
  stopThread();
  // The thread is gone: the fds are this caller's now. A peer must never take this
  // rank's leaving for a death, whatever state its link is in:
  //  * links that are up get a bye (kFail after a failure, with the rank lost if any);
  //  * connections this side accepted, or that wait in the backlog, whose hello may not
  //    be read yet, get it too (the initiator reads it on its link before the close);
  //  * peers with no link at all get a farewell (or failure) hello on a connection of its
  //    own, so that a later refused connection is not taken for a death.
  int lost = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    lost = lost_;
  }
  const Msg bye{failed ? kFail : kBye, {0, 0, 0}, failed ? lost : rank_};
  for (;;) {
    int fd = -1;
    if (listenFd_ < 0 || acceptOne(listenFd_, &fd) != ncclSuccess || fd < 0) break;
    if (pending_.size() < kMaxPending) pending_.push_back(fd);
    else closeFd(&fd);
  }
  for (int& fd : pending_) {
    (void)::send(fd, &bye, sizeof bye, MSG_NOSIGNAL | MSG_DONTWAIT);
    closeFd(&fd);
  }
  pending_.clear();
  const auto until = Clock::now() + std::chrono::milliseconds(500);
  for (auto& p : peers_) {
    if (p->fd >= 0) {
      (void)::send(p->fd, &bye, sizeof bye, MSG_NOSIGNAL | MSG_DONTWAIT);
      closeFd(&p->fd);
      continue;
    }
    if (p->gone || Clock::now() > until) continue;
    sendLeaveHello(p->addr, failed ? kFailMagic : kFarewellMagic, rank_, secret_, lost);
  }
}

void Watchdog::leaveFailedInit(int rank, uint64_t secret, const std::vector<LiveRecord>& records) {
  const auto until = Clock::now() + std::chrono::milliseconds(500);
  for (const LiveRecord& o : records) {
    SockAddr addr;
    if (Clock::now() > until) break;
    if (o.magic != LiveRecord::kMagic || !o.valid || !SockAddr::fromWire(o.addr, &addr)) continue;
    sendLeaveHello(addr, kFailMagic, rank, secret, -1);
  }
}

int Watchdog::lostRank(std::string* why) const {
  if (!anyLost_.load(std::memory_order_acquire)) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  if (why) *why = why_;
  return lost_;
}

void Watchdog::markLost(int rank, const char* how) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lost_ >= 0) return;
    lost_ = rank;
    why_ = "rank " + std::to_string(rank) + " (host " + comm_->hosts.name(rank) + ") " + how;
    logReport("rank %d lost a peer: %s", rank_, why_.c_str());
  }
  anyLost_.store(true, std::memory_order_release);
  // Kernels spinning on the lost rank leave now rather than at their timeout.
  if (comm_->dataPath) comm_->dataPath->peerLost();
  // Tell the others, so that every survivor names the rank that failed first (and not
  // this one, if it aborts and exits before they notice) and learns it sooner.
  Msg m{kLost, {0, 0, 0}, rank};
  for (auto& p : peers_)
    if (p->fd >= 0 && p->rank != rank) (void)::send(p->fd, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void Watchdog::leftAfterFailure(Peer& p, int lost) {
  closeFd(&p.fd);
  if (p.gone) return;
  p.gone = true;  // not a death: no longer watched, its closing link not suspected
  if (lost >= 0 && lost < comm_->nranks && lost != rank_ && lost != p.rank) {
    std::string how = "was lost by rank " + std::to_string(p.rank) + " (its process died or stopped answering)";
    markLost(lost, how.c_str());
  } else if (weak_ < 0) {
    weak_ = p.rank;
    weakAt_ = Clock::now();
  }
}

void Watchdog::suspect(Peer& p, const char* why) {
  closeFd(&p.fd);
  if (p.suspectWhy) return;
  p.suspectWhy = why;
  p.suspectAt = Clock::now();
}

void Watchdog::connectInitiated(Peer& p) {
  auto now = Clock::now();
  if (p.fd >= 0 || p.up || p.gone || p.suspectWhy || now < p.nextTry) return;
  // The lower rank opens the link. The higher rank, while it waits, probes the lower
  // one's listening socket: a refused connection means the peer's process is gone (its
  // socket listened since init and lives until the communicator is destroyed), so a
  // rank that dies before the link is made is still noticed at once, on both sides.
  if (!p.initiator && now - started_ < std::chrono::milliseconds(300)) return;
  p.nextTry = now + std::chrono::milliseconds(p.initiator ? 250 : 300);
  int fd = -1, err = 0;
  if (connectTo(p.addr, now + std::chrono::milliseconds(200), &stop_, &fd, &err, true) != ncclSuccess) {
    p.refusals = err == ECONNREFUSED ? p.refusals + 1 : 0;
    if (p.refusals >= 1) suspect(p, "refused the liveness connection: its process died");
    return;
  }
  p.refusals = 0;
  if (!p.initiator) {  // a probe: the peer is alive; it drops the connection (no hello)
    closeFd(&fd);
    return;
  }
  Hello h{kHelloMagic, rank_, secret_};
  if (writeAll(fd, &h, sizeof h, Clock::now() + std::chrono::seconds(2), &stop_) != ncclSuccess) {
    closeFd(&fd);
    return;
  }
  p.fd = fd;
  p.up = true;
  p.lastHeard = Clock::now();
}

void Watchdog::acceptHellos(std::vector<int>& pending, size_t polled, const pollfd* pfds) {
  for (size_t i = 0; i < polled; ++i) {
    if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    int fd = pending[i];
    pending[i] = -1;
    Hello h{};
    // The hello arrives whole (16 bytes in one segment) or the connection is dropped.
    ssize_t got = ::recv(fd, &h, sizeof h, MSG_DONTWAIT);
    bool ok = got == static_cast<ssize_t>(sizeof h) &&
              (h.magic == kHelloMagic || h.magic == kFarewellMagic || h.magic == kFailMagic) &&
              secretsEqual(h.secret, secret_);
    if (ok && h.magic == kFarewellMagic) {
      for (auto& p : peers_)
        if (p->rank == h.rank && p->fd < 0) p->gone = true;  // left on purpose
      closeFd(&fd);
      continue;
    }
    if (ok && h.magic == kFailMagic) {
      Msg m{kFail, {0, 0, 0}, -1};  // sent with the hello; a failure without it lost no known rank
      if (::recv(fd, &m, sizeof m, MSG_DONTWAIT) != static_cast<ssize_t>(sizeof m) || m.type != kFail) m.rank = -1;
      for (auto& p : peers_)
        if (p->rank == h.rank) leftAfterFailure(*p, m.rank);
      closeFd(&fd);
      continue;
    }
    Peer* peer = nullptr;
    if (ok)
      for (auto& p : peers_)
        if (p->rank == h.rank && !p->initiator && p->fd < 0 && !p->up) peer = p.get();
    if (!peer) {
      closeFd(&fd);
      continue;
    }
    peer->fd = fd;
    peer->up = true;
    peer->lastHeard = Clock::now();
  }
  pending.erase(std::remove(pending.begin(), pending.end(), -1), pending.end());
}

bool Watchdog::consume(Peer& p, const uint8_t* data, size_t n) {
  while (n > 0) {
    size_t take = std::min(n, sizeof(Msg) - p.inBytes);
    std::memcpy(p.in + p.inBytes, data, take);
    p.inBytes += take;
    data += take;
    n -= take;
    if (p.inBytes < sizeof(Msg)) break;
    p.inBytes = 0;
    Msg m;
    std::memcpy(&m, p.in, sizeof m);
    if (m.type == kBye) {
      closeFd(&p.fd);
      p.gone = true;  // left on purpose
      return false;
    }
    if (m.type == kFail) {
      leftAfterFailure(p, m.rank);
      return false;
    }
    if (m.type == kLost && m.rank >= 0 && m.rank < comm_->nranks && m.rank != rank_) {
      std::string how = "was lost by rank " + std::to_string(p.rank) + " (its process died or stopped answering)";
      markLost(m.rank, how.c_str());
    } else if (m.type != kBeat && m.type != kLost) {
      closeFd(&p.fd);
      p.gone = true;
      markLost(p.rank, "sent a malformed liveness message");
      return false;
    }
  }
  return true;
}

void Watchdog::run() {
  const auto beatEvery = std::chrono::milliseconds(500);
  const auto started = started_ = Clock::now();
  std::vector<int>& pending = pending_;
  std::vector<pollfd> fds;
  while (!stop_.load()) {
    for (auto& p : peers_) connectInitiated(*p);
    fds.clear();
    fds.push_back({listenFd_, POLLIN, 0});
    for (int fd : pending) fds.push_back({fd, POLLIN, 0});
    for (auto& p : peers_) fds.push_back({p->fd, POLLIN, 0});  // fd -1 is ignored by poll
    fds.push_back({wake_[0], POLLIN, 0});                        // stopThread()
    ::poll(fds.data(), fds.size(), 100);
    if (stop_.load()) break;
    const size_t polledPending = pending.size(), peerBase = 1 + polledPending;
    acceptHellos(pending, polledPending, fds.data() + 1);
    if (fds[0].revents & POLLIN) {
      for (;;) {
        int fd = -1;
        if (acceptOne(listenFd_, &fd) != ncclSuccess || fd < 0) break;
        if (pending.size() < kMaxPending) pending.push_back(fd);
        else closeFd(&fd);
      }
    }
    auto now = Clock::now();
    if (weak_ >= 0 && now - weakAt_ >= kWeakGrace) {
      if (!anyLost_.load()) markLost(weak_, "left the communicator after a failure of its own (an abort or a failed call)");
      weak_ = -1;
    }
    for (size_t i = 0; i < peers_.size(); ++i) {
      Peer& p = *peers_[i];
      if (p.gone) continue;
      if (p.suspectWhy) {
        if (now - p.suspectAt >= kGrace) {
          p.gone = true;
          markLost(p.rank, p.suspectWhy);
        }
        continue;
      }
      if (p.fd < 0) {
        // Not connected yet. An address that cannot be reached is not a failure of the
        // peer: warn once; the data path's timeouts still apply.
        if (!p.up && !p.warned && seconds(now - started) > std::max(10.0, 2 * silenceLimit_)) {
          p.warned = true;
          WARN("rank %d: the liveness connection with rank %d did not come up; only MCCL_TIMEOUT will notice "
               "if it dies", rank_, p.rank);
        }
        continue;
      }
      if (fds[peerBase + i].revents & (POLLIN | POLLHUP | POLLERR)) {
        uint8_t buf[64 * sizeof(Msg)];
        ssize_t got = ::recv(p.fd, buf, sizeof buf, MSG_DONTWAIT);
        if (got > 0) {
          p.lastHeard = now;
          if (!consume(p, buf, static_cast<size_t>(got))) continue;
        } else if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          suspect(p, "closed its connection without leaving the communicator: its process died");
          continue;
        }
      }
      if (now - p.lastSent >= beatEvery) {
        Msg m{kBeat, {0, 0, 0}, rank_};
        if (::send(p.fd, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
            errno != EINTR) {
          suspect(p, "reset its connection: its process died");
          continue;
        }
        p.lastSent = now;
      }
      double silent = seconds(now - p.lastHeard);
      if (silenceLimit_ > 0 && silent > silenceLimit_) {
        char how[128];
        std::snprintf(how, sizeof how, "has not answered for %.1f s: it is stopped or hung", silent);
        p.gone = true;
        markLost(p.rank, how);
      }
    }
  }
}

}  // namespace mccl
