#include "bootstrap_mpi/bootstrap_tcp.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "core/error.h"
#include "core/knobs.h"

namespace mccl {
namespace {

constexpr size_t kMaxMailboxBytes = 64u << 20;
constexpr size_t kMaxPendingConns = 4096;

uint64_t random64() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

int64_t subsetFirst(int k, int nranks, int nId) {
  return static_cast<int64_t>(k) * nranks / nId;
}

int subsetOf(int rank, int nranks, int nId) {
  int k = static_cast<int>(static_cast<int64_t>(rank) * nId / nranks);
  while (k + 1 < nId && subsetFirst(k + 1, nranks, nId) <= rank) ++k;
  while (k > 0 && subsetFirst(k, nranks, nId) > rank) --k;
  return k;
}

// ---- Root service ---------------------------------------------------------------------

class RootService {
 public:
  RootService(int fd, uint64_t secret) : listenFd_(fd), secret_(secret) {}
  void run();

 private:
  struct Conn {
    int fd;
    std::vector<uint8_t> buf;
    bool fromRoot = false;  // RootToRoot connection (after its Hello)
  };
  bool handleFrame(Conn& c, const FrameHeader& h, const uint8_t* payload);
  void finish();
  bool subsetComplete() const { return arrived_ == subsetSize_ && subsetSize_ > 0; }

