// MPI datatype and operator mapping without recording errors (routing decisions).
#pragma once

#include <mpi.h>

#include "nccl.h"

namespace mccl {
bool mpiDatatypeQuiet(MPI_Datatype dt, ncclDataType_t* type);
bool mpiOpQuiet(MPI_Op op, ncclRedOp_t* ncclOp);
}  // namespace mccl
