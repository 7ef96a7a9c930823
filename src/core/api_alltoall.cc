// AlltoAll, Gather and Scatter (NCCL 2.28) and mccl's AlltoAllv. Each call is checked as a
// whole, then becomes the Send/Recv operations of one group: it takes the same host and GPU
// data paths as the user's own grouped Send/Recv, and inside a user's group it simply adds
// its operations to that group. A rank's block for itself goes through the same path (a
// self connection) unless the call is in place, where that block is already where it
// belongs. AlltoAll in place on several ranks sends from a copy of the input (staged in
// stream order, released when the group is through), since every block it receives
// overwrites one it has yet to send. Where the data path runs AlltoAll, Gather or Scatter
// as one operation (DataPath::runsWhole: a host communicator's shared-memory segment, where
// each rank writes its blocks once and every reader takes its own, or its MPI route), the
// call is queued whole instead: as 2n Sends and Recvs each paid the group's bookkeeping and
// a handoff of its own.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "core/comm.h"
#include "core/datapath.h"
#include "core/enqueue.h"
#include "core/error.h"
#include "core/group.h"
#include "core/knobs.h"
#include "core/memory.h"
#include "core/types.h"
#include "mccl.h"

#ifdef MCCL_HAVE_CUDA
#include <cuda_runtime.h>

#include "core/cuda_guard.h"
#endif

using namespace mccl;

namespace {

struct Xfer {
  OpKind kind;  // Send or Recv
  const char* buf;
  size_t count;
  int peer;
  const void* symAt = nullptr;  // OpDesc::symAt
};

// A failure before anything was queued: inside a group it fails the group, as any other
// operation's would.
ncclResult_t fail(ncclResult_t r) {
  groupSetError(r);
  return r;
}

ncclResult_t checkCommAndType(ncclComm* comm, ncclDataType_t datatype, const char* call) {
  MCCL_CHECK(checkCommArg(comm, call));
  MCCL_CHECK(comm->checkUsable(call));
  if (!validDatatype(datatype))
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: datatype = %d is not an ncclDataType_t (0..%d)",
                    call, static_cast<int>(datatype), ncclNumTypes - 1);
  return ncclSuccess;
}

// blocks * count elements must be a representable byte count (checked without a division,
// as enqueue.cc's validate does).
ncclResult_t checkSize(ncclComm* comm, size_t count, size_t blocks, ncclDataType_t datatype,
                       const char* what, const char* call) {
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, datatypeSize(datatype), &bytes) || __builtin_mul_overflow(bytes, blocks, &bytes) ||
      bytes > static_cast<size_t>(std::numeric_limits<int64_t>::max()))
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: %s = %zu of %s overflows the size of a buffer",
                    call, what, count, datatypeName(datatype));
  return ncclSuccess;
}

ncclResult_t checkBuffer(ncclComm* comm, const void* p, size_t bytes, const char* name,
                         const char* call) {
  if (bytes == 0) return ncclSuccess;
  if (p == nullptr)
    return MCCL_ERR(ncclInvalidArgument, comm, "%s: %s is NULL with %zu bytes to move", call, name,
                    bytes);
  if (knobBool(Knob::CheckPointers)) MCCL_CHECK(checkBufferUsable(comm, p, bytes, name, call));
  return ncclSuccess;
}

bool overlaps(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  if (aBytes == 0 || bBytes == 0) return false;
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bBytes && y < x + aBytes;
}

// Queues xs as one group (joining the caller's group when there is one).
ncclResult_t submit(ncclComm* comm, const std::vector<Xfer>& xs, ncclDataType_t datatype,
                    cudaStream_t stream, const char* call, P2pCall from = P2pCall::User) {
  if (xs.empty()) return ncclSuccess;
  MCCL_CHECK(groupStart());
  ncclResult_t r = ncclSuccess;
  for (const Xfer& x : xs) {
    OpDesc d;
    d.kind = x.kind;
    if (x.kind == OpKind::Send) d.sendbuff = x.buf;
    else d.recvbuff = const_cast<char*>(x.buf);
    d.count = x.count;
    d.datatype = datatype;
    d.root = x.peer;
    d.call = from;
    d.symAt = x.symAt;
    d.stream = stream;
    r = enqueueChecked(comm, d, call);
    if (r != ncclSuccess) break;
  }
  ncclResult_t e = groupEnd();
  return r != ncclSuccess ? r : e;
}