  int listenFd_;
  uint64_t secret_;
  std::vector<Conn> conns_;
  // Learned from the first hello.
  bool configured_ = false;
  int nranks_ = 0, nId_ = 0, idIndex_ = 0, first_ = 0, subsetSize_ = 0;
  SockAddr prevRoot_;
  uint64_t prevRootSecret_ = 0;
  std::vector<int> rankFd_;
  std::vector<SockAddr> rankAddr_;
  int arrived_ = 0;
  bool haveSuccessor_ = false;
  SockAddr successorAddr_;
  int successorRank_ = -1;
  bool sentToPrev_ = false;
};

bool RootService::handleFrame(Conn& c, const FrameHeader& h, const uint8_t* payload) {
  if (h.type == static_cast<uint16_t>(FrameType::Hello) && h.size == sizeof(HelloMsg)) {
    HelloMsg m;
    std::memcpy(&m, payload, sizeof m);
    std::string why;
    if (!secretsEqual(m.secret, secret_)) {
      WARN("bootstrap root: refused a connection with a wrong secret");
      return false;
    }
    if (!validateHello(m, &why)) {
      WARN("bootstrap root: refused a malformed hello (%s)", why.c_str());
      return false;
    }
    if (m.role == static_cast<uint32_t>(HelloRole::RootToRoot)) {
      c.fromRoot = true;
      return true;
    }
    if (m.role != static_cast<uint32_t>(HelloRole::RankToRoot)) return false;
    if (!configured_) {
      configured_ = true;
      nranks_ = m.nranks;
      nId_ = m.nId;
      idIndex_ = m.idIndex;
      first_ = static_cast<int>(subsetFirst(idIndex_, nranks_, nId_));
      subsetSize_ = static_cast<int>(subsetFirst(idIndex_ + 1, nranks_, nId_) - first_);
      rankFd_.assign(static_cast<size_t>(subsetSize_), -1);
      rankAddr_.assign(static_cast<size_t>(subsetSize_), SockAddr{});
      prevRootSecret_ = m.prevRootSecret;
      SockAddr::fromWire(m.prevRootAddr, &prevRoot_);
    }
    if (m.nranks != nranks_ || m.nId != nId_ || m.idIndex != idIndex_ || m.rank < first_ ||
        m.rank >= first_ + subsetSize_) {
      WARN("bootstrap root: rank %d (nranks %d) does not belong to this rendezvous "
           "(nranks %d, ranks %d..%d)",
           m.rank, m.nranks, nranks_, first_, first_ + subsetSize_ - 1);
      return false;
    }
    int slot = m.rank - first_;
    if (rankFd_[slot] >= 0) {
      WARN("bootstrap root: rank %d connected twice", m.rank);
      return false;
    }
    SockAddr::fromWire(m.listenAddr, &rankAddr_[slot]);
    rankFd_[slot] = c.fd;
    c.fd = -1;  // owned by rankFd_ now
    ++arrived_;
    return true;
  }
  if (h.type == static_cast<uint16_t>(FrameType::Successor) && c.fromRoot &&
      h.size == sizeof(SuccessorMsg)) {
    SuccessorMsg m;
    std::memcpy(&m, payload, sizeof m);
    if (!SockAddr::fromWire(m.firstRankAddr, &successorAddr_)) return false;
    successorRank_ = m.firstRank;
    haveSuccessor_ = true;
    return false;  // nothing more on this connection
  }
  return false;
}

void RootService::finish() {
  Deadline dl = deadlineAfter(bootstrapTimeoutSeconds());
  for (int i = 0; i < subsetSize_; ++i) {
    int rank = first_ + i;
    WelcomeMsg w{};
    if (i + 1 < subsetSize_) {
      w.successorRank = rank + 1;
      rankAddr_[i + 1].toWire(w.successorAddr);
    } else if (nId_ == 1) {
      w.successorRank = 0;
      rankAddr_[0].toWire(w.successorAddr);
    } else {
      w.successorRank = successorRank_;
      successorAddr_.toWire(w.successorAddr);
    }
    FrameHeader h = makeFrameHeader(FrameType::Welcome, 0, sizeof w);
    if (writeAll(rankFd_[i], &h, sizeof h, dl, nullptr) != ncclSuccess ||
        writeAll(rankFd_[i], &w, sizeof w, dl, nullptr) != ncclSuccess)
      WARN("bootstrap root: could not welcome rank %d", rank);
  }
}

void RootService::run() {
  bool started = false;
  Deadline dl{};
  for (;;) {
    if (configured_ && subsetComplete() && nId_ > 1 && !sentToPrev_) {
      sentToPrev_ = true;
      int fd = -1;
      HelloMsg hello{};
      hello.secret = prevRootSecret_;
      hello.role = static_cast<uint32_t>(HelloRole::RootToRoot);
      hello.nranks = nranks_;
      SuccessorMsg s{};
      s.firstRank = first_;
      rankAddr_[0].toWire(s.firstRankAddr);
      FrameHeader h1 = makeFrameHeader(FrameType::Hello, 0, sizeof hello);
      FrameHeader h2 = makeFrameHeader(FrameType::Successor, 0, sizeof s);
      if (connectTo(prevRoot_, dl, nullptr, &fd) != ncclSuccess ||
          writeAll(fd, &h1, sizeof h1, dl, nullptr) != ncclSuccess ||
          writeAll(fd, &hello, sizeof hello, dl, nullptr) != ncclSuccess ||
          writeAll(fd, &h2, sizeof h2, dl, nullptr) != ncclSuccess ||
          writeAll(fd, &s, sizeof s, dl, nullptr) != ncclSuccess)
        WARN("bootstrap root %d: could not reach root %d at %s", idIndex_,
             (idIndex_ + nId_ - 1) % nId_, prevRoot_.str().c_str());
      closeFd(&fd);
    }
    if (subsetComplete() && (nId_ == 1 || haveSuccessor_)) {
      finish();
      break;
    }
    if (started && std::chrono::steady_clock::now() > dl) {
      WARN("bootstrap root: gave up after %.0f s with %d of %d ranks (MCCL_BOOTSTRAP_TIMEOUT)",
           bootstrapTimeoutSeconds(), arrived_, subsetSize_);
      break;
    }
    std::vector<pollfd> fds;
    fds.push_back({listenFd_, POLLIN, 0});
    for (Conn& c : conns_) fds.push_back({c.fd, POLLIN, 0});
    int n = poll(fds.data(), fds.size(), 200);
    if (n <= 0) continue;
    const size_t polled = fds.size() - 1;  // connections accepted below were not polled
    if (fds[0].revents & POLLIN) {
      for (;;) {
        int fd = -1;
        if (acceptOne(listenFd_, &fd) != ncclSuccess || fd < 0) break;
        if (conns_.size() >= kMaxPendingConns) {
          closeFd(&fd);
          continue;
        }
        if (!started) {
          started = true;
          dl = deadlineAfter(bootstrapTimeoutSeconds());
        }
        conns_.push_back(Conn{fd, {}});
      }
    }
    for (size_t i = 0; i < polled; ++i) {
      if (!(fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Conn& c = conns_[i];
      uint8_t tmp[512];
      ssize_t r = ::recv(c.fd, tmp, sizeof tmp, 0);
      bool keep = r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR));
      if (r > 0) c.buf.insert(c.buf.end(), tmp, tmp + r);
      while (keep && c.buf.size() >= sizeof(FrameHeader)) {
        FrameHeader h;
        std::string why;
        if (!decodeFrameHeader(c.buf.data(), c.buf.size(), &h, &why) || h.size > 256) {
          WARN("bootstrap root: dropped a connection sending an invalid frame (%s)", why.c_str());
          keep = false;
          break;
        }
        if (c.buf.size() < sizeof h + h.size) break;
        keep = handleFrame(c, h, c.buf.data() + sizeof h);
        if (c.fd < 0) break;  // handed over to rankFd_
        c.buf.erase(c.buf.begin(), c.buf.begin() + static_cast<long>(sizeof h + h.size));
      }
      if (!keep) closeFd(&c.fd);
    }
    std::vector<Conn> live;
    for (Conn& c : conns_)
      if (c.fd >= 0) live.push_back(std::move(c));
    conns_.swap(live);
  }
  for (Conn& c : conns_) closeFd(&c.fd);
  for (int& fd : rankFd_) closeFd(&fd);
  closeFd(&listenFd_);
}

}  // namespace

// ---- Root creation ------------------------------------------------------------------------

ncclResult_t TcpBootstrap::createRoot(ncclUniqueId* id) {
  SockAddr addr;
  std::string commId = knobStr(Knob::CommId);
  if (!commId.empty()) {
    if (!parseHostPort(commId, &addr))
      return MCCL_ERR(ncclInvalidArgument, nullptr,
                      "NCCL_COMM_ID=\"%s\" is not host:port", commId.c_str());
  } else {
    std::string ifName;
    MCCL_CHECK(chooseBootstrapAddress(&addr, &ifName));
    INFO(kLogBootstrap, "bootstrap root listens on %s (%s)", addr.str().c_str(), ifName.c_str());
  }
  int fd = -1;
  MCCL_CHECK(listenOn(&addr, &fd));
  UniqueIdFields f;
  f.root = addr;
  f.secret = random64();
  f.nonce = random64();
  encodeUniqueId(f, id);
  auto* svc = new RootService(fd, f.secret);
  std::thread([svc] {
    svc->run();
    delete svc;
  }).detach();
  return ncclSuccess;
}

// ---- Rank side ---------------------------------------------------------------------------

TcpBootstrap::TcpBootstrap(int rank, int size, uint64_t secret)
    : Bootstrap(rank, size),
      secret_(secret),
      addrs_(static_cast<size_t>(size)),
      outFd_(static_cast<size_t>(size), -1),
      closedAt_(static_cast<size_t>(size)) {}

TcpBootstrap::~TcpBootstrap() {
  for (Conn& c : conns_) closeFd(&c.fd);
  closeFd(&listenFd_);
}

ncclResult_t TcpBootstrap::connect(const UniqueIdFields* ids, int nId, int rank, int nranks,
                                   const std::atomic<bool>* abortFlag,
                                   std::unique_ptr<Bootstrap>* out) {
  std::unique_ptr<TcpBootstrap> b(new TcpBootstrap(rank, nranks, ids[0].secret));
  std::string ifName;
  MCCL_CHECK(chooseBootstrapAddress(&b->listenAddr_, &ifName));
  MCCL_CHECK(listenOn(&b->listenAddr_, &b->listenFd_));
  b->addrs_[rank] = b->listenAddr_;
  if (nranks == 1) {
    *out = std::move(b);
    return ncclSuccess;
  }

  int k = subsetOf(rank, nranks, nId);
  int prev = (k + nId - 1) % nId;
  HelloMsg hello{};
  hello.secret = ids[k].secret;
  hello.role = static_cast<uint32_t>(HelloRole::RankToRoot);
  hello.rank = rank;
  hello.nranks = nranks;
  hello.nId = nId;
  hello.idIndex = k;
  hello.prevRootSecret = ids[prev].secret;
  b->listenAddr_.toWire(hello.listenAddr);
  ids[prev].root.toWire(hello.prevRootAddr);

  Deadline dl = b->deadline();
  int fd = -1;
  ncclResult_t res = connectTo(ids[k].root, dl, abortFlag, &fd);
  if (res != ncclSuccess)
    return MCCL_ERR(res, nullptr, "rank %d could not reach the bootstrap root at %s",
                    rank, ids[k].root.str().c_str());
  FrameHeader h = makeFrameHeader(FrameType::Hello, 0, sizeof hello);
  FrameHeader wh;
  WelcomeMsg w;
  std::string why;
  res = writeAll(fd, &h, sizeof h, dl, abortFlag);
  if (res == ncclSuccess) res = writeAll(fd, &hello, sizeof hello, dl, abortFlag);
  if (res == ncclSuccess) res = readAll(fd, &wh, sizeof wh, dl, abortFlag);
  if (res == ncclSuccess) {
    if (!decodeFrameHeader(&wh, sizeof wh, &wh, &why) ||
        wh.type != static_cast<uint16_t>(FrameType::Welcome) || wh.size != sizeof w)
      res = MCCL_ERR(ncclRemoteError, nullptr, "bootstrap root sent an invalid reply (%s)",
                     why.c_str());
  }
  if (res == ncclSuccess) res = readAll(fd, &w, sizeof w, dl, abortFlag);
  closeFd(&fd);
  if (res != ncclSuccess)
    return MCCL_ERR(res, nullptr,
                    "rank %d: the bootstrap rendezvous at %s failed (did every rank call init "
                    "with the same id and nranks?)",
                    rank, ids[k].root.str().c_str());
  int succ = (rank + 1) % nranks;
  if (w.successorRank != succ || !SockAddr::fromWire(w.successorAddr, &b->addrs_[succ]))
    return MCCL_ERR(ncclRemoteError, nullptr, "bootstrap root named rank %d as successor of %d",
                    w.successorRank, rank);

  // Ring allgather of the listening addresses.
  std::vector<uint8_t> table(static_cast<size_t>(nranks) * SockAddr::kWireSize);
  b->listenAddr_.toWire(&table[static_cast<size_t>(rank) * SockAddr::kWireSize]);
  MCCL_CHECK(b->allGather(table.data(), SockAddr::kWireSize));
  for (int r = 0; r < nranks; ++r)
    if (!SockAddr::fromWire(&table[static_cast<size_t>(r) * SockAddr::kWireSize], &b->addrs_[r]))
      return MCCL_ERR(ncclRemoteError, nullptr, "bootstrap: rank %d sent no valid address", r);
  INFO(kLogBootstrap, "bootstrap rank %d/%d listens on %s (%s)", rank, nranks,
       b->listenAddr_.str().c_str(), ifName.c_str());
  *out = std::move(b);
  return ncclSuccess;
}

bool TcpBootstrap::peerLost(int peer) {
  std::lock_guard<std::mutex> lock(mu_);
  return peer >= 0 && peer < size_ && gone(peer);
}

// A closed connection alone does not mean a message from the peer is lost. A rank that
// sends its last message on a new connection and then leaves (its destroy closes every
// socket) can close an older connection before this rank has accepted the new one from
// the listen queue, or before the new one's bytes have arrived. So a rank is gone only
// once a connection with it has closed, none of its incoming connections is open, no
// connection that has not yet named its rank is waiting, and a grace period has passed.
bool TcpBootstrap::gone(int peer) const {
  constexpr auto kGrace = std::chrono::milliseconds(500);
  const auto closed = closedAt_[peer];
  if (closed == std::chrono::steady_clock::time_point{}) return false;
  for (const Conn& c : conns_)
    if (c.fd >= 0 && (c.peer < 0 || (c.peer == peer && !c.outgoing))) return false;
  return std::chrono::steady_clock::now() - closed >= kGrace;
}

ncclResult_t TcpBootstrap::writeFrame(int fd, int peer, const FrameHeader& h, const void* payload) {
  // Writes both parts; while the socket is full, keep reading so two ranks writing to
  // each other can never block each other.
  const uint8_t* parts[2] = {reinterpret_cast<const uint8_t*>(&h),
                             static_cast<const uint8_t*>(payload)};
  size_t sizes[2] = {sizeof h, h.size};
  Deadline dl = deadline();
  for (int i = 0; i < 2; ++i) {
    const uint8_t* p = parts[i];
    size_t n = sizes[i];
    while (n > 0) {
      ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
      if (w > 0) {
        p += w;
        n -= static_cast<size_t>(w);
        continue;
      }
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        if (aborted()) return MCCL_ERR(ncclRemoteError, owner_, "bootstrap send to rank %d: aborted", peer);
        if (std::chrono::steady_clock::now() > dl)
          return MCCL_ERR(ncclRemoteError, owner_, "bootstrap send to rank %d: timed out", peer);
        MCCL_CHECK(pump(5));
        continue;
      }
      return MCCL_ERR(ncclRemoteError, owner_, "bootstrap send to rank %d: %s", peer,
                      w < 0 ? std::strerror(errno) : "connection closed");
    }
  }
  return ncclSuccess;
}

