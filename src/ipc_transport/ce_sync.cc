#include "ipc_transport/ce_sync.h"

#include <cuda.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/comm.h"
#include "core/cuda_util.h"
#include "core/error.h"
#include "kernels/work/direct.h"

namespace mccl {

namespace {

typedef CUresult (*BatchMemOpFn)(CUstream, unsigned int, CUstreamBatchMemOpParams*, unsigned int);
typedef CUresult (*DeviceGetFn)(CUdevice*, int);
typedef CUresult (*DeviceAttributeFn)(int*, CUdevice_attribute, CUdevice);

BatchMemOpFn batchMemOp() {
  static const BatchMemOpFn fn = reinterpret_cast<BatchMemOpFn>(cudaDriverFunction("cuStreamBatchMemOp"));
  return fn;
}

// Whether dev runs 64-bit stream memory operations (every GPU since Volta with a CUDA 12
// driver does; asked rather than assumed).
bool memOps64(int dev) {
  static const DeviceGetFn get = reinterpret_cast<DeviceGetFn>(cudaDriverFunction("cuDeviceGet"));
  static const DeviceAttributeFn attr = reinterpret_cast<DeviceAttributeFn>(cudaDriverFunction("cuDeviceGetAttribute"));
  CUdevice d = 0;
  int v = 0;
  return get && attr && get(&d, dev) == CUDA_SUCCESS &&
         attr(&v, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, d) == CUDA_SUCCESS && v != 0;
}

// Far past any barrier a release is for, and within 2^63 of them (the waits compare the
// signed difference).
constexpr uint64_t kReleaseAhead = uint64_t{1} << 40;

}  // namespace

std::unique_ptr<CeSync> CeSync::create(ncclComm* comm, uint64_t name, std::string* why) {
  const int n = comm->nranks, me = comm->rank;
  char path[64];
  std::snprintf(path, sizeof path, "/mccl-ce-%016llx", static_cast<unsigned long long>(name));
  std::unique_ptr<CeSync> s(new CeSync);
  s->rank_ = me;
  s->nranks_ = n;
  s->dev_ = comm->cudaDev;
  s->bytes_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  static_assert(kRowWords * kDirectMaxRanks * sizeof(uint64_t) <= 4096, "the words fit a page");
  auto fail = [why](const char* what, int err) {
    char b[160];
    std::snprintf(b, sizeof b, "%s: %s", what, err ? std::strerror(err) : "failed");
    *why = b;
    return static_cast<int32_t>(1);
  };
  // Round 1: rank 0 makes the segment (a stale one of the name, left by a process that
  // died between making and unlinking it, is dropped first), zero-filled by ftruncate.
  std::vector<int32_t> status(static_cast<size_t>(n), 0);
  int fd = -1;
  int32_t mine = 0;
  if (n > kDirectMaxRanks) mine = fail("more ranks than the words have room for", 0);
  if (me == 0 && mine == 0) {
    shm_unlink(path);
    fd = shm_open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) mine = fail("shm_open", errno);
    else if (ftruncate(fd, static_cast<off_t>(s->bytes_)) != 0) mine = fail("ftruncate", errno);
  }
  status[static_cast<size_t>(me)] = mine;
  if (comm->bootstrap->allGather(status.data(), sizeof(int32_t)) != ncclSuccess) mine = fail("allgather", 0);
  bool made = mine == 0;
  for (int32_t v : status) made = made && v == 0;
  // Round 2: every rank maps and registers it.
  if (made) {
    if (me != 0) fd = shm_open(path, O_RDWR, 0600);
    void* p = fd < 0 ? MAP_FAILED : mmap(nullptr, s->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd < 0) mine = fail("shm_open", errno);
    else if (p == MAP_FAILED) mine = fail("mmap", errno);
    else {
      s->words_ = static_cast<volatile uint64_t*>(p);
      void* d = nullptr;
      cudaError_t e = cudaHostRegister(p, s->bytes_, cudaHostRegisterMapped | cudaHostRegisterPortable);
      if (e == cudaSuccess) {
        s->registered_ = true;
        e = cudaHostGetDevicePointer(&d, p, 0);
      }
      if (e != cudaSuccess) {
        cudaGetLastError();
        mine = fail(cudaGetErrorString(e), 0);
      } else if (!batchMemOp() || !memOps64(comm->cudaDev)) {
        mine = fail("no 64-bit stream memory operations on this device", 0);
      }
      s->devWords_ = reinterpret_cast<uint64_t>(d);
    }
  } else if (mine == 0) {
    mine = fail("rank 0 could not make the segment", 0);
  }
  if (fd >= 0) close(fd);
  std::fill(status.begin(), status.end(), 0);
  status[static_cast<size_t>(me)] = mine;
  ncclResult_t g = ncclSuccess;
  if (made) g = comm->bootstrap->allGather(status.data(), sizeof(int32_t));
  if (me == 0 && made) shm_unlink(path);  // every rank has it open now, or has given up
  bool ok = made && g == ncclSuccess;
  for (int32_t v : status) ok = ok && v == 0;
  if (!ok) {
    if (why->empty()) *why = "another rank could not map the segment";
    return nullptr;  // the destructor unregisters and unmaps what this rank made
  }
  return s;
}

CeSync::~CeSync() {
  if (words_) {
    // Nothing may still wait on or write into the words once they are gone: what a stream
    // still has queued passes (a communicator is torn down after its work, or aborted).
    release();
    if (registered_) {
      cudaDeviceSynchronize();
      cudaHostUnregister(const_cast<uint64_t*>(words_));
      cudaGetLastError();
    }
    munmap(const_cast<uint64_t*>(words_), bytes_);
  }
}

ncclResult_t CeSync::barrier(ncclComm* comm, cudaStream_t stream) {
  const uint64_t k = issued_.fetch_add(1, std::memory_order_relaxed) + 1;
  CUstreamBatchMemOpParams ops[2 * kDirectMaxRanks];
  std::memset(ops, 0, sizeof ops);
  unsigned int nops = 0;
  // Writes first (each after a memory barrier: the stream's earlier copies land first),
  // then the waits: the batch runs in order.
  for (int q = 0; q < nranks_; ++q) {
    if (q == rank_) continue;
    CUstreamBatchMemOpParams& o = ops[nops++];
    o.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
    o.writeValue.address = devWords_ + (static_cast<uint64_t>(q) * kRowWords + static_cast<uint64_t>(rank_)) * 8;
    o.writeValue.value64 = k;
    o.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
  }
  for (int q = 0; q < nranks_; ++q) {
    if (q == rank_) continue;
    CUstreamBatchMemOpParams& o = ops[nops++];
    o.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
    o.waitValue.address = devWords_ + (static_cast<uint64_t>(rank_) * kRowWords + static_cast<uint64_t>(q)) * 8;
    o.waitValue.value64 = k;
    o.waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  }
  const CUresult r = batchMemOp()(reinterpret_cast<CUstream>(stream), nops, ops, 0);
  if (r != CUDA_SUCCESS)
    return MCCL_ERR(ncclUnhandledCudaError, comm, "copy engines: cuStreamBatchMemOp (barrier %llu): CUDA driver error %d",
                    static_cast<unsigned long long>(k), static_cast<int>(r));
  return ncclSuccess;
}

void CeSync::release() {
  if (!words_) return;
  const uint64_t v = issued_.load(std::memory_order_relaxed) + kReleaseAhead;
  for (int q = 0; q < nranks_; ++q) row(rank_)[q] = v;
  __sync_synchronize();
}

}  // namespace mccl
