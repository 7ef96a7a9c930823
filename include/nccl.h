/*
 * nccl.h — the NCCL 2.28 C API (API level 2.28.3) as implemented by mccl.
 *
 * Programs written for NCCL include this header and link against libmccl unchanged: every
 * type, constant, structure layout and function of NVIDIA's 2.28 nccl.h is here with the
 * same values and the same ABI, including the pnccl* profiling aliases (the same functions
 * under a second name). The comments are mccl's. What mccl does not implement is still
 * declared and defined, and answers ncclInvalidUsage with a sentence (README, "Status").
 *
 * Like NVIDIA's header it brings in the CUDA runtime and the half, bfloat16 and fp8 types
 * (cuda_fp16.h, cuda_bf16.h from CUDA 11.0, cuda_fp8.h in C++ from CUDA 11.8), which
 * programs such as nccl-tests rely on. Unlike NVIDIA's it also compiles without the CUDA
 * headers (or with MCCL_NO_CUDA_HEADERS defined): cudaStream_t is then declared here as the
 * same opaque pointer type the CUDA runtime uses, so host-only programs can pass NULL.
 */
#ifndef NCCL_H_
#define NCCL_H_

#if !defined(MCCL_NO_CUDA_HEADERS) && defined(__has_include)
#if __has_include(<cuda_runtime.h>)
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#if CUDART_VERSION >= 11000
#include <cuda_bf16.h>
#endif
#if __cplusplus && CUDART_VERSION >= 11080
#include <cuda_fp8.h>
#endif
#define MCCL_HAVE_CUDA_HEADERS 1
#endif
#endif
#ifndef MCCL_HAVE_CUDA_HEADERS
/* Same definition as the CUDA runtime's driver_types.h, so the two can coexist. */
typedef struct CUstream_st* cudaStream_t;
#endif

#include <limits.h>
#include <stddef.h>

#define NCCL_MAJOR 2
#define NCCL_MINOR 28
#define NCCL_PATCH 3
#define NCCL_SUFFIX ""

/* Version codes: 2.8 and older used X*1000+Y*100+Z, newer ones X*10000+Y*100+Z. */
#define NCCL_VERSION(X, Y, Z) \
  (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))
#define NCCL_VERSION_CODE 22803

#ifdef __cplusplus
extern "C" {
#endif

/* In C++ the enums below have int as their underlying type (same size and ABI as in C),
 * so any value a C caller passes is a value mccl can check and reject, not undefined
 * behaviour. */
#ifdef __cplusplus
#define MCCL_ENUM_INT : int
#else
#define MCCL_ENUM_INT
#endif

/* A communicator: opaque handle. */
typedef struct ncclComm* ncclComm_t;
/* A registered memory window (ncclCommWindowRegister): opaque handle. */
typedef struct ncclWindow_vidmem* ncclWindow_t;
#define NCCL_COMM_NULL NULL

/* The identifier every rank of a new communicator must share (produced by ncclGetUniqueId). */
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

/* Result of every call. */
typedef enum MCCL_ENUM_INT {
  ncclSuccess = 0,            /* the call did what was asked                           */
  ncclUnhandledCudaError = 1, /* a CUDA call failed                                    */
  ncclSystemError = 2,        /* the OS, MPI, UCX or another library failed            */
  ncclInternalError = 3,      /* a bug in mccl                                         */
  ncclInvalidArgument = 4,    /* an argument has a value the call does not accept      */
  ncclInvalidUsage = 5,       /* the call is not allowed in the current state          */
  ncclRemoteError = 6,        /* a peer rank failed or cannot be reached               */
  ncclInProgress = 7,         /* a nonblocking operation has not finished yet          */
  ncclNumResults = 8
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNDEF_FLOAT -1.0f

/* ncclCommWindowRegister flags, and the alignment a window's buffer must have. */
#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

/* CTA policies (accepted and recorded; mccl sizes its launches itself). */
#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02 /* no CTA: leave data movement to the copy engines */

/* ncclCommShrink flags. */
#define NCCL_SHRINK_DEFAULT 0x00 /* shrink a healthy communicator */
#define NCCL_SHRINK_ABORT 0x01   /* abort the parent's operations first (a rank died) */

/* ncclCommRevoke flags (none defined yet: must be 0). */
#define NCCL_REVOKE_DEFAULT 0x00

/* Communicator configuration. Initialise with NCCL_CONFIG_INITIALIZER, then set fields.
 * The first three fields identify the layout and must not be touched by users. */
typedef struct ncclConfig_v22800 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;           /* 0: calls may return ncclInProgress                     */
  int cgaClusterSize;     /* CUDA thread-block cluster size (0..8)                  */
  int minCTAs;            /* fewest channels (CUDA blocks) a launch uses            */
  int maxCTAs;            /* most channels (CUDA blocks) a launch uses              */
  const char* netName;    /* network to use ("UCX"), NULL for the default           */
  int splitShare;         /* children of ncclCommSplit may share resources          */
  int trafficClass;       /* network traffic class, NCCL_CONFIG_UNDEF_INT: default   */
  const char* commName;   /* a name used in logs                                    */
  int collnetEnable;      /* in-network reduction (not available: must be 0)        */
  int CTAPolicy;          /* NCCL_CTA_POLICY_*                                      */
  int shrinkShare;        /* children of ncclCommShrink may share resources (0/1)   */
  int nvlsCTAs;           /* CTAs of NVLink SHARP collectives (unused: no NVLS)     */
  int nChannelsPerNetPeer; /* channels per network peer of p2p operations (> 0)     */
  int nvlinkCentricSched; /* NVLink-first scheduling of alltoall-like traffic (0/1) */
} ncclConfig_t;

#define NCCL_CONFIG_INITIALIZER                                                     \
  {                                                                                 \
    sizeof(ncclConfig_t),                  /* size */                               \
        0xcafebeef,                        /* magic */                              \
        NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH), /* version */             \
        NCCL_CONFIG_UNDEF_INT,             /* blocking */                           \
        NCCL_CONFIG_UNDEF_INT,             /* cgaClusterSize */                     \
        NCCL_CONFIG_UNDEF_INT,             /* minCTAs */                            \
        NCCL_CONFIG_UNDEF_INT,             /* maxCTAs */                            \
        NCCL_CONFIG_UNDEF_PTR,             /* netName */                            \
        NCCL_CONFIG_UNDEF_INT,             /* splitShare */                         \
        NCCL_CONFIG_UNDEF_INT,             /* trafficClass */                       \
        NCCL_CONFIG_UNDEF_PTR,             /* commName */                           \
        NCCL_CONFIG_UNDEF_INT,             /* collnetEnable */                      \
        NCCL_CONFIG_UNDEF_INT,             /* CTAPolicy */                          \
        NCCL_CONFIG_UNDEF_INT,             /* shrinkShare */                        \
        NCCL_CONFIG_UNDEF_INT,             /* nvlsCTAs */                           \
        NCCL_CONFIG_UNDEF_INT,             /* nChannelsPerNetPeer */                \
        NCCL_CONFIG_UNDEF_INT              /* nvlinkCentricSched */                 \
  }

