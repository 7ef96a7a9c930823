// libmccl_mpi's blocking calls of one mccl collective: launched with a completion word, or,
// made again with the same arguments, replayed from a CUDA graph (mpi_replay.h).
#include "bootstrap_mpi/mpi_replay.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <map>
#include <vector>

#include "bootstrap_mpi/mpi_map.h"
#include "core/comm.h"
#include "core/completion.h"
#include "core/enqueue.h"
#include "core/error.h"
#include "core/knobs.h"
#include "mccl_mpi.h"

#ifdef MCCL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

using namespace mccl;

namespace {

std::atomic<uint64_t> gByWord{0}, gByStream{0};    // mcclMpiWaitCounters
std::atomic<uint64_t> gCaptured{0}, gReplayed{0};  // mcclMpiReplayCounters

// MCCL_PROFILE (routeEntered): the stamps of the calling thread's call (entry 0: not
// profiled), and the sums of the launched and the replayed calls, printed at exit.
struct RouteStamps {
  uint64_t entry = 0, start = 0, launched = 0;
};
thread_local RouteStamps tStamps;

class RouteProfile {
 public:
  void add(bool replayed, RouteStamps& t, uint64_t waited) {  // t's call taken
    const RouteStamps c = t;
    t.entry = 0;
    Sums& s = sums_[replayed ? 1 : 0];
    if (s.seen.fetch_add(1, std::memory_order_relaxed) < kProfileWarmup) return;  // first launches, setup
    s.n.fetch_add(1, std::memory_order_relaxed);
    s.pre.fetch_add(c.start - c.entry, std::memory_order_relaxed);
    s.launch.fetch_add(c.launched - c.start, std::memory_order_relaxed);
    s.wait.fetch_add(waited - c.launched, std::memory_order_relaxed);
  }
  ~RouteProfile() {
    for (int i = 0; i < 2; ++i) {
      const Sums& s = sums_[i];
      const double n = static_cast<double>(s.n.load());
      if (n == 0) continue;
      std::fprintf(stderr,
                   "mccl profile: libmccl_mpi, %.0f %s calls: host us per call: route entry to runAndWait %.2f, "
                   "%s %.2f, wait %.2f\n",
                   n, i ? "replayed" : "launched", s.pre.load() / 1e3 / n, i ? "graph launch" : "launch (mccl call)",
                   s.launch.load() / 1e3 / n, s.wait.load() / 1e3 / n);
    }
  }

 private:
  static constexpr uint64_t kProfileWarmup = 16;
  struct Sums {
    std::atomic<uint64_t> seen{0}, n{0}, pre{0}, launch{0}, wait{0};
  };
  Sums sums_[2];
};
RouteProfile gRouteProfile;

#ifdef MCCL_HAVE_CUDA
// Small blocking calls made again with the same arguments replay a CUDA graph of their one
// kernel (MCCL_MPI_GRAPH_BYTES, 64 KiB by default): cudaGraphLaunch takes 1.2-2.0 us of the
// host's time where a kernel launch takes 3.3-4.2 and mccl's planning more, and a one-kernel
// graph's kernel raises a host word 4.9-5.3 us after the call where a launched one does 7.0-7.9
// (one H100, two processes at once under MPS, bench/results/gpu-1x-2026-12-06f). A call runs
// as it is the first time (a call made once pays no capture); the second time it is captured (a
// thread-local capture of the same mccl call on a stream of the thread's, its launch taking the
// completion word) and the graph runs it on the call's stream, kept when it is that one kernel;
// from then on the graph replays, the host clearing the word before each. The graph holds the
// call's buffers and the communicator's memory: a call is the same only with the same pointers,
// count, datatype, operator, root, MPI and mccl communicator, device and stream, and every graph
// goes when any communicator is made or destroyed (the registry's generation, as mpi_route.cc's
// streamFor). The kernel is the one the eager call launches (its LL state lives on the device,
// so eager calls and replays mix on a rank and across ranks). Per thread, no lock; the least
// recently used of kMax goes; a thread's graphs are left to the process's end when it exits.
class Replays {
 public:
  struct Entry {
    OneCall key;
    MPI_Comm mpiComm;
    ncclComm_t comm;
    int dev;
    cudaStream_t stream;
    cudaGraphExec_t exec;    // null: seen once, or (never) not one kernel that raises the word
    bool never;
    volatile uint32_t* word;  // the completion word the graph's kernel raises to value
    uint32_t value;
    uint64_t used;
  };

