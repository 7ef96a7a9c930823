// mccl-threads-bench: the fixed costs of small GPU collectives with every rank a thread of
// one process, rank r on GPU r % (visible GPUs). With MCCL_SHARED_GPU (set here) several
// ranks share one GPU, so a one-GPU machine measures the host path (API call to launch)
// and the kernels' own overheads (setup, step barriers, credits), with the peer's memory
// in the same GPU instead of across NVLink. Not a comparison with NCCL (which refuses two
// ranks on one GPU); a regression measure of mccl's fixed costs between two versions.
//
//   mccl-threads-bench [-r ranks] [-b 8] [-e 1M] [-f 8] [-n iters] [-G graph-calls] [-w]
//                      [-o allreduce,allgather,broadcast,reducescatter,sendrecv,alltoall,gather,scatter]
//                      [-d float|bf16|half|double|int32|int8]
//
// AllReduce and ReduceScatter take an operator suffix (allreduce_max, reducescatter_prod;
// _min, _avg; sum without one): the lean LL kernels serve sums only. allreduce_inplace: a
// sum in the output buffer.
// -w: the buffers lie in one window per rank registered with NCCL_WIN_COLL_SYMMETRIC
// (ncclMemAlloc), at the same offsets on every rank: collectives take the direct path.
//
// Per operation and size, the slowest rank's time per call (µs, median of 5 trials):
//   host   the CPU time of one call (the enqueue loop of `iters` calls, divided)
//   eager  back-to-back calls on one stream, to the stream's completion
//   graph  `graph-calls` calls captured in a CUDA graph, replayed
#include <cuda_runtime.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../tests/common/thread_barrier.h"
#include "bench_util.h"
#include "nccl.h"

namespace {

using Barrier = mccl_test::ThreadBarrier;

double nowUs() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

using mccl_bench::parseSize;

struct Opts {
  int ranks = 2;
  size_t minBytes = 8, maxBytes = 1 << 20;
  int factor = 8;
  int iters = 200;
  int graphCalls = 20;
  bool windows = false;
  ncclDataType_t type = ncclFloat;  // -d
  std::vector<std::string> ops = {"allreduce", "allgather", "broadcast", "reducescatter", "sendrecv"};
};

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The operator of a reduction named op[_max|_min|_prod|_avg] (sum without a suffix).
ncclRedOp_t redOf(const std::string& op) {
  const size_t u = op.find('_');
  const std::string r = u == std::string::npos ? "" : op.substr(u + 1);
  return r == "max" ? ncclMax : r == "min" ? ncclMin : r == "prod" ? ncclProd : r == "avg" ? ncclAvg : ncclSum;
}

// -d's datatypes and their sizes.
bool parseType(const std::string& name, ncclDataType_t* t, size_t* size) {
  static const struct {
    const char* name;
    ncclDataType_t type;
    size_t size;
  } kTypes[] = {{"float", ncclFloat, 4}, {"bf16", ncclBfloat16, 2}, {"half", ncclHalf, 2},
                {"double", ncclDouble, 8}, {"int32", ncclInt32, 4}, {"int8", ncclInt8, 1}};
  for (const auto& k : kTypes)
    if (name == k.name) {
      *t = k.type;
      *size = k.size;
      return true;
    }
  return false;
}

// One call of `op` with `count` elements of `t` per rank. AllReduce and ReduceScatter take
// an operator suffix: allreduce_max, reducescatter_prod, ...
ncclResult_t call(const std::string& op, ncclComm_t comm, int rank, int n, void* in, void* out, size_t count,
                  ncclDataType_t t, cudaStream_t s) {
  if (op == "allreduce_inplace") return ncclAllReduce(out, out, count, t, ncclSum, comm, s);
  if (startsWith(op, "allreduce")) return ncclAllReduce(in, out, count, t, redOf(op), comm, s);
  if (op == "allgather") return ncclAllGather(in, out, count, t, comm, s);
  if (op == "broadcast") return ncclBroadcast(in, out, count, t, 0, comm, s);
  if (startsWith(op, "reducescatter")) return ncclReduceScatter(in, out, count, t, redOf(op), comm, s);
  // alltoall: `count` elements a rank in all, count / n to each peer.
  if (op == "alltoall") return ncclAlltoAll(in, out, std::max<size_t>(1, count / n), t, comm, s);
  // gather, scatter: `count` elements at the root (0) in all, count / n from or to each rank.
  if (op == "gather") return ncclGather(in, out, std::max<size_t>(1, count / n), t, 0, comm, s);
  if (op == "scatter") return ncclScatter(in, out, std::max<size_t>(1, count / n), t, 0, comm, s);
  // sendrecv: a ring shift (each rank sends to the next, receives from the previous).
  ncclGroupStart();
  ncclSend(in, count, t, (rank + 1) % n, comm, s);
  ncclRecv(out, count, t, (rank + n - 1) % n, comm, s);
  return ncclGroupEnd();
}

}  // namespace

