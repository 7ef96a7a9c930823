// MPI-typed collectives on the communicator cached on an MPI communicator, the MPI to NCCL
// datatype and operator maps, and mcclStreamSynchronize.
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <algorithm>
#include <cstdlib>

#include "bootstrap_mpi/bootstrap_mpi.h"
#include "bootstrap_mpi/mpi_map.h"
#include "core/comm.h"
#include "core/completion.h"
#include "core/enqueue.h"
#include "core/cuda_util.h"
#include "core/error.h"
#include "core/types.h"
#include "mccl.h"
#include "mccl_mpi.h"

#ifdef MCCL_HAVE_CUDA
#include <cuda_runtime.h>
#endif


using namespace mccl;

namespace {

std::string mpiTypeName(MPI_Datatype t) {
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int len = 0;
  if (t == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  if (MPI_Type_get_name(t, name, &len) != MPI_SUCCESS || len == 0) return "an unnamed datatype";
  return std::string(name, static_cast<size_t>(len));
}

const char* mpiOpName(MPI_Op op) {
  struct Named {
    MPI_Op op;
    const char* name;
  };
  const Named named[] = {{MPI_MAXLOC, "MPI_MAXLOC"}, {MPI_MINLOC, "MPI_MINLOC"}, {MPI_LAND, "MPI_LAND"},
                         {MPI_BAND, "MPI_BAND"},     {MPI_LOR, "MPI_LOR"},       {MPI_BOR, "MPI_BOR"},
                         {MPI_LXOR, "MPI_LXOR"},     {MPI_BXOR, "MPI_BXOR"},     {MPI_REPLACE, "MPI_REPLACE"},
                         {MPI_NO_OP, "MPI_NO_OP"},   {MPI_OP_NULL, "MPI_OP_NULL"}};
  for (const Named& n : named)
    if (n.op == op) return n.name;
  return "a user-defined MPI_Op";
}

// The mccl communicator of comm, with its rank, size and whether it is a host one.
struct Target {
  ncclComm_t comm;
  int rank, size;
  bool host;
};

ncclResult_t target(MPI_Comm mpiComm, Target* t) {
  MCCL_CHECK(mcclMpiComm(mpiComm, &t->comm));
  t->rank = t->comm->rank;
  t->size = t->comm->nranks;
  t->host = t->comm->isHost();
  return ncclSuccess;
}

// Copies within the communicator's memory kind (host, or device on stream).
ncclResult_t copyLocal(const Target& t, void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0 || dst == src) return ncclSuccess;
  if (t.host) {
    std::memmove(dst, src, bytes);
    return ncclSuccess;
  }
#ifdef MCCL_HAVE_CUDA
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream);
  if (e != cudaSuccess)
    return MCCL_ERR(ncclUnhandledCudaError, t.comm, "cudaMemcpyAsync: %s", cudaGetErrorString(e));
  return ncclSuccess;
#else
  (void)stream;
  return MCCL_ERR(ncclInternalError, t.comm, "GPU communicator in a build without CUDA");
#endif
}

bool isInPlace(const void* p) { return p == MPI_IN_PLACE; }