ncclResult_t TcpBootstrap::connectPeer(int peer) {
  if (!addrs_[peer].valid())
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap: no address for rank %d", peer);
  int fd = -1, err = 0;
  // The peer's address came from the exchange, so its socket was listening and listens
  // until it leaves: connections refused for a whole second mean its process is gone
  // (a full backlog drops connections, it does not refuse them).
  const Deadline until = deadline();
  ncclResult_t res;
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    res = connectTo(addrs_[peer], std::min(until, now + std::chrono::seconds(1)), &aborted_, &fd, &err,
                    true);
    if (res == ncclSuccess || err == ECONNREFUSED || aborted() || std::chrono::steady_clock::now() >= until) break;
  }
  if (res != ncclSuccess)
    return MCCL_ERR(res, owner_, "bootstrap: rank %d cannot connect to rank %d at %s%s", rank_, peer,
                    addrs_[peer].str().c_str(), err == ECONNREFUSED ? " (refused: its process is gone)" : "");
  HelloMsg hello{};
  hello.secret = secret_;
  hello.role = static_cast<uint32_t>(HelloRole::RankToRank);
  hello.rank = rank_;
  hello.nranks = size_;
  listenAddr_.toWire(hello.listenAddr);
  outFd_[peer] = fd;
  Conn c;
  c.fd = fd;
  c.peer = peer;
  c.outgoing = true;
  conns_.push_back(std::move(c));
  return writeFrame(fd, peer, makeFrameHeader(FrameType::Hello, 0, sizeof hello), &hello);
}

