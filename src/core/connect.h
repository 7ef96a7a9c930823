// Making connections, common to every transport: the two sides of a connection each send
// one fixed-size record to the other through the bootstrap (never blocking), and the
// connection completes when the peer's record arrives. One thread can therefore connect
// many communicators at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "algorithms/schedule.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

// One direction of a connection, as this rank sees it.
struct ConnKey {
  int peer;
  int channel;
  ConnClass cls;
  bool send;  // this rank sends on it
  bool operator<(const ConnKey& o) const {
    if (peer != o.peer) return peer < o.peer;
    if (channel != o.channel) return channel < o.channel;
    if (cls != o.cls) return cls < o.cls;
    return send < o.send;
  }
  bool operator==(const ConnKey& o) const {
    return peer == o.peer && channel == o.channel && cls == o.cls && send == o.send;
  }
};

class ConnectExchange {
 public:
  ConnectExchange(ncclComm* comm, size_t recordBytes) : comm_(comm), bytes_(recordBytes) {}
  // Sends this side's record for key and remembers key until the peer's record arrives.
  ncclResult_t post(const ConnKey& key, const void* record);
  // Completes every pending key whose peer record has arrived.
  ncclResult_t poll(const std::function<ncclResult_t(const ConnKey&, const void* peerRecord)>& done);
  bool idle() const { return pending_.empty(); }

 private:
  uint64_t tagOf(const ConnKey& key, bool fromSender) const;
  ncclComm* comm_;
  size_t bytes_;
  std::vector<ConnKey> pending_;
};

}  // namespace mccl
