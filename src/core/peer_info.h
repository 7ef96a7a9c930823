// What every rank tells the others at init, and the node structure derived from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nccl.h"

namespace mccl {

// Fixed-size record exchanged by one allgather at init (plain bytes, no pointers).
struct PeerInfo {
  static constexpr uint32_t kMagic = 0x4d504931;  // "MPI1"
  uint32_t magic = kMagic;
  int32_t rank = -1;
  int32_t pid = 0;
  int32_t cudaDev = -2;       // MCCL_DEVICE_HOST for host ranks
  uint64_t hostHash = 0;      // host identity (MCCL_HOST_ID overrides the hostname)
  uint64_t processHash = 0;   // unique per process: equal means threads of one process
  uint64_t shmToken = 0;      // host communicators: rank 0's names the node's shared segment
  uint8_t uuid[16] = {0};     // CUDA device UUID
  char busId[24] = {0};       // PCI bus id of the GPU ("0000:19:00.0")
  char hostName[64] = {0};
  int32_t numaNode = -1;      // NUMA node of the device (or of the process for host ranks)
  uint8_t liveAddr[20] = {0}; // liveness watchdog's listening address (SockAddr wire form)
  uint64_t liveSecret = 0;    // rank 0's is the secret every watchdog hello proves
  uint32_t liveValid = 0;     // 1 when liveAddr is set
  uint32_t addrLen = 0;       // bytes used in addr
  uint8_t addr[1024] = {0};   // data-path address (UCX worker address)
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
