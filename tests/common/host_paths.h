// Helpers of the tests of the host communicators' small-message paths (shared memory,
// MPI's collectives), run under mpirun.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "coll_check.h"
#include "core/knobs.h"
#include "mccl_mpi.h"
#include "mpi_util.h"

namespace mccl_test {

// A host communicator on MPI_COMM_WORLD made with MCCL_HOST_SHM_MAX_BYTES = shmMaxBytes and
// MCCL_HOST_MPI_MAX_BYTES = mpiMaxBytes (0 turns a path off).
inline ncclComm_t hostWorldComm(size_t shmMaxBytes, size_t mpiMaxBytes) {
  setenv("MCCL_HOST_SHM_MAX_BYTES", std::to_string(shmMaxBytes).c_str(), 1);
  setenv("MCCL_HOST_MPI_MAX_BYTES", std::to_string(mpiMaxBytes).c_str(), 1);
  mccl::knobsReload();
  ncclComm_t comm = nullptr;
  ncclResult_t r = mcclCommInitFromMpi(&comm, MPI_COMM_WORLD, MCCL_DEVICE_HOST, nullptr);
  unsetenv("MCCL_HOST_SHM_MAX_BYTES");
  unsetenv("MCCL_HOST_MPI_MAX_BYTES");
  mccl::knobsReload();
  EXPECT_EQ(r, ncclSuccess) << ncclGetLastError(nullptr);
  return comm;
}

// Runs c on comm (every rank runs every case), adds its errors to *errs and returns how far
// counter (the operations a path ran) moved.
inline uint64_t runCountedCase(ncclComm_t comm, const CollCase& c, uint64_t (*counter)(), std::string* errs) {
  uint64_t before = counter();
  std::string e = runCollCase(comm, worldRank(), worldSize(), c);
  if (!e.empty() && errs->size() < 4000) *errs += e;
  return counter() - before;
}

}  // namespace mccl_test
