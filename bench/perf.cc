// mccl-perf: time, algorithm bandwidth and bus bandwidth of every collective, with the
// definitions of nccl-tests, under mpirun. The same source builds against mccl
// (mccl-perf) and against NVIDIA's NCCL (nccl-perf, MCCL_PERF_NCCL), so the two libraries
// are measured by one harness and never loaded into one process.
//
// Host communicators (no GPU, or MCCL_DEVICE=host) are compared in the same run with the
// MPI collective that does the same thing (MPI_Allreduce, MPI_Bcast, MPI_Reduce,
// MPI_Allgather, MPI_Reduce_scatter_block) on the same buffers.
//
//   mpirun -np 2 mccl-perf [-b 8] [-e 256M] [-f 2] [-n iters] [-w warmup] [-o allreduce,...]
//                          [-d float] [-G graph-iters] [-c check] [--csv FILE] [--knobs] [--memory]
//                          [--from-mpi] [-R 0|1|2] [--pad BYTES]
//
// -R: how the buffers are given to the library, as nccl-tests' -R: 0 cudaMalloc'ed, not
// registered; 1 ncclMemAlloc'ed and ncclCommRegister'ed; 2 ncclMemAlloc'ed and registered as
// symmetric windows (ncclCommWindowRegister, NCCL_WIN_COLL_SYMMETRIC). NCCL's best modes
// for a size are among these (and NCCL_CTA_POLICY=2 with -R 2: the copy engines).
//
// --from-mpi: the communicator comes from mcclCommInitFromMpi(MPI_COMM_WORLD) (host
// communicators then hand small collectives to MPI's own, MCCL_HOST_MPI_MAX_BYTES), not
// from a unique id.
//
// --pad BYTES: that much device memory allocated (and kept) before the communicator, so
// every allocation after it (the library's and the benchmark's) lands elsewhere. A
// latency of a few microseconds follows where its few hot words lie (which L2 slice, near
// or far from the SM); a sweep of pads shows how much of a difference between two builds
// is placement rather than code.
//
// --memory: GPU memory the communicator took (cudaMemGetInfo, the benchmark's own buffers
// left out) after init, after the run and after destroy, and mccl's own account by kind.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "nccl.h"
#ifndef MCCL_PERF_NCCL
#include "mccl.h"
#include "mccl_mpi.h"
#endif
#ifdef MCCL_PERF_CUDA
#include <cuda_runtime.h>
#endif

namespace {

#define CHECK_NCCL(call)                                                                        \
  do {                                                                                          \
    ncclResult_t r_ = (call);                                                                   \
    if (r_ != ncclSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s (%s)\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_), \
                   ncclGetLastError(nullptr));                                                  \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                             \
    }                                                                                           \
  } while (0)

#ifdef MCCL_PERF_CUDA
#define CHECK_CUDA(call)                                                                        \
  do {                                                                                          \
    cudaError_t e_ = (call);                                                                    \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                             \
    }                                                                                           \
  } while (0)
#endif

enum class Op { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, SendRecv, AlltoAll, Gather, Scatter, Exchange };
const char* kOpNames[] = {"allreduce", "broadcast", "reduce",  "allgather", "reducescatter",
                          "sendrecv",  "alltoall",  "gather",  "scatter", "exchange"};

struct Options {
  size_t minBytes = 8, maxBytes = 256u << 20;
  double factor = 2;
  int iters = 0, warmup = 0;  // 0: automatic
  int graphIters = 0;         // >0: capture this many calls in a CUDA graph
  bool check = true;
  std::vector<Op> ops = {Op::AllReduce, Op::Broadcast, Op::Reduce, Op::AllGather, Op::ReduceScatter};
  ncclDataType_t type = ncclFloat;
  std::string csv;
  bool mpiCompare = true;
  int trials = 3;  // each size is timed this many times, mccl and MPI interleaved; medians
  bool memory = false;  // --memory
  bool fromMpi = false;  // --from-mpi: mcclCommInitFromMpi(MPI_COMM_WORLD) instead of a unique id
  int reg = 0;  // -R: 0 plain, 1 ncclCommRegister, 2 symmetric windows
  size_t pad = 0;  // --pad: device bytes allocated before the communicator
};

using mccl_bench::parseSize;

size_t typeSize(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclFloat64: case ncclInt64: case ncclUint64: return 8;
    default: return 4;
  }
}