// A copy of an in-place call's input to send from (the call overwrites the original while
// peers still read it), in the communicator's memory kind: malloc'ed on a host
// communicator, stream-ordered device memory on a GPU one; freed when it goes (on the GPU
// after the stream's work so far).
struct Staged {
  const Target& tg;
  cudaStream_t stream;
  void* p = nullptr;
  Staged(const Target& tg, cudaStream_t stream) : tg(tg), stream(stream) {}
  Staged(const Staged&) = delete;
  ~Staged() {
    if (p == nullptr) return;
    if (tg.host) std::free(p);
#ifdef MCCL_HAVE_CUDA
    else cudaFreeAsync(p, stream);
#endif
  }
  ncclResult_t copyOf(const void* src, size_t bytes, const char* call) {
    if (bytes == 0) return ncclSuccess;
    if (tg.host) {
      p = std::malloc(bytes);
      if (p == nullptr) return MCCL_ERR(ncclSystemError, tg.comm, "%s: out of host memory (%zu bytes)", call, bytes);
      std::memcpy(p, src, bytes);
      return ncclSuccess;
    }
#ifdef MCCL_HAVE_CUDA
    cudaError_t e = cudaMallocAsync(&p, bytes, stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(p, src, bytes, cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return MCCL_ERR(ncclUnhandledCudaError, tg.comm, "%s: staging %zu bytes of the in-place input: %s", call, bytes,
                      cudaGetErrorString(e));
    }
    return ncclSuccess;
#else
    return MCCL_ERR(ncclInternalError, tg.comm, "GPU communicator in a build without CUDA");
#endif
  }
};

// MPI's count and displacement arrays (ints, one per rank): none negative, NULL refused.
ncclResult_t checkVector(const Target& tg, const int* v, const char* name, const char* call) {
  if (v == nullptr) return MCCL_ERR(ncclInvalidArgument, tg.comm, "%s: %s is NULL", call, name);
  for (int q = 0; q < tg.size; ++q)
    if (v[q] < 0) return MCCL_ERR(ncclInvalidArgument, tg.comm, "%s: %s[%d] = %d is negative", call, name, q, v[q]);
  return ncclSuccess;
}

size_t at(const int* displs, int q, size_t es) { return static_cast<size_t>(displs[q]) * es; }

// The datatype and communicator of a call with a root (Gather, Scatter): the root a rank of
// comm, MPI_IN_PLACE only at it.
ncclResult_t rooted(const char* call, MPI_Datatype datatype, int root, bool inPlace, MPI_Comm comm, ncclDataType_t* t,
                    Target* tg) {
  MCCL_CHECK(mcclMpiDatatype(datatype, t));
  MCCL_CHECK(target(comm, tg));
  if (root < 0 || root >= tg->size)
    return MCCL_ERR(ncclInvalidArgument, tg->comm, "%s: root %d is not a rank of the %d", call, root, tg->size);
  if (inPlace && tg->rank != root)
    return MCCL_ERR(ncclInvalidArgument, tg->comm, "%s: MPI_IN_PLACE is valid only at the root (rank %d)", call, root);
  return ncclSuccess;
}

}  // namespace