// A copy of bytes at src for the sends of an in-place AlltoAll, released by the group when
// its operations are through (groupAddAfter): host memory copied now on a host
// communicator; on a GPU, memory from the stream-ordered allocator, filled and freed on
// `stream` (so a CUDA graph captures the copy too).
ncclResult_t stageInput(ncclComm* comm, const void* src, size_t bytes, cudaStream_t stream, const char* call,
                        const char** staged) {
  if (comm->isHost()) {
    auto copy = std::make_shared<std::vector<char>>(bytes);
    std::memcpy(copy->data(), src, bytes);
    *staged = copy->data();
    groupAddAfter([copy] {});
    return ncclSuccess;
  }
#ifdef MCCL_HAVE_CUDA
  CudaDeviceGuard guard(comm->cudaDev);
  void* p = nullptr;
  cudaError_t e = cudaMallocAsync(&p, bytes, stream);
  if (e == cudaSuccess) {
    e = cudaMemcpyAsync(p, src, bytes, cudaMemcpyDefault, stream);
    if (e != cudaSuccess) cudaFreeAsync(p, stream);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    return MCCL_ERR(ncclUnhandledCudaError, comm, "%s: staging %zu bytes of the in-place input: %s", call, bytes,
                    cudaGetErrorString(e));
  }
  const int dev = comm->cudaDev;
  *staged = static_cast<const char*>(p);
  groupAddAfter([p, stream, dev] {
    CudaDeviceGuard g(dev);
    cudaFreeAsync(p, stream);
  });
  return ncclSuccess;
#else
  (void)stream;
  return MCCL_ERR(ncclInternalError, comm, "%s: a GPU communicator in a build without CUDA", call);
#endif
}

// Queues the call as one operation (*result) where the data path runs it whole; false: the
// caller queues its Sends and Recvs.
bool queuedWhole(ncclComm* comm, OpKind kind, const void* sendbuff, void* recvbuff, size_t count,
                 ncclDataType_t datatype, int root, cudaStream_t stream, const char* call, ncclResult_t* result) {
  OpDesc d = apiOp(kind, sendbuff, recvbuff, count, datatype, ncclSum, root, stream);
  if (!comm->dataPath || !comm->dataPath->runsWhole(d)) return false;
  *result = enqueueChecked(comm, d, call);
  return true;
}

// Peers in the order (rank, rank+1, ...): every rank starts with a different partner.
int peerAt(const ncclComm* comm, int i) { return (comm->rank + i) % comm->nranks; }

ncclResult_t checkRoot(ncclComm* comm, int root, const char* call) {
  if (root < 0 || root >= comm->nranks)
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: root = %d is out of range for a communicator of %d ranks", call, root,
                    comm->nranks);
  return ncclSuccess;
}

ncclResult_t alltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                      ncclComm* comm, cudaStream_t stream) {
  const char* call = "ncclAlltoAll";
  MCCL_CHECK(checkCommAndType(comm, datatype, call));
  const int n = comm->nranks;
  MCCL_CHECK(checkSize(comm, count, static_cast<size_t>(n), datatype, "count", call));
  const size_t block = count * datatypeSize(datatype), total = block * static_cast<size_t>(n);
  MCCL_CHECK(checkBuffer(comm, sendbuff, total, "sendbuff", call));
  MCCL_CHECK(checkBuffer(comm, recvbuff, total, "recvbuff", call));
  // In place (sendbuff == recvbuff) a rank's own block is already where it belongs, and on
  // several ranks the others are sent from a staged copy; other overlaps are refused.
  const bool inPlace = sendbuff == recvbuff;
  if (!inPlace && overlaps(sendbuff, total, recvbuff, total))
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: sendbuff %p and recvbuff %p overlap (%zu bytes each) without being equal (in place)",
                    call, sendbuff, recvbuff, total);
  if (count == 0 || (inPlace && n == 1)) return submit(comm, {}, datatype, stream, call);
  ncclResult_t whole;
  if (queuedWhole(comm, OpKind::AlltoAll, sendbuff, recvbuff, count, datatype, 0, stream, call, &whole)) return whole;
  MCCL_CHECK(groupStart());
  const char* src = static_cast<const char*>(sendbuff);
  ncclResult_t r = inPlace ? stageInput(comm, sendbuff, total, stream, call, &src) : ncclSuccess;
  if (r == ncclSuccess) {
    std::vector<Xfer> xs;
    for (int i = 0; i < n; ++i) {
      int q = peerAt(comm, i);
      if (inPlace && q == comm->rank) continue;
      char* from = static_cast<char*>(recvbuff) + q * block;
      xs.push_back({OpKind::Recv, from, count, q, from});
      xs.push_back({OpKind::Send, src + q * block, count, q, static_cast<char*>(recvbuff) + comm->rank * block});
    }
    r = submit(comm, xs, datatype, stream, call, P2pCall::AlltoAll);
  } else {
    groupSetError(r);
  }
  ncclResult_t e = groupEnd();
  return r != ncclSuccess ? r : e;
}

