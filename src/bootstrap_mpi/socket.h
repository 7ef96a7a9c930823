// Small TCP helpers for the bootstrap: addresses, interface choice, listen/connect, and
// bounded, abortable reads and writes on non-blocking sockets.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "nccl.h"

namespace mccl {

struct SockAddr {
  sockaddr_storage storage{};
  socklen_t len = 0;

  int family() const { return storage.ss_family; }
  uint16_t port() const;
  void setPort(uint16_t port);
  std::string str() const;  // "10.0.0.1:1234" or "[fe80::1]:1234"
  bool valid() const { return len != 0; }

  // Compact, fixed-size wire form: family(2) port(2) address(16).
  static constexpr size_t kWireSize = 20;
  void toWire(uint8_t out[kWireSize]) const;
  static bool fromWire(const uint8_t in[kWireSize], SockAddr* out);
};

// Picks the address the bootstrap listens on: NCCL_SOCKET_IFNAME if set (prefix list,
// "^" excludes, "=" exact), else the first interface that is up and not loopback or
// docker, else loopback.
ncclResult_t chooseBootstrapAddress(SockAddr* out, std::string* ifName);

// Parses "host:port", "[v6]:port" or "v4:port" (NCCL_COMM_ID).
bool parseHostPort(const std::string& s, SockAddr* out);

using Deadline = std::chrono::steady_clock::time_point;
Deadline deadlineAfter(double seconds);

// A listening socket bound to addr (port 0: any); addr receives the port chosen.
ncclResult_t listenOn(SockAddr* addr, int* fd);

// Connects (retrying refused connections until deadline); returns a non-blocking fd.
// *lastErrno (optional) receives the errno of the last failed attempt. quiet: a failure
// is returned without a warning or a last-error sentence (for callers to whom a refused
// connection is an answer, not an error: probes, farewells, retries that report once).
ncclResult_t connectTo(const SockAddr& addr, Deadline deadline, const std::atomic<bool>* abort,
                       int* fd, int* lastErrno = nullptr, bool quiet = false);

// Accepts one pending connection (non-blocking); *fd = -1 when none is pending.
ncclResult_t acceptOne(int listenFd, int* fd);

// Whole-buffer I/O on a non-blocking fd. ncclRemoteError on EOF, reset or deadline.
ncclResult_t writeAll(int fd, const void* data, size_t n, Deadline deadline,
                      const std::atomic<bool>* abort);
ncclResult_t readAll(int fd, void* data, size_t n, Deadline deadline,
                     const std::atomic<bool>* abort);

void setNonBlocking(int fd);
void closeFd(int* fd);

// Constant-time comparison of secrets.
bool secretsEqual(uint64_t a, uint64_t b);

}  // namespace mccl