namespace mccl {

bool mpiDatatypeQuiet(MPI_Datatype dt, ncclDataType_t* type) {
  if (dt == MPI_DATATYPE_NULL) return false;
  int ni, na, nd, combiner;
  if (MPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS || combiner != MPI_COMBINER_NAMED)
    return false;
  struct Map {
    MPI_Datatype mpi;
    ncclDataType_t nccl;
  };
  const Map maps[] = {
      {MPI_SIGNED_CHAR, ncclInt8},     {MPI_CHAR, ncclInt8},         {MPI_INT8_T, ncclInt8},
      {MPI_UNSIGNED_CHAR, ncclUint8},  {MPI_UINT8_T, ncclUint8},     {MPI_BYTE, ncclUint8},
      {MPI_INT, ncclInt32},            {MPI_INT32_T, ncclInt32},     {MPI_UNSIGNED, ncclUint32},
      {MPI_UINT32_T, ncclUint32},      {MPI_LONG_LONG, ncclInt64},   {MPI_LONG_LONG_INT, ncclInt64},
      {MPI_INT64_T, ncclInt64},        {MPI_UNSIGNED_LONG_LONG, ncclUint64}, {MPI_UINT64_T, ncclUint64},
      {MPI_FLOAT, ncclFloat32},        {MPI_DOUBLE, ncclFloat64},
  };
  for (const Map& m : maps)
    if (m.mpi == dt) {
      *type = m.nccl;
      return true;
    }
  if (dt == MPI_LONG || dt == MPI_UNSIGNED_LONG) {
    bool isSigned = dt == MPI_LONG;
    *type = sizeof(long) == 8 ? (isSigned ? ncclInt64 : ncclUint64) : (isSigned ? ncclInt32 : ncclUint32);
    return true;
  }
  // Fortran's types (a Fortran program's calls through libmccl_mpi's Fortran names), by
  // the size this MPI gives them (compiler flags such as -fdefault-real-8 change it).
  const bool real = dt == MPI_REAL || dt == MPI_DOUBLE_PRECISION || dt == MPI_REAL4 || dt == MPI_REAL8;
  const bool integer = dt == MPI_INTEGER || dt == MPI_INTEGER1 || dt == MPI_INTEGER4 || dt == MPI_INTEGER8;
  int size = 0;
  if ((!real && !integer) || MPI_Type_size(dt, &size) != MPI_SUCCESS) return false;
  if (real && (size == 4 || size == 8)) *type = size == 4 ? ncclFloat32 : ncclFloat64;
  else if (integer && (size == 1 || size == 4 || size == 8)) *type = size == 1 ? ncclInt8 : size == 4 ? ncclInt32 : ncclInt64;
  else return false;
  return true;
}

bool mpiOpQuiet(MPI_Op op, ncclRedOp_t* ncclOp) {
  if (op == MPI_SUM) *ncclOp = ncclSum;
  else if (op == MPI_PROD) *ncclOp = ncclProd;
  else if (op == MPI_MAX) *ncclOp = ncclMax;
  else if (op == MPI_MIN) *ncclOp = ncclMin;
  else return false;
  return true;
}

}  // namespace mccl

NCCL_API ncclResult_t mcclMpiDatatype(MPI_Datatype dt, ncclDataType_t* type) {
  if (type == nullptr) return MCCL_ERR(ncclInvalidArgument, nullptr, "mcclMpiDatatype: type is NULL");
  if (mpiDatatypeQuiet(dt, type)) return ncclSuccess;
  if (dt == MPI_DATATYPE_NULL)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "datatype MPI_DATATYPE_NULL is not supported by mccl");
  int ni, na, nd, combiner;
  if (MPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) == MPI_SUCCESS && combiner != MPI_COMBINER_NAMED)
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "datatype %s is a derived datatype; mccl supports predefined integer and floating-point "
                    "datatypes only",
                    mpiTypeName(dt).c_str());
  return MCCL_ERR(ncclInvalidArgument, nullptr,
                  "datatype %s has no NCCL equivalent (supported: signed/unsigned 8, 32 and 64-bit "
                  "integers, MPI_FLOAT, MPI_DOUBLE, and Fortran's MPI_INTEGER, MPI_REAL and "
                  "MPI_DOUBLE_PRECISION of those sizes)",
                  mpiTypeName(dt).c_str());
}

NCCL_API ncclResult_t mcclMpiOp(MPI_Op op, ncclRedOp_t* ncclOp) {
  if (ncclOp == nullptr) return MCCL_ERR(ncclInvalidArgument, nullptr, "mcclMpiOp: ncclOp is NULL");
  if (mpiOpQuiet(op, ncclOp)) return ncclSuccess;
  return MCCL_ERR(ncclInvalidArgument, nullptr,
                  "operator %s is not supported by mccl (MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN are)",
                  mpiOpName(op));
}

namespace {
// MPI_BYTE moves data but is not an arithmetic type for reductions.
ncclResult_t reductionTypes(MPI_Datatype dt, MPI_Op op, ncclDataType_t* t, ncclRedOp_t* o) {
  if (dt == MPI_BYTE)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "datatype MPI_BYTE cannot be reduced (MPI forbids it too)");
  MCCL_CHECK(mcclMpiDatatype(dt, t));
  return mcclMpiOp(op, o);
}
}  // namespace