ncclResult_t gather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                    int root, ncclComm* comm, cudaStream_t stream) {
  const char* call = "ncclGather";
  MCCL_CHECK(checkCommAndType(comm, datatype, call));
  MCCL_CHECK(checkRoot(comm, root, call));
  const int n = comm->nranks;
  MCCL_CHECK(checkSize(comm, count, static_cast<size_t>(n), datatype, "count", call));
  const size_t block = count * datatypeSize(datatype), total = block * static_cast<size_t>(n);
  const bool isRoot = comm->rank == root;
  MCCL_CHECK(checkBuffer(comm, sendbuff, block, "sendbuff", call));
  bool inPlace = false;
  if (isRoot) {
    MCCL_CHECK(checkBuffer(comm, recvbuff, total, "recvbuff", call));
    char* own = static_cast<char*>(recvbuff) + static_cast<size_t>(root) * block;
    inPlace = count > 0 && sendbuff == own;
    if (!inPlace && overlaps(sendbuff, block, recvbuff, total))
      return MCCL_ERR(ncclInvalidArgument, comm,
                      "%s: sendbuff %p overlaps recvbuff %p but is not recvbuff + root*count (%p), "
                      "the in-place form",
                      call, sendbuff, recvbuff, static_cast<void*>(own));
  }
  ncclResult_t whole;
  if (count > 0 && queuedWhole(comm, OpKind::Gather, sendbuff, recvbuff, count, datatype, root, stream, call, &whole))
    return whole;
  // On symmetric windows a sender's copy engines may write its block into the root's window
  // at the place of its own recvbuff's block (OpDesc::symAt), where a non-root passed one.
  std::vector<Xfer> xs;
  if (count > 0) {
    if (isRoot) {
      for (int i = 0; i < n; ++i) {
        int q = peerAt(comm, i);
        if (q == root && inPlace) continue;
        char* at = static_cast<char*>(recvbuff) + q * block;
        xs.push_back({OpKind::Recv, at, count, q, at});
      }
    }
    const char* lands = recvbuff ? static_cast<const char*>(recvbuff) + comm->rank * block : nullptr;
    if (!(isRoot && inPlace)) xs.push_back({OpKind::Send, static_cast<const char*>(sendbuff), count, root, lands});
  }
  return submit(comm, xs, datatype, stream, call, P2pCall::Gather);
}

ncclResult_t scatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                     int root, ncclComm* comm, cudaStream_t stream) {
  const char* call = "ncclScatter";
  MCCL_CHECK(checkCommAndType(comm, datatype, call));
  MCCL_CHECK(checkRoot(comm, root, call));
  const int n = comm->nranks;
  MCCL_CHECK(checkSize(comm, count, static_cast<size_t>(n), datatype, "count", call));
  const size_t block = count * datatypeSize(datatype), total = block * static_cast<size_t>(n);
  const bool isRoot = comm->rank == root;
  MCCL_CHECK(checkBuffer(comm, recvbuff, block, "recvbuff", call));
  bool inPlace = false;
  if (isRoot) {
    MCCL_CHECK(checkBuffer(comm, sendbuff, total, "sendbuff", call));
    const char* own = static_cast<const char*>(sendbuff) + static_cast<size_t>(root) * block;
    inPlace = count > 0 && recvbuff == own;
    if (!inPlace && overlaps(sendbuff, total, recvbuff, block))
      return MCCL_ERR(ncclInvalidArgument, comm,
                      "%s: recvbuff %p overlaps sendbuff %p but is not sendbuff + root*count (%p), "
                      "the in-place form",
                      call, recvbuff, sendbuff, static_cast<const void*>(own));
  }
  ncclResult_t whole;
  if (count > 0 && queuedWhole(comm, OpKind::Scatter, sendbuff, recvbuff, count, datatype, root, stream, call, &whole))
    return whole;
  // No OpDesc::symAt, so never the copy engines: where the root is in place, a receiver's
  // block may lie at the root's offset or at its own block's (docs/DESIGN.md).
  std::vector<Xfer> xs;
  if (count > 0) {
    if (!(isRoot && inPlace)) xs.push_back({OpKind::Recv, static_cast<char*>(recvbuff), count, root});
    if (isRoot) {
      for (int i = 0; i < n; ++i) {
        int q = peerAt(comm, i);
        if (q == root && inPlace) continue;
        xs.push_back({OpKind::Send, static_cast<const char*>(sendbuff) + q * block, count, q});
      }
    }
  }
  return submit(comm, xs, datatype, stream, call, P2pCall::Scatter);
}

