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

int64_t busIdToInt64(const char* busId) {
  if (!busId) return -1;
  int64_t v = 0;
  int digits = 0;
  for (const char* c = busId; *c; ++c) {
    int d;
    if (*c >= '0' && *c <= '9') d = *c - '0';
    else if (*c >= 'a' && *c <= 'f') d = *c - 'a' + 10;
    else if (*c >= 'A' && *c <= 'F') d = *c - 'A' + 10;
    else if (*c == ':' || *c == '.') continue;
    else return -1;
    if (++digits > 15) return -1;
    v = (v << 4) | d;
  }
  return digits >= 4 ? v : -1;
}

std::string busIdString(int64_t id) {
  if (id < 0) return "";
  char s[32];
  std::snprintf(s, sizeof s, "%04llx:%02llx:%02llx.%01llx", static_cast<unsigned long long>(id >> 20),
                static_cast<unsigned long long>((id >> 12) & 0xff), static_cast<unsigned long long>((id >> 4) & 0xff),
                static_cast<unsigned long long>(id & 0xf));
  return s;
}

uint64_t uuidHash(const uint8_t uuid[16]) {
  uint64_t h = fnv1a(uuid, 16);
  return h ? h : 1;
}

void PeerHosts::set(int rank, const char* name) {
  if (!name || !*name) return;
  std::lock_guard<std::mutex> lock(mu_);
  byRank_[rank] = name;
}

std::string PeerHosts::name(int rank) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = byRank_.find(rank);
  return it != byRank_.end() ? it->second : "unknown";
}

size_t PeerHosts::known() const {
  std::lock_guard<std::mutex> lock(mu_);
  return byRank_.size();
}

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