NCCL_API ncclResult_t mcclMpiAllreduce(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm, cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclDataType_t t;
  ncclRedOp_t o;
  MCCL_CHECK(reductionTypes(datatype, op, &t, &o));
  Target tg;
  MCCL_CHECK(target(comm, &tg));
  return ncclAllReduce(isInPlace(sendbuf) ? recvbuf : sendbuf, recvbuf, count, t, o, tg.comm, stream);
  MCCL_API_END
}

NCCL_API ncclResult_t mcclMpiBcast(void* buffer, size_t count, MPI_Datatype datatype, int root, MPI_Comm comm,
                                   cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclDataType_t t;
  MCCL_CHECK(mcclMpiDatatype(datatype, &t));
  Target tg;
  MCCL_CHECK(target(comm, &tg));
  return ncclBroadcast(buffer, buffer, count, t, root, tg.comm, stream);
  MCCL_API_END
}

NCCL_API ncclResult_t mcclMpiReduce(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype,
                                    MPI_Op op, int root, MPI_Comm comm, cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclDataType_t t;
  ncclRedOp_t o;
  MCCL_CHECK(reductionTypes(datatype, op, &t, &o));
  Target tg;
  MCCL_CHECK(target(comm, &tg));
  if (isInPlace(sendbuf) && tg.rank != root)
    return MCCL_ERR(ncclInvalidArgument, tg.comm, "mcclMpiReduce: MPI_IN_PLACE is valid only at the root (rank %d)",
                    root);
  return ncclReduce(isInPlace(sendbuf) ? recvbuf : sendbuf, recvbuf, count, t, o, root, tg.comm, stream);
  MCCL_API_END
}

NCCL_API ncclResult_t mcclMpiAllgather(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype,
                                       MPI_Comm comm, cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclDataType_t t;
  MCCL_CHECK(mcclMpiDatatype(datatype, &t));
  Target tg;
  MCCL_CHECK(target(comm, &tg));
  // MPI_IN_PLACE: this rank's block is already in place in recvbuf (NCCL's in-place form).
  const void* src = isInPlace(sendbuf)
                        ? static_cast<char*>(recvbuf) + static_cast<size_t>(tg.rank) * count * datatypeSize(t)
                        : sendbuf;
  return ncclAllGather(src, recvbuf, count, t, tg.comm, stream);
  MCCL_API_END
}

NCCL_API ncclResult_t mcclMpiReduceScatterBlock(const void* sendbuf, void* recvbuf, size_t recvcount,
                                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclDataType_t t;
  ncclRedOp_t o;
  MCCL_CHECK(reductionTypes(datatype, op, &t, &o));
  Target tg;
  MCCL_CHECK(target(comm, &tg));
  if (!isInPlace(sendbuf)) return ncclReduceScatter(sendbuf, recvbuf, recvcount, t, o, tg.comm, stream);
  // MPI_IN_PLACE: the input fills recvbuf and the result goes to its start; NCCL's in-place
  // form leaves it at this rank's block, so it is moved down afterwards.
  const size_t bytes = recvcount * datatypeSize(t);
  char* mine = static_cast<char*>(recvbuf) + static_cast<size_t>(tg.rank) * bytes;
  MCCL_CHECK(ncclReduceScatter(recvbuf, mine, recvcount, t, o, tg.comm, stream));
  return copyLocal(tg, recvbuf, mine, bytes, stream);
  MCCL_API_END
}