/* Filled by ncclGroupSimulateEnd. */
typedef struct ncclSimInfo_v22200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime; /* microseconds the group is expected to take */
} ncclSimInfo_t;

#define NCCL_SIM_INFO_INITIALIZER                                                   \
  {                                                                                 \
    sizeof(ncclSimInfo_t), 0x74685283, NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH), \
        NCCL_UNDEF_FLOAT                                                            \
  }

/* Reduction operations. Values from ncclNumOps up are handles made by
 * ncclRedOpCreatePreMulSum. */
typedef enum { ncclNumOps_dummy = 5 } ncclRedOp_dummy_t;
typedef enum MCCL_ENUM_INT {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  ncclNumOps = 5,
  ncclMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(ncclRedOp_dummy_t))
} ncclRedOp_t;

/* Element types. */
typedef enum MCCL_ENUM_INT {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
  ncclNumTypes = 12
} ncclDataType_t;

/* Where the scalar of a PreMulSum lives and when it is read. */
typedef enum MCCL_ENUM_INT {
  ncclScalarDevice = 0,       /* device-visible memory, read when the collective runs */
  ncclScalarHostImmediate = 1 /* host memory, read before ncclRedOpCreatePreMulSum returns */
} ncclScalarResidence_t;

/* ---- Memory ---------------------------------------------------------------------- */

/* Every function below has a pnccl* twin: the same function under a second name, which
 * profiling tools intercept the nccl* name and call through. */

/* Allocates memory suited to registration and zero-copy sharing with peers. */
ncclResult_t  ncclMemAlloc(void** ptr, size_t size);
ncclResult_t pncclMemAlloc(void** ptr, size_t size);
ncclResult_t  ncclMemFree(void* ptr);
ncclResult_t pncclMemFree(void* ptr);

/* ---- Versions and identifiers ---------------------------------------------------- */

/* The NCCL_VERSION_CODE of the API level the library implements (22803). */
ncclResult_t  ncclGetVersion(int* version);
ncclResult_t pncclGetVersion(int* version);
ncclResult_t  ncclGetUniqueId(ncclUniqueId* uniqueId);
ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId);

/* ---- Communicators ---------------------------------------------------------------- */

ncclResult_t  ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                     ncclConfig_t* config);
ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                     ncclConfig_t* config);
ncclResult_t  ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t  ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist);
ncclResult_t pncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist);
ncclResult_t  ncclCommFinalize(ncclComm_t comm);
ncclResult_t pncclCommFinalize(ncclComm_t comm);
ncclResult_t  ncclCommDestroy(ncclComm_t comm);
ncclResult_t pncclCommDestroy(ncclComm_t comm);
ncclResult_t  ncclCommAbort(ncclComm_t comm);
ncclResult_t pncclCommAbort(ncclComm_t comm);
/* Stops the communicator's operations in flight; afterwards only destroy, split and shrink
 * are allowed. revokeFlags must be NCCL_REVOKE_DEFAULT. */