ncclResult_t TcpBootstrap::parse(Conn& c, bool* closeIt) {
  while (c.buf.size() >= sizeof(FrameHeader)) {
    FrameHeader h;
    std::string why;
    if (!decodeFrameHeader(c.buf.data(), c.buf.size(), &h, &why)) {
      WARN("bootstrap rank %d: dropped a connection%s sending an invalid frame (%s)", rank_,
           c.peer >= 0 ? " from a peer" : "", why.c_str());
      *closeIt = true;
      return ncclSuccess;
    }
    if (c.buf.size() < sizeof h + h.size) return ncclSuccess;
    const uint8_t* payload = c.buf.data() + sizeof h;
    if (c.peer < 0) {
      HelloMsg m;
      bool ok = h.type == static_cast<uint16_t>(FrameType::Hello) && h.size == sizeof m;
      if (ok) std::memcpy(&m, payload, sizeof m);
      ok = ok && secretsEqual(m.secret, secret_) && m.role == static_cast<uint32_t>(HelloRole::RankToRank) &&
           m.nranks == size_ && m.rank >= 0 && m.rank < size_;
      if (!ok) {
        WARN("bootstrap rank %d: refused a connection without the communicator's secret", rank_);
        *closeIt = true;
        return ncclSuccess;
      }
      c.peer = m.rank;
      SockAddr a;
      if (!addrs_[m.rank].valid() && SockAddr::fromWire(m.listenAddr, &a)) addrs_[m.rank] = a;
    } else if (h.type == static_cast<uint16_t>(FrameType::Data)) {
      if (mailboxBytes_ + h.size > kMaxMailboxBytes)
        return MCCL_ERR(ncclInternalError, owner_,
                        "bootstrap rank %d: more than %zu bytes of unread messages", rank_,
                        kMaxMailboxBytes);
      mailbox_[{c.peer, h.tag}].emplace_back(payload, payload + h.size);
      mailboxBytes_ += h.size;
    } else {
      *closeIt = true;
      return ncclSuccess;
    }
    c.buf.erase(c.buf.begin(), c.buf.begin() + static_cast<long>(sizeof h + h.size));
  }
  return ncclSuccess;
}

