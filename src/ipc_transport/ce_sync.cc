#include "ipc_transport/ce_sync.h"

#include <cuda.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/comm.h"
#include "core/cuda_util.h"
#include "core/error.h"
#include "ipc_transport/mem_ops.h"
#include "kernels/work/direct.h"

namespace mccl {

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
  auto fail = [why](const std::string& what) {
    *why = what;
    return static_cast<int32_t>(1);
  };
  // Round 1: rank 0 makes the segment (a stale one of the name, left by a process that
  // died between making and unlinking it, is dropped first), zero-filled by ftruncate.
  std::vector<int32_t> status(static_cast<size_t>(n), 0);
  int32_t mine = 0;
  if (n > kDirectMaxRanks) mine = fail("more ranks than the words have room for");
  void* page = nullptr;
  std::string err;
  if (me == 0 && mine == 0) {
    shm_unlink(path);
    page = mapSharedPage(path, s->bytes_, true, true, &err);
    if (!page) mine = fail(err);
    s->words_ = static_cast<volatile uint64_t*>(page);  // unmapped by the destructor on any return
  }
  status[static_cast<size_t>(me)] = mine;
  if (comm->bootstrap->allGather(status.data(), sizeof(int32_t)) != ncclSuccess) mine = fail("allgather");
  bool made = mine == 0;
  for (int32_t v : status) made = made && v == 0;
  // Round 2: every rank maps and registers it.
  if (made) {
    if (me != 0) page = mapSharedPage(path, s->bytes_, false, false, &err);
    if (!page) {
      mine = fail(err);
    } else {
      s->words_ = static_cast<volatile uint64_t*>(page);
      s->devWords_ = registerSharedPage(page, s->bytes_);
      s->registered_ = s->devWords_ != 0;
      if (!s->registered_) mine = fail("cudaHostRegister of the page");
      else if (!batchMemOp() || !memOps64(comm->cudaDev)) mine = fail("no 64-bit stream memory operations on this device");
    }
  } else if (mine == 0) {
    mine = fail("rank 0 could not make the segment");
  }
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
  unsigned int nops = 0;
  // Writes first (each after a memory barrier: the stream's earlier copies land first),
  // then the waits: the batch runs in order.
  for (int q = 0; q < nranks_; ++q)
    if (q != rank_)
      ops[nops++] = memOpWrite(devWords_ + (static_cast<uint64_t>(q) * kRowWords + static_cast<uint64_t>(rank_)) * 8, k);
  for (int q = 0; q < nranks_; ++q)
    if (q != rank_)
      ops[nops++] = memOpWaitGeq(devWords_ + (static_cast<uint64_t>(rank_) * kRowWords + static_cast<uint64_t>(q)) * 8, k);
  const CUresult r = batchMemOp()(reinterpret_cast<CUstream>(stream), nops, ops, 0);
  if (r != CUDA_SUCCESS)
    return MCCL_ERR(ncclUnhandledCudaError, comm, "copy engines: cuStreamBatchMemOp (barrier %llu): CUDA driver error %d",
                    static_cast<unsigned long long>(k), static_cast<int>(r));
  return ncclSuccess;
}

uint64_t CeSync::waitingAt(int* peer) const {
  if (!words_) return 0;
  // The stream writes barrier k into every peer's row before it waits on its own.
  uint64_t reached = 0;
  for (int q = 0; q < nranks_; ++q)
    if (q != rank_) reached = std::max<uint64_t>(reached, uint64_t{row(q)[rank_]});
  if (reached == 0) return 0;
  for (int q = 0; q < nranks_; ++q)
    if (q != rank_ && static_cast<int64_t>(row(rank_)[q] - reached) < 0) {
      *peer = q;
      return reached;
    }
  return 0;
}

void CeSync::release() {
  if (!words_) return;
  const uint64_t v = issued_.load(std::memory_order_relaxed) + kMemOpReleaseAhead;
  for (int q = 0; q < nranks_; ++q) row(rank_)[q] = v;
  __sync_synchronize();
}

}  // namespace mccl