NCCL_API ncclResult_t mcclMpiAlltoall(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype,
                                      MPI_Comm comm, cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclDataType_t t;
  MCCL_CHECK(mcclMpiDatatype(datatype, &t));
  Target tg;
  MCCL_CHECK(target(comm, &tg));
  const size_t bytes = count * datatypeSize(t);
  // In place: the data to send is recvbuf itself; send from a copy.
  Staged staged(tg, stream);
  if (isInPlace(sendbuf)) MCCL_CHECK(staged.copyOf(recvbuf, bytes * static_cast<size_t>(tg.size), "mcclMpiAlltoall"));
  const void* src = !isInPlace(sendbuf) ? sendbuf : staged.p ? staged.p : recvbuf;
  ncclResult_t r = ncclGroupStart();
  for (int q = 0; q < tg.size && r == ncclSuccess; ++q) {
    r = ncclSend(static_cast<const char*>(src) + q * bytes, count, t, q, tg.comm, stream);
    if (r == ncclSuccess) r = ncclRecv(static_cast<char*>(recvbuf) + q * bytes, count, t, q, tg.comm, stream);
  }
  ncclResult_t e = ncclGroupEnd();
  return r != ncclSuccess ? r : e;
  MCCL_API_END
}

NCCL_API ncclResult_t mcclMpiGather(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype, int root,
                                    MPI_Comm comm, cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclDataType_t t;
  Target tg;
  MCCL_CHECK(rooted("mcclMpiGather", datatype, root, isInPlace(sendbuf), comm, &t, &tg));
  // MPI_IN_PLACE at the root: its block is already in place (NCCL's in-place form).
  const void* src = isInPlace(sendbuf)
                        ? static_cast<char*>(recvbuf) + static_cast<size_t>(root) * count * datatypeSize(t)
                        : sendbuf;
  return ncclGather(src, recvbuf, count, t, root, tg.comm, stream);
  MCCL_API_END
}

NCCL_API ncclResult_t mcclMpiScatter(const void* sendbuf, void* recvbuf, size_t count, MPI_Datatype datatype, int root,
                                     MPI_Comm comm, cudaStream_t stream) {
  MCCL_API_BEGIN
  ncclDataType_t t;
  Target tg;
  MCCL_CHECK(rooted("mcclMpiScatter", datatype, root, isInPlace(recvbuf), comm, &t, &tg));
  // MPI_IN_PLACE (as recvbuf) at the root: its block stays where it is in sendbuf.
  void* dst = isInPlace(recvbuf) ? static_cast<char*>(const_cast<void*>(sendbuf)) +
                                       static_cast<size_t>(root) * count * datatypeSize(t)
                                 : recvbuf;
  return ncclScatter(sendbuf, dst, count, t, root, tg.comm, stream);
  MCCL_API_END
}

NCCL_API ncclResult_t mcclMpiAllgatherv(const void* sendbuf, int sendcount, void* recvbuf, const int recvcounts[],
                                        const int displs[], MPI_Datatype datatype, MPI_Comm comm,
                                        cudaStream_t stream) {
  MCCL_API_BEGIN
  const char* call = "mcclMpiAllgatherv";
  ncclDataType_t t;
  MCCL_CHECK(mcclMpiDatatype(datatype, &t));
  Target tg;
  MCCL_CHECK(target(comm, &tg));
  MCCL_CHECK(checkVector(tg, recvcounts, "recvcounts", call));
  MCCL_CHECK(checkVector(tg, displs, "displs", call));
  const int me = tg.rank;
  const bool inPlace = isInPlace(sendbuf);
  if (!inPlace && sendcount != recvcounts[me])
    return MCCL_ERR(ncclInvalidArgument, tg.comm, "%s: sendcount %d is not recvcounts[%d] = %d", call, sendcount, me,
                    recvcounts[me]);
  const size_t es = datatypeSize(t);
  // In place this rank's block is already at displs[me]: it only goes to the others.
  const char* mine = inPlace ? static_cast<const char*>(recvbuf) + at(displs, me, es) : static_cast<const char*>(sendbuf);
  ncclResult_t r = ncclGroupStart();
  for (int i = 1; i <= tg.size && r == ncclSuccess; ++i) {
    const int q = (me + i) % tg.size;  // the peers after this rank first, itself last
    if (q == me && inPlace) break;
    r = ncclSend(mine, static_cast<size_t>(recvcounts[me]), t, q, tg.comm, stream);
    if (r == ncclSuccess)
      r = ncclRecv(static_cast<char*>(recvbuf) + at(displs, q, es), static_cast<size_t>(recvcounts[q]), t, q, tg.comm,
                   stream);
  }
  ncclResult_t e = ncclGroupEnd();
  return r != ncclSuccess ? r : e;
  MCCL_API_END
}