// The elements [0, end) one side of an AlltoAllv touches, checking every block's bounds.
ncclResult_t vSpan(ncclComm* comm, const size_t* counts, const size_t* displs, const char* countsName,
                   const char* displsName, ncclDataType_t datatype, const char* call, size_t* end) {
  if (counts == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: %s is NULL", call, countsName);
  if (displs == nullptr) return MCCL_ERR(ncclInvalidArgument, comm, "%s: %s is NULL", call, displsName);
  const size_t limit = static_cast<size_t>(std::numeric_limits<int64_t>::max()) / datatypeSize(datatype);
  size_t e = 0;
  for (int q = 0; q < comm->nranks; ++q) {
    if (counts[q] == 0) continue;
    if (counts[q] > limit || displs[q] > limit - counts[q])
      return MCCL_ERR(ncclInvalidArgument, comm,
                      "%s: %s[%d] = %zu with %s[%d] = %zu overflows the size of a buffer", call,
                      displsName, q, displs[q], countsName, q, counts[q]);
    e = std::max(e, displs[q] + counts[q]);
  }
  *end = e;
  return ncclSuccess;
}

ncclResult_t alltoAllv(const void* sendbuff, const size_t* sendcounts, const size_t* sdispls,
                       void* recvbuff, const size_t* recvcounts, const size_t* rdispls,
                       ncclDataType_t datatype, ncclComm* comm, cudaStream_t stream) {
  const char* call = "mcclAlltoAllv";
  MCCL_CHECK(checkCommAndType(comm, datatype, call));
  size_t sendEnd = 0, recvEnd = 0;
  MCCL_CHECK(vSpan(comm, sendcounts, sdispls, "sendcounts", "sdispls", datatype, call, &sendEnd));
  MCCL_CHECK(vSpan(comm, recvcounts, rdispls, "recvcounts", "rdispls", datatype, call, &recvEnd));
  const size_t esize = datatypeSize(datatype);
  MCCL_CHECK(checkBuffer(comm, sendbuff, sendEnd * esize, "sendbuff", call));
  MCCL_CHECK(checkBuffer(comm, recvbuff, recvEnd * esize, "recvbuff", call));
  if (overlaps(sendbuff, sendEnd * esize, recvbuff, recvEnd * esize))
    return MCCL_ERR(ncclInvalidArgument, comm,
                    "%s: the send area (sendbuff %p, %zu elements) and the receive area (recvbuff "
                    "%p, %zu elements) overlap; AlltoAllv cannot run in place",
                    call, sendbuff, sendEnd, recvbuff, recvEnd);
  std::vector<Xfer> xs;
  for (int i = 0; i < comm->nranks; ++i) {
    int q = peerAt(comm, i);
    if (recvcounts[q] > 0)
      xs.push_back({OpKind::Recv, static_cast<char*>(recvbuff) + rdispls[q] * esize, recvcounts[q], q});
    if (sendcounts[q] > 0)
      xs.push_back({OpKind::Send, static_cast<const char*>(sendbuff) + sdispls[q] * esize, sendcounts[q], q});
  }
  return submit(comm, xs, datatype, stream, call);
}

}  // namespace

NCCL_API ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                   ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclResult_t r = alltoAll(sendbuff, recvbuff, count, datatype, comm, stream);
  return r == ncclSuccess ? r : fail(r);
  MCCL_API_END
}
NCCL_API_ALIAS(ncclAlltoAll)

NCCL_API ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                 ncclDataType_t datatype, int root, ncclComm_t comm,
                                 cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclResult_t r = gather(sendbuff, recvbuff, count, datatype, root, comm, stream);
  return r == ncclSuccess ? r : fail(r);
  MCCL_API_END
}
NCCL_API_ALIAS(ncclGather)

NCCL_API ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                  ncclDataType_t datatype, int root, ncclComm_t comm,
                                  cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclResult_t r = scatter(sendbuff, recvbuff, count, datatype, root, comm, stream);
  return r == ncclSuccess ? r : fail(r);
  MCCL_API_END
}
NCCL_API_ALIAS(ncclScatter)

NCCL_API ncclResult_t mcclAlltoAllv(const void* sendbuff, const size_t sendcounts[],
                                    const size_t sdispls[], void* recvbuff,
                                    const size_t recvcounts[], const size_t rdispls[],
                                    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclResult_t r = alltoAllv(sendbuff, sendcounts, sdispls, recvbuff, recvcounts, rdispls, datatype,
                             comm, stream);
  return r == ncclSuccess ? r : fail(r);
  MCCL_API_END
}