ncclResult_t TcpBootstrap::pump(int timeoutMs) {
  std::vector<pollfd> fds;
  fds.push_back({listenFd_, POLLIN, 0});
  for (Conn& c : conns_) fds.push_back({c.fd, POLLIN, 0});
  int n = poll(fds.data(), fds.size(), timeoutMs);
  if (n < 0 && errno != EINTR)
    return MCCL_ERR(ncclSystemError, owner_, "bootstrap poll: %s", std::strerror(errno));
  if (n <= 0) return ncclSuccess;
  size_t nconn = conns_.size();
  for (size_t i = 0; i < nconn; ++i) {
    if (!(fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    Conn& c = conns_[i];
    bool closeIt = false;
    for (;;) {
      uint8_t tmp[65536];
      ssize_t r = ::recv(c.fd, tmp, sizeof tmp, 0);
      if (r > 0) {
        c.buf.insert(c.buf.end(), tmp, tmp + r);
        if (static_cast<size_t>(r) < sizeof tmp) break;
        continue;
      }
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
      closeIt = true;  // EOF or reset
      break;
    }
    MCCL_CHECK(parse(c, &closeIt));
    if (closeIt) {
      if (c.peer >= 0) {
        if (closedAt_[c.peer] == std::chrono::steady_clock::time_point{})
          closedAt_[c.peer] = std::chrono::steady_clock::now();
        INFO(kLogBootstrap, "bootstrap rank %d: connection with rank %d closed", rank_, c.peer);
        if (c.outgoing) outFd_[c.peer] = -1;
      }
      closeFd(&c.fd);
    }
  }
  if (fds[0].revents & POLLIN) {
    for (;;) {
      int fd = -1;
      MCCL_CHECK(acceptOne(listenFd_, &fd));
      if (fd < 0) break;
      if (conns_.size() >= kMaxPendingConns + static_cast<size_t>(size_)) {
        closeFd(&fd);
        continue;
      }
      Conn c;
      c.fd = fd;
      conns_.push_back(std::move(c));
    }
  }
  std::vector<Conn> live;
  for (Conn& c : conns_)
    if (c.fd >= 0) live.push_back(std::move(c));
  conns_.swap(live);
  return ncclSuccess;
}

ncclResult_t TcpBootstrap::send(int peer, uint64_t tag, const void* data, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (peer < 0 || peer >= size_ || bytes > kMaxFramePayload)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap send: peer %d, %zu bytes", peer, bytes);
  if (aborted()) return MCCL_ERR(ncclRemoteError, owner_, "bootstrap send: aborted");
  if (peer == rank_) {
    const char* p = static_cast<const char*>(data);
    mailbox_[{rank_, tag}].emplace_back(p, p + bytes);
    mailboxBytes_ += bytes;
    return ncclSuccess;
  }
  if (outFd_[peer] < 0) MCCL_CHECK(connectPeer(peer));
  return writeFrame(outFd_[peer], peer, makeFrameHeader(FrameType::Data, tag, static_cast<uint32_t>(bytes)),
                    data);
}

ncclResult_t TcpBootstrap::take(int peer, uint64_t tag, void* data, size_t bytes, bool* got) {
  *got = false;
  auto it = mailbox_.find({peer, tag});
  if (it == mailbox_.end() || it->second.empty()) return ncclSuccess;
  std::vector<char> msg = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) mailbox_.erase(it);
  mailboxBytes_ -= msg.size();
  if (msg.size() != bytes)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap recv from rank %d: expected %zu bytes, got %zu",
                    peer, bytes, msg.size());
  std::memcpy(data, msg.data(), bytes);
  *got = true;
  return ncclSuccess;
}

