// What every rank tells the others at init, and the node structure derived from it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "nccl.h"

namespace mccl {

// Fixed-size record every rank sends every other rank at init (one allgather, plain
// bytes): only what planning and topology need about *every* rank. Everything else travels
// to the few peers that need it, when they need it:
//   * the UCX worker address (and the peer's host name) inside the connection record that
//     lazy connection setup exchanges (host_engine/transport.h ConnInfo, ucx_transport/
//     gpu_net.h NetRecord);
//   * the liveness watchdog's address and the host name in a LiveRecord, sent at init to
//     the O(log N) watchdog peers only (core/watchdog.h).
// So the exchange is sizeof(PeerInfo) * (N - 1) bytes per rank (was 1,200 B per peer).
struct PeerInfo {
  static constexpr uint32_t kMagic = 0x4d504932;  // "MPI2"
  uint32_t magic = kMagic;
  int32_t rank = -1;
  int32_t cudaDev = -2;       // MCCL_DEVICE_HOST for host ranks
  int32_t numaNode = -1;      // NUMA node of the device (or of the process for host ranks)
  uint64_t hostHash = 0;      // host identity (MCCL_HOST_ID overrides the hostname)
  uint64_t processHash = 0;   // unique per process: equal means threads of one process
  uint64_t devHash = 0;       // hash of the CUDA device UUID (0: host rank)
  int64_t busId = -1;         // PCI bus id of the GPU as an integer (busIdToInt64), -1: none
  uint64_t shmToken = 0;      // host communicators: rank 0's names the node's shared segment
  uint64_t liveSecret = 0;    // rank 0's is the secret every watchdog hello proves
};
static_assert(sizeof(PeerInfo) <= 64, "the init record is exchanged by every rank with every rank");

// PCI bus ids ("0000:19:00.0") as integers and back ("0000:19:00.0", lower case; CUDA and
// hwloc parse either case). -1 for a string that is not a bus id.
int64_t busIdToInt64(const char* busId);
std::string busIdString(int64_t id);

// Hash of a 16-byte device UUID (never 0).
uint64_t uuidHash(const uint8_t uuid[16]);

// Host names of the peers, learnt lazily (from the liveness records and the connection
// records): error messages name a peer's host where this rank knows it. Thread-safe.
class PeerHosts {
 public:
  void set(int rank, const char* name);
  // The name as known, else "unknown".
  std::string name(int rank) const;
  size_t known() const;

 private:
  mutable std::mutex mu_;
  std::map<int, std::string> byRank_;
};

// This process's identity, computed once.
uint64_t localHostHash();     // hash of MCCL_HOST_ID, or of the hostname and boot id
uint64_t localProcessHash();  // hash of host, pid and a random value drawn at load
std::string localHostName();

struct Topology {
  int nNodes = 0;
  int node = 0;                    // this rank's node index
  int localRank = 0;               // index among the ranks of this node
  int localRanks = 0;              // ranks on this node
  std::vector<int> nodeOf;         // node of each rank
  std::vector<int> localRankOf;    // local rank of each rank
  std::vector<std::vector<int>> nodeRanks;  // ranks of each node, increasing
  // The ring every ring/chain schedule follows: ranks grouped by node, so a ring crosses
  // between nodes once per node. ring[position] = rank, ringPos[rank] = position.
  std::vector<int32_t> ring, ringPos;
  // Ring positions where each node's ranks start, and nNodes (the end) last.
  std::vector<int32_t> nodeFirst;

  // Nodes numbered by first appearance in rank order.
  static Topology build(const std::vector<PeerInfo>& peers, int myRank);
};

}  // namespace mccl
