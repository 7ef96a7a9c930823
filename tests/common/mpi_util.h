// Small MPI helpers shared by the tests run under mpirun.
#pragma once

#include <mpi.h>

namespace mccl_test {

inline int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int worldSize() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

}  // namespace mccl_test
