#include "bootstrap_mpi/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/knobs.h"

namespace mccl {

uint16_t SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

void SockAddr::setPort(uint16_t p) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(p);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(p);
}

std::string SockAddr::str() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(port());
  }
  return "<none>";
}

void SockAddr::toWire(uint8_t out[kWireSize]) const {
  std::memset(out, 0, kWireSize);
  uint16_t fam = static_cast<uint16_t>(family());
  uint16_t p = port();
  std::memcpy(out, &fam, 2);
  std::memcpy(out + 2, &p, 2);
  if (family() == AF_INET)
    std::memcpy(out + 4, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, 4);
  else if (family() == AF_INET6)
    std::memcpy(out + 4, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, 16);
}

bool SockAddr::fromWire(const uint8_t in[kWireSize], SockAddr* out) {
  uint16_t fam, p;
  std::memcpy(&fam, in, 2);
  std::memcpy(&p, in + 2, 2);
  SockAddr a;
  if (fam == AF_INET) {
    auto* s = reinterpret_cast<sockaddr_in*>(&a.storage);
    s->sin_family = AF_INET;
    s->sin_port = htons(p);
    std::memcpy(&s->sin_addr, in + 4, 4);
    a.len = sizeof(sockaddr_in);
  } else if (fam == AF_INET6) {
    auto* s = reinterpret_cast<sockaddr_in6*>(&a.storage);
    s->sin6_family = AF_INET6;
    s->sin6_port = htons(p);
    std::memcpy(&s->sin6_addr, in + 4, 16);
    a.len = sizeof(sockaddr_in6);
  } else {
    return false;
  }
  if (p == 0) return false;
  *out = a;
  return true;
}

namespace {

bool matchesIfSpec(const std::string& spec, const char* name) {
  if (spec.empty()) return true;
  const char* p = spec.c_str();
  bool exclude = false, exact = false;
  if (*p == '^') exclude = true, ++p;
  if (*p == '=') exact = true, ++p;
  bool found = false;
  std::string s(p);
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string tok = s.substr(start, end - start);
    if (!tok.empty()) {
      if (exact ? tok == name : std::strncmp(name, tok.c_str(), tok.size()) == 0) found = true;
    }
    start = end + 1;
  }
  return exclude ? !found : found;
}

}  // namespace

ncclResult_t chooseBootstrapAddress(SockAddr* out, std::string* ifName) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0)
    return MCCL_ERR(ncclSystemError, nullptr, "getifaddrs failed: %s", std::strerror(errno));
  std::string spec = knobStr(Knob::SocketIfname);
  SockAddr best, loop;
  std::string bestName, loopName;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
    int fam = i->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (fam == AF_INET6) {
      auto* a6 = reinterpret_cast<sockaddr_in6*>(i->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr)) continue;  // needs a scope id
    }
    SockAddr a;
    a.len = fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    std::memcpy(&a.storage, i->ifa_addr, a.len);
    bool isLoop = (i->ifa_flags & IFF_LOOPBACK) != 0;
    if (!spec.empty()) {
      if (matchesIfSpec(spec, i->ifa_name) && !best.valid()) best = a, bestName = i->ifa_name;
      continue;
    }
    if (isLoop) {
      if (!loop.valid() || (fam == AF_INET && loop.family() != AF_INET)) loop = a, loopName = i->ifa_name;
      continue;
    }
    if (std::strncmp(i->ifa_name, "docker", 6) == 0) continue;
    if (!best.valid() || (fam == AF_INET && best.family() != AF_INET)) best = a, bestName = i->ifa_name;
  }
  freeifaddrs(list);
  if (!best.valid() && spec.empty()) best = loop, bestName = loopName;
  if (!best.valid())
    return MCCL_ERR(ncclSystemError, nullptr,
                    "no network interface matches NCCL_SOCKET_IFNAME=\"%s\"", spec.c_str());
  best.setPort(0);
  *out = best;
  if (ifName) *ifName = bestName;
  return ncclSuccess;
}

bool parseHostPort(const std::string& s, SockAddr* out) {
  std::string host, port;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') return false;
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string::npos) return false;
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  int64_t p;
  if (!parseKnobInt(port.c_str(), &p) || p < 0 || p > 65535) return false;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return false;
  SockAddr a;
  a.len = static_cast<socklen_t>(res->ai_addrlen);
  std::memcpy(&a.storage, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  a.setPort(static_cast<uint16_t>(p));
  *out = a;
  return true;
}