MPI_Datatype mpiType(ncclDataType_t t) {
  switch (t) {
    case ncclFloat64: return MPI_DOUBLE;
    case ncclInt32: return MPI_INT;
    case ncclInt8: return MPI_SIGNED_CHAR;
    case ncclUint8: return MPI_UNSIGNED_CHAR;
    case ncclInt64: return MPI_INT64_T;
    default: return MPI_FLOAT;
  }
}

// nccl-tests: bus bandwidth factor and the bytes counted for algbw.
double busFactor(Op op, int n) {
  switch (op) {
    case Op::AllReduce: return 2.0 * (n - 1) / n;
    case Op::AllGather: case Op::ReduceScatter: case Op::AlltoAll: case Op::Gather: case Op::Scatter:
      return static_cast<double>(n - 1) / n;
    default: return 1.0;
  }
}

struct Result {
  double us = 0;
  double algbw = 0, busbw = 0;
  double hostUs = 0;  // eager GPU runs: CPU time of one call (enqueue and launch)
};

class Bench {
 public:
  Bench(const Options& o, int rank, int n, int localRank) : o_(o), rank_(rank), n_(n), localRank_(localRank) {}

  void init() {
    ncclUniqueId id;
    if (rank_ == 0) CHECK_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
#ifdef MCCL_PERF_CUDA
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
    if (ndev > 0) {
      CHECK_CUDA(cudaSetDevice(localRank_ % ndev));
      CHECK_CUDA(cudaFree(nullptr));  // the context exists before the first reading
      if (o_.pad > 0) CHECK_CUDA(cudaMalloc(&pad_, o_.pad));
      usedBeforeInit_ = deviceUsed();
    }
#endif
#ifndef MCCL_PERF_NCCL
    if (o_.fromMpi)
      CHECK_NCCL(mcclCommInitFromMpi(&comm_, MPI_COMM_WORLD, MCCL_DEVICE_AUTO, nullptr));
    else
#endif
      CHECK_NCCL(ncclCommInitRank(&comm_, n_, id, rank_));
    memAfterInit_ = deviceUsed() - usedBeforeInit_;
#ifdef MCCL_PERF_NCCL
    host_ = false;
#else
    int isHost = 1;
    CHECK_NCCL(mcclCommIsHost(comm_, &isHost));
    host_ = isHost != 0;
#endif
#ifdef MCCL_PERF_CUDA
    if (!host_) CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
#endif
    // Buffers for the largest size (AllGather/AlltoAll move n times the per-rank bytes).
    bytes_ = o_.maxBytes;
    alloc(&send_, bytes_);
    alloc(&recv_, bytes_);
    registerBuffers();
    fill(send_, bytes_, rank_ + 1);
    usedWithBuffers_ = deviceUsed();
  }

  void finish() {
    const double mib = 1024.0 * 1024.0;
    const int64_t afterRun = memAfterInit_ + deviceUsed() - usedWithBuffers_;
#ifndef MCCL_PERF_NCCL
    mcclMemoryInfo_t mi{};
    const bool haveInfo = o_.memory && mcclCommMemoryInfo(comm_, &mi) == ncclSuccess;
#endif
    deregisterBuffers();
    free(send_);
    free(recv_);
    CHECK_NCCL(ncclCommDestroy(comm_));
    if (!o_.memory || rank_ != 0 || host_) return;
    std::printf("# memory (rank 0, GPU, MiB above the level before init): after init %+.1f, after the run %+.1f, "
                "after destroy %+.1f\n",
                memAfterInit_ / mib, afterRun / mib, (deviceUsed() - usedBeforeInit_) / mib);
#ifndef MCCL_PERF_NCCL
    if (haveInfo)
      std::printf("# mccl's account after the run (MiB): FIFOs %.1f, control %.2f, scratch %.1f, tables %.3f, "
                  "host mapped %.2f, peer memory mapped %.1f; kernel stack %zu B per thread\n",
                  mi.fifoBytes / mib, mi.controlBytes / mib, mi.scratchBytes / mib, mi.tableBytes / mib,
                  mi.hostMappedBytes / mib, mi.peerMappedBytes / mib, mi.kernelStackBytes);
#endif
  }

  bool host() const { return host_; }

  // Bytes of the device in use (0 without CUDA).
  static int64_t deviceUsed() {
#ifdef MCCL_PERF_CUDA
    size_t freeB = 0, totalB = 0;
    if (cudaMemGetInfo(&freeB, &totalB) == cudaSuccess) return static_cast<int64_t>(totalB - freeB);
#endif
    return 0;
  }