  static Replays& mine() {
    static thread_local Replays r;
    return r;
  }

  Entry* find(const OneCall& k, MPI_Comm mpiComm, ncclComm_t comm, int dev, cudaStream_t stream) {
    const uint64_t gen = commRegistryGeneration();
    if (gen != gen_) {
      for (Entry& e : v_)
        if (e.exec) cudaGraphExecDestroy(e.exec);
      v_.clear();
      gen_ = gen;
    }
    for (Entry& e : v_)
      if (e.key == k && e.mpiComm == mpiComm && e.comm == comm && e.dev == dev && e.stream == stream) {
        e.used = ++tick_;
        return &e;
      }
    return nullptr;
  }

  void add(const OneCall& k, MPI_Comm mpiComm, ncclComm_t comm, int dev, cudaStream_t stream) {
    if (v_.size() >= kMax) {
      auto lru = std::min_element(v_.begin(), v_.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
      if (lru->exec) cudaGraphExecDestroy(lru->exec);
      *lru = v_.back();
      v_.pop_back();
    }
    v_.push_back(Entry{k, mpiComm, comm, dev, stream, nullptr, false, nullptr, 0, ++tick_});
  }

  // The stream captures are made on: one of its own, non-blocking, since while a blocking
  // stream captures, the legacy stream is unusable (any thread's cudaMemcpy on it fails).
  // Graphs replay on the call's stream. Null where none can be made.
  static cudaStream_t captureStream(int dev) {
    static thread_local std::map<int, cudaStream_t> streams;
    auto it = streams.find(dev);
    if (it != streams.end()) return it->second;
    cudaStream_t cs = nullptr;
    if (cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    streams[dev] = cs;
    return cs;
  }

  // Not replayed again (its wait did not end on the word: a stopped launch).
  static void forget(Entry* e) {
    if (e->exec) cudaGraphExecDestroy(e->exec);
    e->exec = nullptr;
    e->never = true;
  }

 private:
  static constexpr size_t kMax = 32;
  std::vector<Entry> v_;
  uint64_t gen_ = 0, tick_ = 0;
};

// Replays e's graph on s and waits for its word.
ncclResult_t replay(Replays::Entry* e, cudaStream_t s, MPI_Comm comm, const char* call) {
  RouteStamps& t = tStamps;
  if (t.entry) t.start = steadyNs();
  *e->word = 0;
  const cudaError_t ce = cudaGraphLaunch(e->exec, s);
  if (t.entry) t.launched = steadyNs();
  if (ce != cudaSuccess) {
    cudaGetLastError();
    Replays::forget(e);
    return MCCL_ERR(ncclUnhandledCudaError, e->comm, "%s: cudaGraphLaunch: %s", call, cudaGetErrorString(ce));
  }
  CompletionWord cw;
  cw.taken = true;
  cw.word = e->word;
  cw.value = e->value;
  const ncclResult_t r = waitStream(s, comm, &cw);
  if (t.entry) gRouteProfile.add(true, t, steadyNs());
  const bool raised = *e->word == e->value;
  (raised ? gByWord : gByStream).fetch_add(1);
  gReplayed.fetch_add(1);
  if (!raised) Replays::forget(e);
  return r;
}

// Runs a capture begun on cs: the call, the graph instantiated, then run on s.
ncclResult_t capturedRun(Replays::Entry* e, const Run& run, cudaStream_t cs, cudaStream_t s, MPI_Comm comm,
                         const char* call) {
  CompletionWord cw;
  cw.replay = true;
  ncclResult_t r;
  {
    CompletionScope armed(&cw);
    r = run(cs);
  }
  cudaGraph_t g = nullptr;
  cudaError_t ce = cudaStreamEndCapture(cs, &g);
  cudaGraphExec_t exec = nullptr;
  if (r == ncclSuccess && ce == cudaSuccess) ce = cudaGraphInstantiate(&exec, g, 0);
  size_t nodes = 0;
  cudaGraphNode_t node = nullptr;
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  const bool one = ce == cudaSuccess && r == ncclSuccess && cw.taken &&
                   cudaGraphGetNodes(g, nullptr, &nodes) == cudaSuccess && nodes == 1 &&
                   cudaGraphGetNodes(g, &node, &nodes) == cudaSuccess &&
                   cudaGraphNodeGetType(node, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel;
  if (g) cudaGraphDestroy(g);
  if (r != ncclSuccess) return r;
  if (ce != cudaSuccess) {
    cudaGetLastError();
    return MCCL_ERR(ncclUnhandledCudaError, e->comm, "%s: capturing its CUDA graph: %s", call, cudaGetErrorString(ce));
  }
  if (one) {
    e->exec = exec;
    e->never = false;
    e->word = cw.word;
    e->value = cw.value;
    gCaptured.fetch_add(1);
    return replay(e, s, comm, call);
  }
  ce = cudaGraphLaunch(exec, s);  // this once, waited for on the stream
  cudaGraphExecDestroy(exec);     // (its launch completes)
  if (ce != cudaSuccess) {
    cudaGetLastError();
    return MCCL_ERR(ncclUnhandledCudaError, e->comm, "%s: cudaGraphLaunch: %s", call, cudaGetErrorString(ce));
  }
  gByStream.fetch_add(1);
  return waitStream(s, comm, nullptr);
}

// The second sight of a call: captured (its launch taking a completion word) on the capture
// stream, then run by the graph on s, kept in e when it is the one kernel that raised the
// word. False (nothing done) where no capture can begin: the caller runs the call as it is.
// A capture that fails after it began fails the call: its collective was planned, and
// running it again could pair it twice.
bool captureAndRun(Replays::Entry* e, const Run& run, cudaStream_t s, MPI_Comm comm, const char* call,
                   ncclResult_t* result) {
  e->never = true;  // unless kept below
  const cudaStream_t cs = Replays::captureStream(e->dev);
  cudaError_t ce = cs ? cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal) : cudaErrorInvalidResourceHandle;
  if (ce != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  *result = capturedRun(e, run, cs, s, comm, call);
  return true;
}
#endif

}  // namespace

NCCL_API void mcclMpiWaitCounters(uint64_t* byWord, uint64_t* byStream) {
  if (byWord) *byWord = gByWord.load();
  if (byStream) *byStream = gByStream.load();
}

NCCL_API void mcclMpiReplayCounters(uint64_t* captured, uint64_t* replayed) {
  if (captured) *captured = gCaptured.load();
  if (replayed) *replayed = gReplayed.load();
}

void mccl::routeEntered() { tStamps.entry = knobBool(Knob::Profile) ? steadyNs() : 0; }

#ifdef MCCL_HAVE_CUDA
ncclResult_t mccl::runAndWait(const char* call, size_t bytes, const OneCall* one, bool blocking, const Run& run,
                              MPI_Comm comm, ncclComm_t c, int dev, cudaStream_t s, bool* graph) {
  *graph = false;
  const bool graphs = one != nullptr && blocking && bytes <= static_cast<size_t>(knobInt(Knob::MpiGraphBytes));
  Replays::Entry* e = graphs ? Replays::mine().find(*one, comm, c, dev, s) : nullptr;
  ncclResult_t r;
  if (e != nullptr && e->exec != nullptr) {
    *graph = true;
    return replay(e, s, comm, call);
  }
  if (e != nullptr && !e->never) {
    const uint64_t entry = tStamps.entry;
    tStamps.entry = 0;  // a captured call is not counted
    if (captureAndRun(e, run, s, comm, call, &r)) {
      *graph = true;
      return r;
    }
    tStamps.entry = entry;
  }
  RouteStamps& t = tStamps;
  if (t.entry) t.start = steadyNs();
  CompletionWord cw;
  {
    CompletionScope armed(one ? &cw : nullptr);
    r = run(s);
  }
  if (t.entry) t.launched = steadyNs();
  if (r == ncclSuccess) {
    r = waitStream(s, comm, &cw);
    (cw.taken ? gByWord : gByStream).fetch_add(1);
    if (t.entry) gRouteProfile.add(false, t, steadyNs());
  }
  t.entry = 0;
  if (graphs && e == nullptr) Replays::mine().add(*one, comm, c, dev, s);
  return r;
}
#endif