Deadline deadlineAfter(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

void setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

void closeFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

bool secretsEqual(uint64_t a, uint64_t b) {
  volatile uint64_t diff = a ^ b;  // no early exit
  return diff == 0;
}

ncclResult_t listenOn(SockAddr* addr, int* fd) {
  int s = socket(addr->family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return MCCL_ERR(ncclSystemError, nullptr, "socket: %s", std::strerror(errno));
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(s, reinterpret_cast<sockaddr*>(&addr->storage), addr->len) != 0) {
    int e = errno;
    close(s);
    return MCCL_ERR(ncclSystemError, nullptr, "bind to %s: %s", addr->str().c_str(), std::strerror(e));
  }
  if (listen(s, 16384) != 0) {
    int e = errno;
    close(s);
    return MCCL_ERR(ncclSystemError, nullptr, "listen: %s", std::strerror(e));
  }
  socklen_t len = addr->len;
  getsockname(s, reinterpret_cast<sockaddr*>(&addr->storage), &len);
  setNonBlocking(s);
  *fd = s;
  return ncclSuccess;
}

ncclResult_t connectTo(const SockAddr& addr, Deadline deadline, const std::atomic<bool>* abort,
                       int* fd, int* lastErrno, bool quiet) {
  int delayMs = 10;
  if (lastErrno) *lastErrno = 0;
  for (;;) {
    if (abort && abort->load())
      return quiet ? ncclRemoteError
                   : MCCL_ERR(ncclRemoteError, nullptr, "connect to %s: aborted", addr.str().c_str());
    int s = socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return MCCL_ERR(ncclSystemError, nullptr, "socket: %s", std::strerror(errno));
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setNonBlocking(s);
    int rc = connect(s, reinterpret_cast<const sockaddr*>(&addr.storage), addr.len);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      // Wait for the handshake in slices so an abort is noticed.
      for (;;) {
        pollfd p{s, POLLOUT, 0};
        int n = poll(&p, 1, 100);
        if (n > 0) {
          socklen_t len = sizeof err;
          getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
          break;
        }
        if ((abort && abort->load()) || std::chrono::steady_clock::now() > deadline) {
          err = ETIMEDOUT;
          break;
        }
      }
    }
    if (err == 0) {
      *fd = s;
      return ncclSuccess;
    }
    close(s);
    if (lastErrno) *lastErrno = err;
    bool retry = err == ECONNREFUSED || err == ECONNRESET || err == ETIMEDOUT || err == EAGAIN;
    if (!retry || std::chrono::steady_clock::now() > deadline)
      return quiet ? ncclRemoteError
                   : MCCL_ERR(ncclRemoteError, nullptr, "connect to %s failed: %s", addr.str().c_str(),
                              std::strerror(err));
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    delayMs = std::min(delayMs * 2, 200);
  }
}

ncclResult_t acceptOne(int listenFd, int* fd) {
  *fd = -1;
  int s = accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (s < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
      return ncclSuccess;
    return MCCL_ERR(ncclSystemError, nullptr, "accept: %s", std::strerror(errno));
  }
  int one = 1;
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  *fd = s;
  return ncclSuccess;
}

namespace {
ncclResult_t waitFd(int fd, short events, Deadline deadline, const std::atomic<bool>* abort,
                    const char* what) {
  for (;;) {
    if (abort && abort->load()) return MCCL_ERR(ncclRemoteError, nullptr, "%s: aborted", what);
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, 100);
    if (n > 0) return ncclSuccess;
    if (n < 0 && errno != EINTR)
      return MCCL_ERR(ncclSystemError, nullptr, "%s: poll: %s", what, std::strerror(errno));
    if (std::chrono::steady_clock::now() > deadline)
      return MCCL_ERR(ncclRemoteError, nullptr, "%s: timed out", what);
  }
}
}  // namespace

ncclResult_t writeAll(int fd, const void* data, size_t n, Deadline deadline,
                      const std::atomic<bool>* abort) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w > 0) {
      p += w;
      n -= static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      MCCL_CHECK(waitFd(fd, POLLOUT, deadline, abort, "socket write"));
      continue;
    }
    return MCCL_ERR(ncclRemoteError, nullptr, "socket write: %s",
                    w < 0 ? std::strerror(errno) : "connection closed");
  }
  return ncclSuccess;
}

ncclResult_t readAll(int fd, void* data, size_t n, Deadline deadline,
                     const std::atomic<bool>* abort) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      MCCL_CHECK(waitFd(fd, POLLIN, deadline, abort, "socket read"));
      continue;
    }
    return MCCL_ERR(ncclRemoteError, nullptr, "socket read: %s",
                    r < 0 ? std::strerror(errno) : "the peer closed the connection");
  }
  return ncclSuccess;
}

}  // namespace mccl