ncclResult_t TcpBootstrap::recv(int peer, uint64_t tag, void* data, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (peer < 0 || peer >= size_)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap recv: peer %d", peer);
  Deadline dl = deadline();
  for (;;) {
    bool got = false;
    MCCL_CHECK(take(peer, tag, data, bytes, &got));
    if (got) return ncclSuccess;
    if (aborted()) return MCCL_ERR(ncclRemoteError, owner_, "bootstrap recv: aborted");
    if (gone(peer))
      return MCCL_ERR(ncclRemoteError, owner_,
                      "bootstrap: rank %d closed its connection (its process may have died)", peer);
    if (std::chrono::steady_clock::now() > dl)
      return MCCL_ERR(ncclRemoteError, owner_,
                      "bootstrap: rank %d waited %.0f s for rank %d (MCCL_BOOTSTRAP_TIMEOUT)", rank_,
                      bootstrapTimeoutSeconds(), peer);
    MCCL_CHECK(pump(100));
  }
}

ncclResult_t TcpBootstrap::tryRecv(int peer, uint64_t tag, void* data, size_t bytes, bool* received) {
  std::lock_guard<std::mutex> lock(mu_);
  if (peer < 0 || peer >= size_)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap recv: peer %d", peer);
  MCCL_CHECK(take(peer, tag, data, bytes, received));
  if (*received) return ncclSuccess;
  MCCL_CHECK(pump(0));
  MCCL_CHECK(take(peer, tag, data, bytes, received));
  if (!*received && gone(peer))
    return MCCL_ERR(ncclRemoteError, owner_,
                    "bootstrap: rank %d closed its connection (its process may have died)", peer);
  return ncclSuccess;
}

