// Machine topology through hwloc: the NUMA node and cpuset near a GPU (or the process),
// printed at NCCL_DEBUG=INFO, and used to bind helper threads near their device.
#pragma once

#include <string>

struct ncclComm;

namespace mccl {

// NUMA node of the CPU this thread runs on (-1 when unknown).
int currentNumaNode();

// "numa 0 cpuset 0x000000ff" for a GPU by PCI bus id, or for this process when busId is
// empty.
std::string describeLocality(const char* busId);

// Binds the calling thread to the cpuset near busId (the process's cpuset if unknown).
void bindThreadNear(const char* busId);

// Logs the communicator's locality at INFO.
void logTopology(const ncclComm* comm);

}  // namespace mccl