NCCL_API ncclResult_t mcclMpiAlltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], void* recvbuf,
                                       const int recvcounts[], const int rdispls[], MPI_Datatype datatype,
                                       MPI_Comm comm, cudaStream_t stream) {
  MCCL_API_BEGIN
  const char* call = "mcclMpiAlltoallv";
  ncclDataType_t t;
  MCCL_CHECK(mcclMpiDatatype(datatype, &t));
  Target tg;
  MCCL_CHECK(target(comm, &tg));
  const bool inPlace = isInPlace(sendbuf);
  // In place the blocks to send are the received ones' places, sent from a copy.
  if (inPlace) {
    sendcounts = recvcounts;
    sdispls = rdispls;
  }
  MCCL_CHECK(checkVector(tg, sendcounts, inPlace ? "recvcounts" : "sendcounts", call));
  MCCL_CHECK(checkVector(tg, sdispls, inPlace ? "rdispls" : "sdispls", call));
  MCCL_CHECK(checkVector(tg, recvcounts, "recvcounts", call));
  MCCL_CHECK(checkVector(tg, rdispls, "rdispls", call));
  const size_t n = static_cast<size_t>(tg.size), es = datatypeSize(t);
  std::vector<size_t> v(4 * n);
  size_t extent = 0;
  for (size_t q = 0; q < n; ++q) {
    v[q] = static_cast<size_t>(sendcounts[q]);
    v[n + q] = static_cast<size_t>(sdispls[q]);
    v[2 * n + q] = static_cast<size_t>(recvcounts[q]);
    v[3 * n + q] = static_cast<size_t>(rdispls[q]);
    if (recvcounts[q] > 0) extent = std::max(extent, v[3 * n + q] + v[2 * n + q]);
  }
  Staged staged(tg, stream);
  if (inPlace) MCCL_CHECK(staged.copyOf(recvbuf, extent * es, call));
  const void* src = !inPlace ? sendbuf : staged.p ? staged.p : recvbuf;
  return mcclAlltoAllv(src, v.data(), v.data() + n, recvbuf, v.data() + 2 * n, v.data() + 3 * n, t, tg.comm, stream);
  MCCL_API_END
}

NCCL_API ncclResult_t mcclMpiReduceScatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, cudaStream_t stream) {
  MCCL_API_BEGIN
  const char* call = "mcclMpiReduceScatter";
  ncclDataType_t t;
  ncclRedOp_t o;
  MCCL_CHECK(reductionTypes(datatype, op, &t, &o));
  Target tg;
  MCCL_CHECK(target(comm, &tg));
  MCCL_CHECK(checkVector(tg, recvcounts, "recvcounts", call));
  bool even = true;
  size_t total = 0;
  for (int q = 0; q < tg.size; ++q) {
    even = even && recvcounts[q] == recvcounts[0];
    total += static_cast<size_t>(recvcounts[q]);
  }
  if (even) return mcclMpiReduceScatterBlock(sendbuf, recvbuf, static_cast<size_t>(recvcounts[0]), datatype, op, comm,
                                             stream);
  // Blocks of different sizes: block q is a Reduce to rank q, all of them in one group.
  // In place the input fills recvbuf, whose start this rank's result overwrites while the
  // other blocks are read: they are reduced from a copy.
  const size_t es = datatypeSize(t);
  Staged staged(tg, stream);
  if (isInPlace(sendbuf)) MCCL_CHECK(staged.copyOf(recvbuf, total * es, call));
  const char* in = static_cast<const char*>(!isInPlace(sendbuf) ? sendbuf : staged.p ? staged.p : recvbuf);
  ncclResult_t r = ncclGroupStart();
  size_t off = 0;
  for (int q = 0; q < tg.size && r == ncclSuccess; ++q) {
    r = ncclReduce(in + off * es, recvbuf, static_cast<size_t>(recvcounts[q]), t, o, q, tg.comm, stream);
    off += static_cast<size_t>(recvcounts[q]);
  }
  ncclResult_t e = ncclGroupEnd();
  return r != ncclSuccess ? r : e;
  MCCL_API_END
}

