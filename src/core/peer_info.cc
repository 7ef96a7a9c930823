#include "core/peer_info.h"

#include <unistd.h>

#include <algorithm>
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

Topology Topology::fromAll(const std::vector<PeerInfo>& all, int myRank) {
  Topology t;
  const int n = static_cast<int>(all.size());
  t.nranks_ = n;
  t.rank_ = myRank;
  if (n == 0 || myRank < 0 || myRank >= n) return t;
  std::vector<int32_t> nodeOf(static_cast<size_t>(n), 0);
  std::unordered_map<uint64_t, int> nodeIndex;
  std::vector<int> sizes;
  for (int r = 0; r < n; ++r) {
    auto it = nodeIndex.emplace(all[r].hostHash, static_cast<int>(sizes.size())).first;
    if (it->second == static_cast<int>(sizes.size())) sizes.push_back(0);
    nodeOf[r] = it->second;
    sizes[static_cast<size_t>(it->second)]++;
  }
  const uint64_t myHost = all[myRank].hostHash;
  for (int r = 0; r < n; ++r)
    if (all[r].hostHash == myHost) t.local_.push_back(all[r]);
  for (int r = 0; r < static_cast<int>(t.local_.size()); ++r)
    if (t.local_[r].rank == myRank) t.localRank_ = r;
  t.liveSecret_ = all[0].liveSecret;
  std::unordered_map<uint64_t, std::vector<uint64_t>> devsOfProcess;
  for (const PeerInfo& p : all) {
    std::vector<uint64_t>& devs = devsOfProcess[p.processHash];
    if (std::find(devs.begin(), devs.end(), p.devHash) != devs.end()) t.processSharesDevice_ = true;
    else devs.push_back(p.devHash);
  }
  const int largest = *std::max_element(sizes.begin(), sizes.end());
  bool arithmetic = true;
  for (int r = 0; r < n && arithmetic; ++r) arithmetic = nodeOf[r] == r / largest;
  if (arithmetic) {
    t.nodeSize_ = largest;
    t.maxLocalRanks_ = largest;
    t.nNodes_ = (n + largest - 1) / largest;
    t.node_ = myRank / largest;
    for (int k = 0; k <= t.nNodes_; ++k) t.nodeFirst_.push_back(std::min(k * largest, n));
  } else {
    t.finishTables(nodeOf);
  }
  t.exchangeBytes_ = sizeof(PeerInfo) * static_cast<size_t>(n - 1);
  return t;
}

Topology Topology::fromNode(std::vector<PeerInfo> local, int nranks, int myRank, const Facts& facts,
                            const std::vector<int32_t>& leaderOf) {
  Topology t;
  t.nranks_ = nranks;
  t.rank_ = myRank;
  t.local_ = std::move(local);
  for (int r = 0; r < static_cast<int>(t.local_.size()); ++r)
    if (t.local_[r].rank == myRank) t.localRank_ = r;
  t.liveSecret_ = facts.liveSecret;
  t.processSharesDevice_ = facts.processSharesDevice;
  if (facts.arithmetic) {
    const int l = facts.nodeSize;
    t.nodeSize_ = l;
    t.maxLocalRanks_ = l;
    t.nNodes_ = (nranks + l - 1) / l;
    t.node_ = myRank / l;
    for (int k = 0; k <= t.nNodes_; ++k) t.nodeFirst_.push_back(std::min(k * l, nranks));
    return t;
  }
  // Nodes by first appearance: a node's leader (its smallest rank) is where it appears.
  std::vector<int32_t> nodeOf(static_cast<size_t>(nranks), 0);
  std::unordered_map<int32_t, int32_t> index;
  for (int r = 0; r < nranks; ++r) {
    auto it = index.emplace(leaderOf[static_cast<size_t>(r)], static_cast<int32_t>(index.size())).first;
    nodeOf[static_cast<size_t>(r)] = it->second;
  }
  t.finishTables(nodeOf);
  return t;
}

void Topology::finishTables(const std::vector<int32_t>& nodeOf) {
  const int n = static_cast<int>(nodeOf.size());
  nNodes_ = 0;
  for (int32_t k : nodeOf) nNodes_ = std::max(nNodes_, k + 1);
  std::vector<int32_t> count(static_cast<size_t>(nNodes_), 0);
  for (int32_t k : nodeOf) count[static_cast<size_t>(k)]++;
  nodeFirst_.assign(static_cast<size_t>(nNodes_) + 1, 0);
  maxLocalRanks_ = 0;
  for (int k = 0; k < nNodes_; ++k) {
    nodeFirst_[k + 1] = nodeFirst_[k] + count[static_cast<size_t>(k)];
    maxLocalRanks_ = std::max(maxLocalRanks_, count[static_cast<size_t>(k)]);
  }
  std::vector<int32_t> next(nodeFirst_.begin(), nodeFirst_.end() - 1);
  ring_.assign(static_cast<size_t>(n), 0);
  ringPos_.assign(static_cast<size_t>(n), 0);
  for (int r = 0; r < n; ++r) {
    const int32_t pos = next[static_cast<size_t>(nodeOf[r])]++;
    ring_[static_cast<size_t>(pos)] = r;
    ringPos_[static_cast<size_t>(r)] = pos;
  }
  nodeOf_ = nodeOf;
  node_ = nodeOf_[static_cast<size_t>(rank_)];
}

int Topology::nodeOf(int rank) const {
  return nodeOf_.empty() ? rank / nodeSize_ : nodeOf_[static_cast<size_t>(rank)];
}

const PeerInfo* Topology::localPeer(int rank) const {
  auto it = std::lower_bound(local_.begin(), local_.end(), rank,
                             [](const PeerInfo& p, int r) { return p.rank < r; });
  return it != local_.end() && it->rank == rank ? &*it : nullptr;
}

bool Topology::sameProcess(int rank) const {
  const PeerInfo* p = localPeer(rank);
  return p != nullptr && p->processHash == me().processHash;
}

int Topology::ringRank(int pos) const {
  int m = nranks_ > 0 ? pos % nranks_ : 0;
  if (m < 0) m += nranks_;
  return ring_.empty() ? m : ring_[static_cast<size_t>(m)];
}

std::vector<int32_t> Topology::ringVector() const {
  if (!ring_.empty()) return ring_;
  std::vector<int32_t> v(static_cast<size_t>(nranks_));
  for (int r = 0; r < nranks_; ++r) v[static_cast<size_t>(r)] = r;
  return v;
}

std::vector<int32_t> Topology::ringPosVector() const {
  if (!ringPos_.empty()) return ringPos_;
  return ringVector();  // the identity
}

size_t Topology::memoryBytes() const {
  return sizeof(PeerInfo) * local_.size() +
         sizeof(int32_t) * (nodeFirst_.size() + nodeOf_.size() + ring_.size() + ringPos_.size());
}

std::string Topology::describe() const {
  return std::string(arithmetic() ? "arithmetic" : "table") + " nodes " + std::to_string(nNodes_) + " local " +
         std::to_string(local_.size()) + " max-local " + std::to_string(maxLocalRanks_);
}

}  // namespace mccl
