// libFuzzer target: the TCP bootstrap's wire decoders, on a byte stream as a socket
// delivers it. The stream is cut into frames exactly as the bootstrap does (header,
// bounded payload); each payload goes through the decoder of its type: Hello (validated,
// both addresses), Welcome and Successor (addresses), and the allgather's address table.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "bootstrap_mpi/wire.h"

using namespace mccl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t off = 0;
  while (size - off >= sizeof(FrameHeader)) {
    FrameHeader h;
    std::string why;
    if (!decodeFrameHeader(data + off, size - off, &h, &why)) {
      if (why.empty()) __builtin_trap();  // every rejection says why
      return 0;
    }
    if (h.size > kMaxFramePayload) __builtin_trap();  // the decoder bounds the payload
    if (size - off - sizeof h < h.size) return 0;     // incomplete: wait for more bytes
    const uint8_t* p = data + off + sizeof h;
    SockAddr a;
    switch (static_cast<FrameType>(h.type)) {
      case FrameType::Hello:
        if (h.size == sizeof(HelloMsg)) {
          HelloMsg m;
          std::memcpy(&m, p, sizeof m);
          if (validateHello(m, &why)) {
            SockAddr::fromWire(m.listenAddr, &a);
            SockAddr::fromWire(m.prevRootAddr, &a);
            (void)a.str();
          }
        }
        break;
      case FrameType::Welcome:
        if (h.size == sizeof(WelcomeMsg)) {
          WelcomeMsg m;
          std::memcpy(&m, p, sizeof m);
          if (SockAddr::fromWire(m.successorAddr, &a)) (void)a.str();
        }
        break;
      case FrameType::Successor:
        if (h.size == sizeof(SuccessorMsg)) {
          SuccessorMsg m;
          std::memcpy(&m, p, sizeof m);
          if (SockAddr::fromWire(m.firstRankAddr, &a)) (void)a.str();
        }
        break;
      case FrameType::Data:
        // The allgather's first frame: one address per rank.
        for (size_t k = 0; k + SockAddr::kWireSize <= h.size; k += SockAddr::kWireSize)
          if (SockAddr::fromWire(p + k, &a)) (void)a.port();
        break;
    }
    off += sizeof h + h.size;
  }
  return 0;
}