int main(int argc, char** argv) {
  Opts o;
  size_t esize = sizeof(float);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-w") {
      o.windows = true;
      continue;
    }
    CHECK(i + 1 < argc, "option %s needs a value", a.c_str());
    const char* v = argv[++i];
    if (a == "-r") o.ranks = std::atoi(v);
    else if (a == "-b") o.minBytes = parseSize(v);
    else if (a == "-e") o.maxBytes = parseSize(v);
    else if (a == "-f") o.factor = std::max(2, std::atoi(v));
    else if (a == "-n") o.iters = std::max(1, std::atoi(v));
    else if (a == "-G") o.graphCalls = std::max(0, std::atoi(v));
    else if (a == "-d") CHECK(parseType(v, &o.type, &esize), "unknown datatype %s", v);
    else if (a == "-o") {
      o.ops.clear();
      const std::string list = v;
      for (size_t p = 0; p <= list.size();) {
        size_t q = list.find(',', p);
        if (q == std::string::npos) q = list.size();
        o.ops.push_back(list.substr(p, q - p));
        p = q + 1;
      }
    } else {
      CHECK(false, "unknown option %s", a.c_str());
    }
  }
  setenv("MCCL_SHARED_GPU", "1", 1);
  int ngpu = 0;
  CHECK(cudaGetDeviceCount(&ngpu) == cudaSuccess && ngpu > 0, "no GPU");
  const int n = o.ranks;
  std::vector<int> devs(n);
  for (int r = 0; r < n; ++r) devs[r] = r % ngpu;
  std::vector<ncclComm_t> comms(n);
  CHECK(ncclCommInitAll(comms.data(), n, devs.data()) == ncclSuccess, "ncclCommInitAll: %s", ncclGetLastError(nullptr));
  std::printf("# mccl-threads-bench: %d ranks on %d GPU(s), %zu-byte elements, %d calls eager, %d calls a graph%s; "
              "us per call, slowest rank, median of 5\n",
              n, ngpu, esize, o.iters, o.graphCalls, o.windows ? ", buffers in symmetric windows" : "");
  std::printf("%-14s %10s %8s %8s %8s\n", "op", "bytes", "host", "eager", "graph");
  // One stream per rank for the whole run. CUDA maps each new stream onto one of
  // CUDA_DEVICE_MAX_CONNECTIONS hardware queues in turn; a stream made per size eventually
  // shares a queue with a peer rank's stream on the same GPU, and then a rank's kernel sits
  // behind the peer's kernel that spins waiting for it: the run stopped at a change of size
  // or operation (one shared H100, 2026-11-24; see bench/results/gpu-1xH100-2026-11-25).
  std::vector<cudaStream_t> streams(n);
  for (int r = 0; r < n; ++r) {
    cudaSetDevice(devs[r]);
    CHECK(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking) == cudaSuccess, "stream");
  }
  Barrier bar(n);
  const int kTrials = 5;
  // [trial][rank]: host us, eager us, graph us
  std::vector<double> host(static_cast<size_t>(n) * kTrials), eager(host.size()), graph(host.size());
  for (const std::string& op : o.ops) {
    for (size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= o.factor) {
      const size_t count = std::max<size_t>(1, bytes / esize);
      std::vector<std::thread> threads;
      for (int r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
          cudaSetDevice(devs[r]);
          const size_t inCount = startsWith(op, "reducescatter") ? count * n : count;
          const size_t outCount = op == "allgather" ? count * n : count;
          void *in = nullptr, *out = nullptr;
          cudaStream_t s = streams[r];
          ncclWindow_t win = nullptr;
          if (o.windows) {
            const size_t inBytes = (inCount * esize + 255) / 256 * 256;
            const size_t bytesAll = inBytes + outCount * esize;
            void* buf = nullptr;
            CHECK(ncclMemAlloc(&buf, bytesAll) == ncclSuccess, "ncclMemAlloc: %s", ncclGetLastError(nullptr));
            CHECK(ncclCommWindowRegister(comms[r], buf, bytesAll, &win, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess,
                  "ncclCommWindowRegister: %s", ncclGetLastError(comms[r]));
            in = buf;
            out = static_cast<char*>(buf) + inBytes;
          } else {
            CHECK(cudaMalloc(&in, inCount * esize) == cudaSuccess, "cudaMalloc");
            CHECK(cudaMalloc(&out, outCount * esize) == cudaSuccess, "cudaMalloc");
          }
          cudaMemsetAsync(in, 0, inCount * esize, s);
          cudaStreamSynchronize(s);
          // Every rank's buffers exist before any rank's first call, and no rank frees its
          // own while a peer's last kernel may still run: cudaMalloc and cudaFree can wait
          // for the whole device, where a peer's kernel spins for this rank's next launch
          // (a hang until MCCL_TIMEOUT, seen at size changes on one shared H100).
          bar.wait();
          for (int k = 0; k < 20; ++k)
            CHECK(call(op, comms[r], r, n, in, out, count, o.type, s) == ncclSuccess, "%s: %s", op.c_str(),
                  ncclGetLastError(comms[r]));
          cudaStreamSynchronize(s);
          for (int t = 0; t < kTrials; ++t) {
            bar.wait();
            const double t0 = nowUs();
            ncclResult_t rc = ncclSuccess;
            for (int k = 0; k < o.iters; ++k) rc = call(op, comms[r], r, n, in, out, count, o.type, s);
            const double t1 = nowUs();
            cudaStreamSynchronize(s);
            const double t2 = nowUs();
            ncclResult_t async = ncclSuccess;
            ncclCommGetAsyncError(comms[r], &async);
            CHECK(rc == ncclSuccess && async == ncclSuccess, "%s %zu bytes, rank %d: %s", op.c_str(), bytes, r,
                  ncclGetLastError(comms[r]));
            host[static_cast<size_t>(t) * n + r] = (t1 - t0) / o.iters;
            eager[static_cast<size_t>(t) * n + r] = (t2 - t0) / o.iters;
          }
          if (o.graphCalls > 0) {
            cudaGraph_t g;
            cudaGraphExec_t ge;
            CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "capture");
            for (int k = 0; k < o.graphCalls; ++k) call(op, comms[r], r, n, in, out, count, o.type, s);
            CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess, "end capture");
            CHECK(cudaGraphInstantiate(&ge, g, 0) == cudaSuccess, "instantiate");
            // Instantiating a graph with memcpy nodes (the copy-engine path) can wait for
            // the device, where a peer's first replay may already spin for this rank.
            bar.wait();
            cudaGraphLaunch(ge, s);
            cudaStreamSynchronize(s);
            const int reps = std::max(1, o.iters / o.graphCalls);
            for (int t = 0; t < kTrials; ++t) {
              bar.wait();
              const double t0 = nowUs();
              for (int k = 0; k < reps; ++k) cudaGraphLaunch(ge, s);
              cudaStreamSynchronize(s);
              ncclResult_t async = ncclSuccess;
              ncclCommGetAsyncError(comms[r], &async);
              CHECK(async == ncclSuccess, "%s %zu bytes, rank %d, graph: %s", op.c_str(), bytes, r,
                    ncclGetLastError(comms[r]));
              graph[static_cast<size_t>(t) * n + r] = (nowUs() - t0) / (reps * o.graphCalls);
            }
            cudaGraphExecDestroy(ge);
            cudaGraphDestroy(g);
          }
          bar.wait();
          if (win) {
            CHECK(ncclCommWindowDeregister(comms[r], win) == ncclSuccess, "ncclCommWindowDeregister: %s",
                  ncclGetLastError(comms[r]));
            ncclMemFree(in);
          } else {
            cudaFree(in);
            cudaFree(out);
          }
        });
      for (std::thread& t : threads) t.join();
      auto slowestMedian = [&](const std::vector<double>& v) {
        std::vector<double> m(kTrials);
        for (int t = 0; t < kTrials; ++t)
          m[t] = *std::max_element(v.begin() + static_cast<long>(t) * n, v.begin() + static_cast<long>(t + 1) * n);
        std::sort(m.begin(), m.end());
        return m[kTrials / 2];
      };
      std::printf("%-14s %10zu %8.2f %8.2f %8.2f\n", op.c_str(), count * esize, slowestMedian(host),
                  slowestMedian(eager), o.graphCalls > 0 ? slowestMedian(graph) : 0.0);
      std::fflush(stdout);
    }
  }
  for (ncclComm_t c : comms) ncclCommDestroy(c);
  for (int r = 0; r < n; ++r) {
    cudaSetDevice(devs[r]);
    cudaStreamDestroy(streams[r]);
  }
  return 0;
}