ncclResult_t TcpBootstrap::allGather(void* data, size_t bytes) {
  // Ring: at step s send the slot of rank-s to the successor, receive the slot of
  // rank-s-1 from the predecessor.
  if (size_ == 1) return ncclSuccess;
  char* base = static_cast<char*>(data);
  int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
  for (int s = 0; s < size_ - 1; ++s) {
    int sendSlot = (rank_ - s + size_) % size_;
    int recvSlot = (rank_ - s - 1 + size_) % size_;
    MCCL_CHECK(send(next, kTagAllGather, base + static_cast<size_t>(sendSlot) * bytes, bytes));
    MCCL_CHECK(recv(prev, kTagAllGather, base + static_cast<size_t>(recvSlot) * bytes, bytes));
  }
  return ncclSuccess;
}

ncclResult_t TcpBootstrap::newChildSeed(int, std::string* seed) {
  ncclUniqueId id;
  MCCL_CHECK(createRoot(&id));
  seed->assign(id.internal, sizeof id.internal);
  // Seeds travel as fixed-size C strings: hex-encode the id.
  static const char* hex = "0123456789abcdef";
  std::string h;
  for (unsigned char ch : *seed) {
    h.push_back(hex[ch >> 4]);
    h.push_back(hex[ch & 15]);
  }
  *seed = "tcp:" + h;
  return ncclSuccess;
}

ncclResult_t TcpBootstrap::joinChild(const std::string& seed, int childRank, int childSize,
                                     std::unique_ptr<Bootstrap>* child) {
  if (seed.size() != 4 + 2 * sizeof(ncclUniqueId) || seed.compare(0, 4, "tcp:") != 0)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap split: bad seed");
  ncclUniqueId id;
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    auto nib = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    id.internal[i] = static_cast<char>(nib(seed[4 + 2 * i]) << 4 | nib(seed[5 + 2 * i]));
  }
  UniqueIdFields f;
  MCCL_CHECK(decodeUniqueId(id, &f, "ncclCommSplit"));
  return connect(&f, 1, childRank, childSize, &aborted_, child);
}

}  // namespace mccl
