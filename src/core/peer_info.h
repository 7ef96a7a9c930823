// What every rank tells the others at init, and the node structure derived from it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "nccl.h"

namespace mccl {

// Fixed-size record of a rank at init (plain bytes): only what planning and topology need
// about the ranks of its node. Who receives it depends on the bootstrap:
//   * MPI (InitFromMpi, splits of MPI-backed comms): the ranks of the same node only,
//     through MPI_Comm_split by host and an allgather inside the node; what a rank needs
//     about the whole communicator comes from one MPI_Allreduce (core/node_exchange.h), so
//     a rank receives sizeof(PeerInfo) * (localRanks - 1) + O(1) bytes (+ 4 bytes per rank
//     for scattered mappings);
//   * unique id (TCP), in-process, and MPI init polled from the user's thread: every rank
//     (one allgather, sizeof(PeerInfo) * (N - 1) bytes per rank); the topology built from
//     it keeps the same compact form.
// Everything else travels to the few peers that need it, when they need it:
//   * the UCX worker address (and the peer's host name) inside the connection record that
//     lazy connection setup exchanges (host_engine/transport.h ConnInfo, ucx_transport/
//     gpu_net.h NetRecord);
//   * the liveness watchdog's address and the host name in a LiveRecord, sent at init to
//     the O(log N) watchdog peers only (core/watchdog.h).
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
  uint64_t shmToken = 0;      // host communicators: the node's first rank's names its shared segment
  uint64_t liveSecret = 0;    // rank 0's is the secret every watchdog hello proves
};
static_assert(sizeof(PeerInfo) <= 64, "the init record is exchanged by every rank of a node (of the comm: TCP)");

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

// The node structure of a communicator: which ranks share this rank's node (and their
// records), how many nodes there are, and the ring every ring/chain schedule follows.
//
// Compact by design (issue 17): a rank keeps the records of its own node's ranks only
// (sizeof(PeerInfo) * localRanks) and answers everything about a remote rank from
// arithmetic or from a small table:
//   * every node's ranks contiguous in rank order, all nodes of one size L except the
//     last, which may be smaller (the usual mpirun mapping, and one node): the ring is the
//     identity, node k holds ranks [k*L, min((k+1)*L, N)); only the nodeFirst table
//     (nNodes + 1 ints, what Schedule::nodeFirst points at) is kept besides the node's
//     records;
//   * any other mapping (scattered, e.g. round-robin over nodes, or contiguous nodes of
//     different sizes): an O(N) fallback of three int32 tables (node of each rank, ring,
//     ring position), identical on every rank because every rank builds it from the same
//     per-rank node numbers (the MPI init exchanges 4 bytes per rank for it, not the
//     64-byte record).
// Two builders, one set of accessors: fromAll (every rank's record: the unique-id and
// in-process bootstraps, and nonblocking MPI init polled from the user's thread) and
// fromNode (the MPI exchange by node: src/core/node_exchange.cc). Nodes are numbered by
// first appearance in rank order, and the ring holds each node's ranks together (it
// crosses between nodes once per node).
class Topology {
 public:
  // What the MPI exchange by node learnt with its O(1) collectives (node_exchange.cc).
  struct Facts {
    bool arithmetic = false;   // the contiguous mapping above (nodeSize = L)
    int nodeSize = 0;          // L: the largest node
    int nNodes = 0;
    uint64_t liveSecret = 0;   // rank 0's
    bool processSharesDevice = false;  // two ranks of one process on one device, anywhere
  };

  Topology() = default;

  // From every rank's record (indexed by rank).
  static Topology fromAll(const std::vector<PeerInfo>& all, int myRank);
  // From this node's records (ascending ranks, this rank among them) and the facts;
  // leaderOf: the smallest rank of each rank's node (nranks entries) unless arithmetic.
  static Topology fromNode(std::vector<PeerInfo> local, int nranks, int myRank, const Facts& facts,
                           const std::vector<int32_t>& leaderOf);

  bool built() const { return !local_.empty(); }
  int nranks() const { return nranks_; }
  int nNodes() const { return nNodes_; }
  int node() const { return node_; }              // this rank's node index
  int localRank() const { return localRank_; }    // index among the ranks of this node
  int localRanks() const { return static_cast<int>(local_.size()); }
  int maxLocalRanks() const { return maxLocalRanks_; }  // ranks of the largest node
  bool arithmetic() const { return nodeOf_.empty(); }

  // Node of any rank (arithmetic, or the fallback table).
  int nodeOf(int rank) const;
  bool onMyNode(int rank) const { return localPeer(rank) != nullptr; }
  // The record of a rank of this node; nullptr for a rank of another node.
  const PeerInfo* localPeer(int rank) const;
  const PeerInfo& me() const { return local_[static_cast<size_t>(localRank_)]; }
  const std::vector<PeerInfo>& localPeers() const { return local_; }  // ascending ranks
  // Threads of one process (so on this node).
  bool sameProcess(int rank) const;
  // True when some two ranks of the communicator are one process on one device (devHash
  // equal: also two host ranks of one process); every rank gets the same answer.
  bool processSharesDevice() const { return processSharesDevice_; }

  // The ring: position of a rank, rank at a position (any integer, taken mod N).
  int ringPos(int rank) const { return ringPos_.empty() ? rank : ringPos_[static_cast<size_t>(rank)]; }
  int ringRank(int pos) const;
  // The tables Schedule points at: nullptr for the identity ring.
  const int32_t* ringTable() const { return ring_.empty() ? nullptr : ring_.data(); }
  const int32_t* ringPosTable() const { return ringPos_.empty() ? nullptr : ringPos_.data(); }
  // The whole ring as a table (built on demand, O(N): tests and dumps).
  std::vector<int32_t> ringVector() const;
  std::vector<int32_t> ringPosVector() const;
  // Ring positions where each node's ranks start, and N (the end) last: nNodes + 1 entries.
  const std::vector<int32_t>& nodeFirst() const { return nodeFirst_; }

  uint64_t liveSecret() const { return liveSecret_; }  // rank 0's watchdog secret
  // The name of this node's shared segment (host communicators): local rank 0's token.
  uint64_t shmToken() const { return local_.empty() ? 0 : local_[0].shmToken; }

  // Bytes this rank received in the exchange that built it, and bytes the topology keeps.
  size_t exchangeBytes() const { return exchangeBytes_; }
  void setExchangeBytes(size_t b) { exchangeBytes_ = b; }
  size_t memoryBytes() const;
  // "arithmetic" or "table" and the figures, for the init profile line.
  std::string describe() const;

 private:
  void finishTables(const std::vector<int32_t>& nodeOf);

  int nranks_ = 0, rank_ = 0, nNodes_ = 0, node_ = 0, localRank_ = 0, maxLocalRanks_ = 0, nodeSize_ = 0;
  std::vector<PeerInfo> local_;
  std::vector<int32_t> nodeFirst_;
  std::vector<int32_t> nodeOf_, ring_, ringPos_;  // the fallback (empty: arithmetic)
  uint64_t liveSecret_ = 0;
  bool processSharesDevice_ = false;
  size_t exchangeBytes_ = 0;
};

}  // namespace mccl