ncclResult_t  ncclCommRevoke(ncclComm_t comm, int revokeFlags);
ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags);
ncclResult_t  ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                            ncclConfig_t* config);
ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                            ncclConfig_t* config);
/* A communicator of the ranks of comm not listed in excludeRanksList, in the same order
 * (NCCL_SHRINK_ABORT: abort comm's operations first, for when a rank died). */
ncclResult_t  ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                             ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags);
ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                             ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags);
/* Several ids (the same on every rank, in the same order) spread the rendezvous load. */
ncclResult_t  ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                       ncclUniqueId* commIds, ncclConfig_t* config);
ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                       ncclUniqueId* commIds, ncclConfig_t* config);

const char*  ncclGetErrorString(ncclResult_t result);
const char* pncclGetErrorString(ncclResult_t result);
const char*  ncclGetLastError(ncclComm_t comm);
const char* pncclGetLastError(ncclComm_t comm);
/* Re-reads the environment (NCCL_DEBUG, ...); no other thread may be inside mccl meanwhile.
 * Deprecated by NVIDIA, kept for the ABI. */
__attribute__((deprecated("ncclResetDebugInit is not supported as part of the NCCL API and will be removed in the future")))
void  ncclResetDebugInit();
__attribute__((deprecated("pncclResetDebugInit is not supported as part of the NCCL API and will be removed in the future")))
void pncclResetDebugInit();
ncclResult_t  ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);
ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);
ncclResult_t  ncclCommCount(const ncclComm_t comm, int* count);
ncclResult_t pncclCommCount(const ncclComm_t comm, int* count);
ncclResult_t  ncclCommCuDevice(const ncclComm_t comm, int* device);
ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device);
ncclResult_t  ncclCommUserRank(const ncclComm_t comm, int* rank);
ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank);

/* Registration of user buffers for zero-copy transfers. */
ncclResult_t  ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle);
ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle);
ncclResult_t  ncclCommDeregister(const ncclComm_t comm, void* handle);
ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle);

/* Symmetric memory windows (collective over comm). Not supported by this version of mccl:
 * they answer ncclInvalidUsage. */
ncclResult_t  ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                     int winFlags);
ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                     int winFlags);
ncclResult_t  ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);
ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);

/* ---- Reduction operators ---------------------------------------------------------- */

/* An operator that multiplies each rank's input by *scalar, then sums. Valid only on
 * comm and with datatype. */
ncclResult_t  ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm);
ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm);
ncclResult_t  ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);
ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);

/* ---- Collectives (enqueued on stream; host communicators complete before returning) -- */

ncclResult_t  ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                         cudaStream_t stream);
ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                         cudaStream_t stream);
/* Deprecated in-place broadcast. */
ncclResult_t  ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream);
ncclResult_t  ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, int root, ncclComm_t comm,
                            cudaStream_t stream);
ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, int root, ncclComm_t comm,
                            cudaStream_t stream);
ncclResult_t  ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                            cudaStream_t stream);
ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                            cudaStream_t stream);
/* recvcount elements per rank; in place when recvbuff == sendbuff + rank*recvcount. */
ncclResult_t  ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                cudaStream_t stream);
ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                cudaStream_t stream);
/* sendcount elements per rank; in place when sendbuff == recvbuff + rank*sendcount. */
ncclResult_t  ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
/* count elements to and from every rank: the block for rank j is sendbuff + j*count, the
 * block from rank i lands at recvbuff + i*count. sendbuff == recvbuff (in place) is
 * rejected; other overlaps are undefined. */
ncclResult_t  ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
/* count elements from every rank to root, rank i's at recvbuff + i*count (recvbuff is used
 * on root only). In place when sendbuff == recvbuff + root*count on root. */
ncclResult_t  ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
/* root sends sendbuff + i*count to rank i (sendbuff is used on root only). In place when
 * recvbuff == sendbuff + root*count on root. */
ncclResult_t  ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);

/* ---- Point to point ----------------------------------------------------------------- */

ncclResult_t  ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream);
ncclResult_t  ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream);

/* ---- Groups ------------------------------------------------------------------------- */

ncclResult_t  ncclGroupStart(void);
ncclResult_t pncclGroupStart(void);
ncclResult_t  ncclGroupEnd(void);
ncclResult_t pncclGroupEnd(void);
/* Ends the group like ncclGroupEnd but runs nothing: its operations are dropped and
 * simInfo->estimatedTime gets the planner's estimate of them, in microseconds. */
ncclResult_t  ncclGroupSimulateEnd(ncclSimInfo_t* simInfo);
ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NCCL_H_ */
