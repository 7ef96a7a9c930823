// MPI datatype and operator mapping without recording errors (routing decisions).
#pragma once

#include <mpi.h>

#include "nccl.h"

namespace mccl {
struct CompletionWord;
bool mpiDatatypeQuiet(MPI_Datatype dt, ncclDataType_t* type);
bool mpiOpQuiet(MPI_Op op, ncclRedOp_t* ncclOp);
// mcclStreamSynchronize's wait, on cw's word when a launch took it (core/completion.h).
ncclResult_t waitStream(cudaStream_t stream, MPI_Comm progressComm, const CompletionWord* cw);
}  // namespace mccl
