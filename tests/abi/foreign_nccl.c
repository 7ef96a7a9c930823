/* A stand-in for another NCCL (NVIDIA's libnccl) loaded into the same process ahead of
 * libmccl: the entry points libmccl itself calls, each counting the call and failing. */
#include <nccl.h>

int foreignNcclCalls = 0;

#define FOREIGN(name, params) \
  ncclResult_t name params { ++foreignNcclCalls; return ncclInternalError; }

FOREIGN(ncclAllReduce, (const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t o, ncclComm_t m, cudaStream_t st))
FOREIGN(ncclBroadcast, (const void* s, void* r, size_t c, ncclDataType_t t, int root, ncclComm_t m, cudaStream_t st))
FOREIGN(ncclReduce, (const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t o, int root, ncclComm_t m, cudaStream_t st))
FOREIGN(ncclAllGather, (const void* s, void* r, size_t c, ncclDataType_t t, ncclComm_t m, cudaStream_t st))
FOREIGN(ncclReduceScatter, (const void* s, void* r, size_t c, ncclDataType_t t, ncclRedOp_t o, ncclComm_t m, cudaStream_t st))
FOREIGN(ncclSend, (const void* s, size_t c, ncclDataType_t t, int peer, ncclComm_t m, cudaStream_t st))
FOREIGN(ncclRecv, (void* r, size_t c, ncclDataType_t t, int peer, ncclComm_t m, cudaStream_t st))
FOREIGN(ncclGroupStart, (void))
FOREIGN(ncclGroupEnd, (void))
FOREIGN(ncclCommDestroy, (ncclComm_t m))
FOREIGN(ncclMemAlloc, (void** p, size_t n))
FOREIGN(ncclMemFree, (void* p))
const char* ncclGetLastError(ncclComm_t m) { ++foreignNcclCalls; return "foreign"; }