  // Times op at `bytes` (the total size, as nccl-tests prints it).
  Result run(Op op, size_t bytes, bool useMpi) {
    const size_t es = typeSize(o_.type);
    size_t count = bytes / es;
    int iters = o_.iters, warm = o_.warmup;
    if (iters == 0) iters = bytes <= (1 << 20) ? 50 : bytes <= (64 << 20) ? 20 : 5;
    if (warm == 0) warm = std::max(2, iters / 5);
    auto issue = [&]() { launch(op, count, useMpi); };
    for (int i = 0; i < warm; ++i) issue();
    sync();
    MPI_Barrier(MPI_COMM_WORLD);
    double us = 0, hostUs = 0;
#ifdef MCCL_PERF_CUDA
    if (!host_ && !useMpi) {
      cudaEvent_t a, b;
      CHECK_CUDA(cudaEventCreate(&a));
      CHECK_CUDA(cudaEventCreate(&b));
      if (o_.graphIters > 0) {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CHECK_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < o_.graphIters; ++i) issue();
        CHECK_CUDA(cudaStreamEndCapture(stream_, &g));
        CHECK_CUDA(cudaGraphInstantiate(&ge, g, 0));
        CHECK_CUDA(cudaGraphLaunch(ge, stream_));
        CHECK_CUDA(cudaStreamSynchronize(stream_));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_CUDA(cudaEventRecord(a, stream_));
        for (int i = 0; i < iters; ++i) CHECK_CUDA(cudaGraphLaunch(ge, stream_));
        CHECK_CUDA(cudaEventRecord(b, stream_));
        CHECK_CUDA(cudaEventSynchronize(b));
        float ms;
        CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
        us = ms * 1e3 / (static_cast<double>(iters) * o_.graphIters);
        CHECK_CUDA(cudaGraphExecDestroy(ge));
        CHECK_CUDA(cudaGraphDestroy(g));
      } else {
        CHECK_CUDA(cudaEventRecord(a, stream_));
        auto h0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i) issue();
        hostUs = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count() / iters;
        CHECK_CUDA(cudaEventRecord(b, stream_));
        CHECK_CUDA(cudaEventSynchronize(b));
        float ms;
        CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
        us = ms * 1e3 / iters;
      }
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    } else
#endif
    {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) issue();
      sync();
      us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
    }
    // The slowest rank's time is the collective's time.
    double maxUs = 0;
    MPI_Allreduce(&us, &maxUs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    Result r;
    r.us = maxUs;
    MPI_Allreduce(&hostUs, &r.hostUs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    r.algbw = static_cast<double>(bytes) / (maxUs * 1e3);
    r.busbw = r.algbw * busFactor(op, n_);
    return r;
  }

  // Correctness of one AllReduce at bytes (sum of rank+1 over ranks, exact in float).
  bool checkAllReduce(size_t bytes) {
    if (o_.type != ncclFloat) return true;
    size_t count = bytes / sizeof(float);
    fill(send_, count * sizeof(float), rank_ + 1);
    launch(Op::AllReduce, count, false);
    sync();
    std::vector<float> out(count);
    copyOut(out.data(), recv_, count * sizeof(float));
    float want = n_ * (n_ + 1) / 2.0f;
    for (size_t i = 0; i < count; ++i)
      if (out[i] != want) {
        std::fprintf(stderr, "rank %d: allreduce of %zu bytes: element %zu is %g, expected %g\n", rank_, bytes, i,
                     out[i], want);
        return false;
      }
    return true;
  }

 private:
  void alloc(void** p, size_t bytes) {
#ifdef MCCL_PERF_CUDA
    if (!host_) {
      if (o_.reg > 0) CHECK_NCCL(ncclMemAlloc(p, bytes));
      else CHECK_CUDA(cudaMalloc(p, bytes));
      return;
    }
#endif
    if (posix_memalign(p, 4096, bytes) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    std::memset(*p, 0, bytes);
  }
  void free(void* p) {
#ifdef MCCL_PERF_CUDA
    if (!host_) {
      if (o_.reg > 0) CHECK_NCCL(ncclMemFree(p));
      else cudaFree(p);
      return;
    }
#endif
    std::free(p);
  }
  // -R 1 and 2: both buffers registered with the communicator for the whole run (GPU only).
  void registerBuffers() {
    if (host_ || o_.reg == 0) return;
    for (int i = 0; i < 2; ++i) {
      void* p = i == 0 ? send_ : recv_;
      if (o_.reg == 1) CHECK_NCCL(ncclCommRegister(comm_, p, bytes_, &regHandle_[i]));
      else CHECK_NCCL(ncclCommWindowRegister(comm_, p, bytes_, &win_[i], NCCL_WIN_COLL_SYMMETRIC));
    }
  }
  void deregisterBuffers() {
    if (host_ || o_.reg == 0) return;
    for (int i = 0; i < 2; ++i) {
      if (o_.reg == 1) CHECK_NCCL(ncclCommDeregister(comm_, regHandle_[i]));
      else CHECK_NCCL(ncclCommWindowDeregister(comm_, win_[i]));
    }
  }
  void fill(void* p, size_t bytes, float v) {
    std::vector<float> h(bytes / sizeof(float), v);
#ifdef MCCL_PERF_CUDA
    if (!host_) {
      CHECK_CUDA(cudaMemcpy(p, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
      return;
    }
#endif
    std::memcpy(p, h.data(), h.size() * sizeof(float));
  }
  void copyOut(void* dst, const void* src, size_t bytes) {
#ifdef MCCL_PERF_CUDA
    if (!host_) {
      CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
      return;
    }
#endif
    std::memcpy(dst, src, bytes);
  }
  void sync() {
#ifdef MCCL_PERF_CUDA
    if (!host_) CHECK_CUDA(cudaStreamSynchronize(stream_));
#endif
  }

  void launch(Op op, size_t count, bool useMpi) {
    ncclDataType_t t = o_.type;
    char* s = static_cast<char*>(send_);
    char* r = static_cast<char*>(recv_);
    size_t per = count / n_;  // AllGather/ReduceScatter/AlltoAll/Gather/Scatter: per-rank share
    if (useMpi) {
      MPI_Datatype mt = mpiType(t);
      int c = static_cast<int>(count), pc = static_cast<int>(per);
      switch (op) {
        case Op::AllReduce: MPI_Allreduce(s, r, c, mt, MPI_SUM, MPI_COMM_WORLD); break;
        case Op::Broadcast: MPI_Bcast(s, c, mt, 0, MPI_COMM_WORLD); break;
        case Op::Reduce: MPI_Reduce(s, r, c, mt, MPI_SUM, 0, MPI_COMM_WORLD); break;
        case Op::AllGather: MPI_Allgather(s, pc, mt, r, pc, mt, MPI_COMM_WORLD); break;
        case Op::ReduceScatter: MPI_Reduce_scatter_block(s, r, pc, mt, MPI_SUM, MPI_COMM_WORLD); break;
        case Op::SendRecv: {
          int next = (rank_ + 1) % n_, prev = (rank_ + n_ - 1) % n_;
          MPI_Sendrecv(s, c, mt, next, 0, r, c, mt, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          break;
        }
        case Op::AlltoAll: MPI_Alltoall(s, pc, mt, r, pc, mt, MPI_COMM_WORLD); break;
        case Op::Gather: MPI_Gather(s, pc, mt, r, pc, mt, 0, MPI_COMM_WORLD); break;
        case Op::Scatter: MPI_Scatter(s, pc, mt, r, pc, mt, 0, MPI_COMM_WORLD); break;
        case Op::Exchange:
          if ((rank_ ^ 1) < n_)
            MPI_Sendrecv(s, c, mt, rank_ ^ 1, 0, r, c, mt, rank_ ^ 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          break;
      }
      return;
    }
    switch (op) {
      case Op::AllReduce: CHECK_NCCL(ncclAllReduce(s, r, count, t, ncclSum, comm_, stream_)); break;
      case Op::Broadcast: CHECK_NCCL(ncclBroadcast(s, r, count, t, 0, comm_, stream_)); break;
      case Op::Reduce: CHECK_NCCL(ncclReduce(s, r, count, t, ncclSum, 0, comm_, stream_)); break;
      case Op::AllGather: CHECK_NCCL(ncclAllGather(s, r, per, t, comm_, stream_)); break;
      case Op::ReduceScatter: CHECK_NCCL(ncclReduceScatter(s, r, per, t, ncclSum, comm_, stream_)); break;
      case Op::SendRecv: {
        int next = (rank_ + 1) % n_, prev = (rank_ + n_ - 1) % n_;
        CHECK_NCCL(ncclGroupStart());
        CHECK_NCCL(ncclSend(s, count, t, next, comm_, stream_));
        CHECK_NCCL(ncclRecv(r, count, t, prev, comm_, stream_));
        CHECK_NCCL(ncclGroupEnd());
        break;
      }
      case Op::AlltoAll: CHECK_NCCL(ncclAlltoAll(s, r, per, t, comm_, stream_)); break;
      case Op::Gather: CHECK_NCCL(ncclGather(s, r, per, t, 0, comm_, stream_)); break;
      case Op::Exchange: {
        // Pairs of ranks (0-1, 2-3, ...) swap their buffers, both ways at once (a halo
        // exchange); a last odd rank sits out.
        const int peer = rank_ ^ 1;
        if (peer >= n_) break;
        CHECK_NCCL(ncclGroupStart());
        CHECK_NCCL(ncclSend(s, count, t, peer, comm_, stream_));
        CHECK_NCCL(ncclRecv(r, count, t, peer, comm_, stream_));
        CHECK_NCCL(ncclGroupEnd());
        break;
      }
      case Op::Scatter: CHECK_NCCL(ncclScatter(s, r, per, t, 0, comm_, stream_)); break;
    }
  }

  Options o_;
  int rank_, n_, localRank_;
  ncclComm_t comm_ = nullptr;
  int64_t usedBeforeInit_ = 0, memAfterInit_ = 0, usedWithBuffers_ = 0;
  bool host_ = true;
  cudaStream_t stream_ = nullptr;
  void* pad_ = nullptr;  // --pad: kept to the end of the process
  void* send_ = nullptr;
  void* recv_ = nullptr;
  size_t bytes_ = 0;
  void* regHandle_[2] = {nullptr, nullptr};       // -R 1
  ncclWindow_t win_[2] = {nullptr, nullptr};      // -R 2
};

int localRankOf(int rank, int n) {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::vector<char> all(static_cast<size_t>(n) * 256);
  MPI_Allgather(host, 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
  int local = 0;
  for (int r = 0; r < rank; ++r) local += std::strcmp(&all[static_cast<size_t>(r) * 256], host) == 0;
  return local;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "-b") o.minBytes = parseSize(next());
    else if (a == "-e") o.maxBytes = parseSize(next());
    else if (a == "-f") o.factor = std::atof(next());
    else if (a == "-n") o.iters = std::atoi(next());
    else if (a == "-w") o.warmup = std::atoi(next());
    else if (a == "-G") o.graphIters = std::atoi(next());
    else if (a == "-c") o.check = std::atoi(next()) != 0;
    else if (a == "--csv") o.csv = next();
    else if (a == "--no-mpi") o.mpiCompare = false;
    else if (a == "--from-mpi") o.fromMpi = true;
    else if (a == "-R") o.reg = std::atoi(next());
    else if (a == "--pad") o.pad = parseSize(next());
    else if (a == "-t") o.trials = std::max(1, std::atoi(next()));
    else if (a == "-d") {
      std::string d = next();
      o.type = d == "double" ? ncclDouble : d == "int32" ? ncclInt32 : d == "half" ? ncclHalf : ncclFloat;
    } else if (a == "-o") {
      o.ops.clear();
      std::string list = std::string(next()) + ",";
      for (int k = 0; k < static_cast<int>(sizeof kOpNames / sizeof kOpNames[0]); ++k)
        if (list.find(std::string(kOpNames[k]) + ",") == 0 || list.find("," + std::string(kOpNames[k]) + ",") != std::string::npos ||
            list == "all,")
          o.ops.push_back(static_cast<Op>(k));
    } else if (a == "--memory") {
      o.memory = true;
    } else if (a == "--knobs") {
#ifndef MCCL_PERF_NCCL
      if (rank == 0) std::fputs(mcclKnobHelp(), stdout);
#endif
      MPI_Finalize();
      return 0;
    } else {
      if (rank == 0)
        std::fprintf(stderr,
                     "usage: mccl-perf [-b min] [-e max] [-f factor] [-n iters] [-w warmup] [-o ops|all]\n"
                     "                 [-d float|double|int32|half] [-G graph-iters] [-c 0|1] [--csv file]\n"
                     "                 [-t trials] [--no-mpi] [--from-mpi] [--knobs] [--memory] [-R 0|1|2]\n"
                     "                 [--pad bytes]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (o.reg < 0 || o.reg > 2) {
    if (rank == 0) std::fprintf(stderr, "mccl-perf: -R %d: must be 0 (plain), 1 (registered) or 2 (windows)\n", o.reg);
    MPI_Finalize();
    return 2;
  }
  Bench b(o, rank, n, localRankOf(rank, n));
  b.init();
#ifdef MCCL_PERF_NCCL
  const char* lib = "nccl";
#else
  const char* lib = "mccl";
#endif
  bool mpi = o.mpiCompare && b.host();
  FILE* csv = nullptr;
  if (rank == 0 && !o.csv.empty()) {
    csv = std::fopen(o.csv.c_str(), "w");
    if (csv) std::fprintf(csv, "lib,op,bytes,time_us,algbw,busbw,host_us%s\n", mpi ? ",mpi_time_us,mpi_busbw,ratio" : "");
  }
  if (rank == 0) {
    int v = 0;
    ncclGetVersion(&v);
    static const char* const kReg[] = {"cudaMalloc", "ncclMemAlloc + ncclCommRegister",
                                       "ncclMemAlloc + symmetric windows"};
    std::printf("# %s-perf: %d ranks, %s memory (%s), version code %d, type size %zu\n", lib, n,
                b.host() ? "host" : "GPU", b.host() ? "not registered" : kReg[o.reg], v, typeSize(o.type));
  }
  bool allOk = true;
  for (Op op : o.ops) {
    if (rank == 0) {
      std::printf("## %s\n#%13s %10s %11s %11s %8s", kOpNames[static_cast<int>(op)], "size(B)", "time(us)", "algbw(GB/s)",
                  "busbw(GB/s)", "host(us)");
      if (mpi) std::printf(" %12s %11s %7s", "mpi time(us)", "mpi busbw", "ratio");
      std::printf("\n");
    }
    for (double sz = static_cast<double>(o.minBytes); sz <= static_cast<double>(o.maxBytes) * 1.0001; sz *= o.factor) {
      size_t bytes = static_cast<size_t>(sz) / typeSize(o.type) * typeSize(o.type);
      bool perRank = op == Op::AllGather || op == Op::ReduceScatter || op == Op::AlltoAll || op == Op::Gather ||
                     op == Op::Scatter;
      if (perRank) bytes = bytes / (n * typeSize(o.type)) * n * typeSize(o.type);
      if (bytes == 0) continue;
      if (rank == 0) std::fprintf(stderr, "\r[%s %zu B]            ", kOpNames[static_cast<int>(op)], bytes);
      // Interleave the libraries so a slow phase of the machine hits both; keep medians.
      std::vector<Result> rs, ms;
      for (int t = 0; t < o.trials; ++t) {
        rs.push_back(b.run(op, bytes, false));
        if (mpi) ms.push_back(b.run(op, bytes, true));
      }
      auto median = [](std::vector<Result> v) {
        std::sort(v.begin(), v.end(), [](const Result& x, const Result& y) { return x.us < y.us; });
        return v.empty() ? Result{} : v[v.size() / 2];
      };
      Result r = median(rs);
      Result m = median(ms);
      if (rank == 0) {
        // Times to the nanosecond: a host communicator's small call takes 0.06-0.2 us.
        std::printf("%14zu %10.3f %11.2f %11.2f %8.3f", bytes, r.us, r.algbw, r.busbw, r.hostUs);
        if (mpi) std::printf(" %12.3f %11.2f %7.2f", m.us, m.busbw, m.us / r.us);
        std::printf("\n");
        std::fflush(stdout);
        if (csv) {
          std::fprintf(csv, "%s,%s,%zu,%.3f,%.3f,%.3f,%.3f", lib, kOpNames[static_cast<int>(op)], bytes, r.us, r.algbw,
                       r.busbw, r.hostUs);
          if (mpi) std::fprintf(csv, ",%.3f,%.3f,%.3f", m.us, m.busbw, m.us / r.us);
          std::fprintf(csv, "\n");
        }
      }
    }
    if (rank == 0) std::fprintf(stderr, "\r                                  \r");
  }
  if (o.check && std::find(o.ops.begin(), o.ops.end(), Op::AllReduce) != o.ops.end()) {
    bool ok = b.checkAllReduce(std::min<size_t>(o.maxBytes, 64u << 20) / 4 * 4);
    int all = ok, both = 0;
    MPI_Allreduce(&all, &both, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    allOk = both != 0;
    if (rank == 0) std::printf("# check: AllReduce result %s\n", allOk ? "correct" : "WRONG");
  }
  if (csv) std::fclose(csv);
  b.finish();
  MPI_Finalize();
  return allOk ? 0 : 1;
}
