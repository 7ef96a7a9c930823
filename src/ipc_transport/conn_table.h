// The GPU connection table (DevComm::table): a block of peerBlockBytes() per peer, its
// DevConns and their control words, which the kernels index by arithmetic (devConn,
// devCtrl in src/kernels/work/dev_work.h) with no lookup on their critical path.
//
// At its full size the table is 126 KiB per rank of the communicator (7 classes x 128
// channels x 2 directions x 72 bytes): 126 MiB per rank at 1,024 ranks, 2 GiB at 16,384,
// although a rank connects to few peers (its ring and tree neighbours, its node for the
// all-pairs LL protocol, the peers it sends to). So the table reserves its address range
// for every peer at init (pointers baked into captured CUDA graphs stay valid for the
// communicator's life) and backs it with device memory only where a connected peer's
// block lies, a page (the driver's granularity, 2 MiB on H100) at a time, cleared when
// mapped: O(connected peers) of memory, O(N) of address space only.
//
// A table no larger than a page (16 ranks at 2 MiB), MCCL_CONN_TABLE=full, or a driver
// without virtual memory management: one cudaMalloc of the table's full size, which CUDA
// IPC can export (mapped pages it cannot).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>

#include "nccl.h"

struct ncclComm;

namespace mccl {

class ConnTable {
 public:
  ConnTable() = default;
  ~ConnTable();
  ConnTable(const ConnTable&) = delete;
  ConnTable& operator=(const ConnTable&) = delete;

  // Reserves blocks of blockBytes for npeers peers on the comm's device and maps nothing
  // yet, or allocates the whole table (small, MCCL_CONN_TABLE=full, no VMM).
  ncclResult_t init(ncclComm* comm, int npeers, size_t blockBytes, cudaStream_t clearStream);
  // Backs peer's block with memory (cleared), if it is not yet.
  ncclResult_t map(int peer);
  // Gives the memory and the address range back (the comm's device current; no kernel of
  // the comm may still run). The destructor does it too.
  void release();

  uint8_t* base() const { return base_; }
  size_t mappedBytes() const { return mapped_; }
  bool sparse() const { return reserved_ > 0; }

 private:
  ncclComm* comm_ = nullptr;
  cudaStream_t clear_ = nullptr;
  uint8_t* base_ = nullptr;
  size_t block_ = 0, page_ = 0;
  size_t reserved_ = 0;  // bytes of address space (0: one cudaMalloc'd table)
  size_t mapped_ = 0;    // bytes of device memory behind the table
  std::map<size_t, unsigned long long> pages_;  // page index -> CUmemGenericAllocationHandle
};

}  // namespace mccl
