#include "core/peer_info.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <unordered_map>

#include "core/knobs.h"

namespace mccl {
namespace {

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

std::string localHostName() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return host;
}

uint64_t localHostHash() {
  static const uint64_t hash = [] {
    std::string id = knobStr(Knob::HostId);
    if (id.empty()) {
      id = localHostName();
      // The boot id tells apart containers that share a hostname on different machines.
      std::ifstream boot("/proc/sys/kernel/random/boot_id");
      std::string bootId;
      if (boot && std::getline(boot, bootId)) id += ":" + bootId;
    }
    return fnv1a(id.data(), id.size());
  }();
  return hash;
}

uint64_t localProcessHash() {
  static const uint64_t hash = [] {
    std::random_device rd;
    uint64_t salt = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    pid_t pid = getpid();
    uint64_t h = fnv1a(&salt, sizeof salt, localHostHash());
    return fnv1a(&pid, sizeof pid, h);
  }();
  return hash;
}

Topology Topology::build(const std::vector<PeerInfo>& peers, int myRank) {
  Topology t;
  int n = static_cast<int>(peers.size());
  t.nodeOf.assign(n, 0);
  t.localRankOf.assign(n, 0);
  std::unordered_map<uint64_t, int> nodeIndex;
  for (int r = 0; r < n; ++r) {
    auto it = nodeIndex.find(peers[r].hostHash);
    int node;
    if (it == nodeIndex.end()) {
      node = static_cast<int>(t.nodeRanks.size());
      nodeIndex.emplace(peers[r].hostHash, node);
      t.nodeRanks.emplace_back();
    } else {
      node = it->second;
    }
    t.nodeOf[r] = node;
    t.localRankOf[r] = static_cast<int>(t.nodeRanks[node].size());
    t.nodeRanks[node].push_back(r);
  }
  t.nNodes = static_cast<int>(t.nodeRanks.size());
  for (const auto& ranks : t.nodeRanks) {
    t.nodeFirst.push_back(static_cast<int32_t>(t.ring.size()));
    for (int r : ranks) t.ring.push_back(r);
  }
  t.nodeFirst.push_back(static_cast<int32_t>(t.ring.size()));
  t.ringPos.assign(n, 0);
  for (int pos = 0; pos < n; ++pos) t.ringPos[t.ring[pos]] = pos;
  if (myRank >= 0 && myRank < n) {
    t.node = t.nodeOf[myRank];
    t.localRank = t.localRankOf[myRank];
    t.localRanks = static_cast<int>(t.nodeRanks[t.node].size());
  }
  return t;
}

}  // namespace mccl