namespace mccl {

// Waits for stream, and for cw's word first when a launch took it (core/completion.h). The
// first kWaitAloneNs spin on the word (or the stream) alone: one cudaStreamQuery took
// 1.3-2.7 us on an H200 host and MPI_Iprobe adds its own, so a short wait that asks only
// the stream returns up to a query late (bench/results/gpu-1xH200-2026-12-02c). After that
// MPI progresses on every round (the wait never deadlocks against a peer's MPI call), the
// stream is asked too (a launch stopped early never raises its word; a round that waits on a
// word spins on it for kWordRoundNs first), and after 200 rounds the rounds back off to
// sleeps of up to 100 us so a long wait does not burn a core.
ncclResult_t waitStream(cudaStream_t stream, MPI_Comm progressComm, const CompletionWord* cw) {
#ifdef MCCL_HAVE_CUDA
  constexpr uint64_t kWaitAloneNs = 20000, kWordRoundNs = 10000;
  const bool word = cw != nullptr && cw->taken;
  auto raised = [&] { return *cw->word == cw->value; };
  auto raisedWithin = [&](uint64_t ns) {
    for (const uint64_t t = steadyNs(); steadyNs() - t < ns;)
      if (raised()) return true;
    return raised();
  };
  const uint64_t t0 = steadyNs();
  while (steadyNs() - t0 < kWaitAloneNs) {
    if (word) {
      if (raised()) return ncclSuccess;
      continue;
    }
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return ncclSuccess;
    if (e != cudaErrorNotReady)
      return MCCL_ERR(ncclUnhandledCudaError, nullptr, "mcclStreamSynchronize: %s", cudaGetErrorString(e));
  }
  const bool mayUseMpi = progressComm != MPI_COMM_NULL && MpiBootstrap::callerMayUseMpi();
  int round = 0;
  auto sleepFor = std::chrono::microseconds(1);
  for (;;) {
    if (word && raisedWithin(round > 200 ? 0 : kWordRoundNs)) return ncclSuccess;
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return ncclSuccess;
    if (e != cudaErrorNotReady)
      return MCCL_ERR(ncclUnhandledCudaError, nullptr, "mcclStreamSynchronize: %s", cudaGetErrorString(e));
    if (mayUseMpi) MpiBootstrap::progress(progressComm);
    if (++round > 200) {
      std::this_thread::sleep_for(sleepFor);
      if (sleepFor < std::chrono::microseconds(100)) sleepFor *= 2;
    }
  }
#else
  (void)stream;
  (void)progressComm;
  (void)cw;
  return ncclSuccess;
#endif
}

}  // namespace mccl

NCCL_API ncclResult_t mcclStreamSynchronize(cudaStream_t stream, MPI_Comm progressComm) {
  MCCL_API_BEGIN
#ifdef MCCL_HAVE_CUDA
  // Host communicators: nothing runs on a stream (their operations are complete when the
  // call returns), so there is nothing to wait for and no reason to drive MPI (an
  // MPI_Iprobe and the thread checks: 0.07 us, a third of a small AllReduce's wait in the
  // CG example).
  if (cudaUsableDeviceCount() == 0) return ncclSuccess;
#endif
  return waitStream(stream, progressComm, nullptr);
  MCCL_API_END
}
