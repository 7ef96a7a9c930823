// The decisions of libmccl_mpi (the PMPI preload): an MPI collective on device buffers of
// a supported datatype and operator, at or above MCCL_MPI_THRESHOLD bytes, on an
// intracommunicator, runs on the mccl communicator cached on its MPI communicator,
// ordered on a stream and synchronised (with MPI progress) before returning, as MPI
// requires. Everything else goes back to the shim, which calls PMPI_*, but a call on
// device buffers that an MPI without CUDA support would crash on: that one goes to PMPI_*
// through host copies of its device buffers (mpi_stage.h).
//
// The routing lives here, in libmccl, so the shim stays a few lines per call and uses only
// exported symbols.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "bootstrap_mpi/fn_ref.h"
#include "bootstrap_mpi/mpi_map.h"
#include "bootstrap_mpi/mpi_replay.h"
#include "bootstrap_mpi/mpi_requests.h"
#include "bootstrap_mpi/mpi_stage.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/knobs.h"
#include "mccl_mpi.h"
#include "mpi_preload/mpi_route.h"

#ifdef MCCL_HAVE_CUDA
#include <cuda_runtime.h>
#endif


using namespace mccl;

namespace {

std::atomic<uint64_t> gViaMccl{0}, gViaMpi{0};
std::atomic<int> gMpiCudaAware{-1};  // what the MPI library itself says (set by the shim)

// A call's PMPI_* collective on the buffers HostStage hands it: the nonblocking form (its
// request in *req) where req is not NULL, as the other ranks call that form.
using Staged = FnRef<int(HostStage&, MPI_Request*)>;

void verbose(const char* call, size_t bytes, const char* path, const char* why) {
  if (!knobBool(Knob::MpiVerbose)) return;
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "[mccl_mpi rank %d] %s %zu B -> %s%s%s\n", rank, call, bytes, path, why ? ": " : "",
               why ? why : "");
}

#ifdef MCCL_HAVE_CUDA
// One stream per communicator for the calls the preload takes over. A blocking stream: it
// waits for work the program queued on the legacy default stream (a cudaMemcpy from
// pageable memory may return before its DMA lands; a kernel that filled the buffer), as an
// unmodified MPI program expects of a device buffer handed to MPI. Per communicator, since
// MPI orders collectives per communicator only: a rank may start MPI_Iallreduce on one and
// then a blocking collective on another that its peer called first, and on one stream the
// second would queue behind the first, whose peer is still in the second.
//
// A thread's last answer holds while no communicator was made or destroyed (the registry's
// generation, as mcclMpiComm's own last answer): the small-call path takes no lock. When the
// generation moved, the streams of communicators no longer live are destroyed (work still
// queued on one completes first: cudaStreamDestroy does not wait, the stream goes when idle),
// so a program that makes and frees communicators keeps one stream for each live one.
cudaStream_t streamFor(int dev, ncclComm_t comm) {
  thread_local int lastDev = -1;
  thread_local ncclComm_t lastComm = nullptr;
  thread_local uint64_t lastGen = 0;
  thread_local cudaStream_t lastStream = nullptr;
  const uint64_t gen = commRegistryGeneration();
  if (dev == lastDev && comm == lastComm && gen == lastGen) return lastStream;
  static std::mutex mu;
  static std::map<std::pair<int, ncclComm_t>, cudaStream_t> streams;
  static uint64_t sweptAt = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (gen != sweptAt) {
    for (auto it = streams.begin(); it != streams.end();) {
      if (isLiveComm(it->first.second)) {
        ++it;
        continue;
      }
      cudaStreamDestroy(it->second);
      it = streams.erase(it);
    }
    sweptAt = gen;
  }
  cudaStream_t s = nullptr;
  auto it = streams.find({dev, comm});
  if (it != streams.end()) {
    s = it->second;
  } else if (cudaStreamCreateWithFlags(&s, cudaStreamDefault) == cudaSuccess) {
    streams[{dev, comm}] = s;
  } else {
    cudaGetLastError();
    return nullptr;  // the legacy stream: ordered, just not concurrent (and not remembered)
  }
  lastDev = dev, lastComm = comm, lastGen = gen, lastStream = s;
  return s;
}

// What comm's failure flag holds (ncclSuccess: none): a communicator that failed while a
// call ran on it (a peer lost, an abort) ends its kernels early with the data unfinished,
// and the stream reports nothing. The failure is recorded before the kernels are stopped,
// so the flag alone tells; not ncclCommGetAsyncError, which looks for failures itself,
// taking locks: this also runs inside MPI's progress engine, which mccl's own waits may be
// turning below it on the stack.
ncclResult_t commFailure(ncclComm_t comm) {
  if (!isLiveComm(comm)) return ncclSuccess;
  const ncclResult_t e = comm->asyncError.load();
  return e == ncclInProgress ? ncclSuccess : e;
}

// A nonblocking collective's request: done when the event recorded behind it on its
// stream has happened; an error when the communicator failed meanwhile (a peer lost, an
// abort), whose kernels end early with the data unfinished.
class StreamWork : public MpiPendingWork {
 public:
  StreamWork(const char* call, cudaEvent_t ev, ncclComm_t comm) : call_(call), ev_(ev), comm_(comm) {}
  ~StreamWork() override { cudaEventDestroy(ev_); }
  int poll() override {
    const cudaError_t e = cudaEventQuery(ev_);
    if (e == cudaErrorNotReady) return kNotYet;
    if (e != cudaSuccess) {
      cudaGetLastError();
      WARN("%s on device buffers failed in mccl: %s", call_, cudaGetErrorString(e));
      return MPI_ERR_OTHER;
    }
    const ncclResult_t failed = commFailure(comm_);
    if (failed == ncclSuccess) return MPI_SUCCESS;
    WARN("%s on device buffers failed in mccl: the communicator failed (%s)", call_, ncclGetErrorString(failed));
    return MPI_ERR_OTHER;
  }

 private:
  const char* call_;
  cudaEvent_t ev_;
  ncclComm_t comm_;
};

int deviceOf(const void* p) { return mpiBufferDevice(p); }

// Whether a nonblocking call's request can complete later, from MPI's progress engine
// (mpi_requests.h). Where not, an MPI that takes device buffers gets the call; one that
// does not would fail on them, so mccl runs the call to its end inside it and hands out a
// completed request.
bool requestsLater() { return knobBool(Knob::MpiNonblocking) && mpiRequestsAvailable(); }

const char* whyNotLater() {
  return knobBool(Knob::MpiNonblocking) ? "no MPI progress hook to complete its request (not Open MPI)"
                                        : "MCCL_MPI_NONBLOCKING=0";
}

int execute(const char* call, size_t bytes, int dev, MPI_Comm comm, const OneCall* one,
            const Run& run, MPI_Request* req, int* rc);

#endif

// A call on device buffers (dev >= 0) that mccl does not run, on an MPI that cannot take
// them (its own MPIX_Query_cuda_support 0): PMPI_* on host copies, then the written
// buffers copied back; a nonblocking one hands out MPI's own request, kept with the copies
// in the staged requests' table until a completion call sees it done and copies them back
// (mpiStageKeepRequest). Returns 1 with *rc; 0 (the shim calls PMPI_* as it is) elsewhere.
int declined(const char* call, size_t bytes, int dev, const char* why, MPI_Comm comm, const Staged& staged,
             MPI_Request* req, int* rc) {
  int inter = 1;  // an intercommunicator's buffers are sized by the remote group: never staged
  if (dev < 0 || bytes == 0 || gMpiCudaAware.load() != 0 || comm == MPI_COMM_NULL ||
      MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
    gViaMpi.fetch_add(1);
    verbose(call, bytes, "MPI", why);
    return 0;
  }
  gViaMpi.fetch_add(1);
  HostStage st;
  if (req != nullptr) {
    const int posted = staged(st, req);
    *rc = mpiStageKeepRequest(std::move(st), comm, posted, req);
    verbose(call, bytes, "MPI through host copies (request)", why);
    return 1;
  }
  int r = staged(st, nullptr);
  const int back = st.finish();
  if (r == MPI_SUCCESS) r = back;
  verbose(call, bytes, "MPI through host copies", why);
  if (back != MPI_SUCCESS) {
    WARN("%s: copying device buffers to or from host memory failed", call);
    MPI_Comm_call_errhandler(comm, r);
  }
  *rc = r;
  return 1;
}

// Decides and, when mccl takes the call, runs it. Returns 1 when handled (*rc is the MPI
// result), 0 when the shim must call PMPI. one: run is one mccl collective and nothing after
// it (its arguments), so its launch may raise a completion word the wait spins on
// (core/completion.h) and a graph of it may be replayed (Replays); null otherwise.
// req: a nonblocking call's request (NULL for a blocking call), set when mccl takes it.
int route(const char* call, size_t bytes, const void* probe, MPI_Datatype dt, bool reduce, MPI_Op op,
          MPI_Comm comm, const OneCall* one, const Run& run, const Staged& staged,
          MPI_Request* req, int* rc) {
#ifndef MCCL_HAVE_CUDA
  (void)probe; (void)dt; (void)reduce; (void)op; (void)comm; (void)one; (void)run; (void)staged; (void)req;
  (void)rc;
  gViaMpi.fetch_add(1);
  verbose(call, bytes, "MPI", "mccl was built without CUDA");
  return 0;
#else
  routeEntered();  // MCCL_PROFILE
  const char* why = nullptr;
  ncclDataType_t t;
  ncclRedOp_t o;
  int inter = 0;
  int dev = -1;
  dev = deviceOf(probe);
  // Below the threshold a CUDA-aware MPI takes device buffers itself; one that is not
  // would fail on them, so mccl keeps those too.
  if (bytes == 0) why = "nothing to move";
  else if (dev < 0) why = "host buffer";
  else if (bytes < static_cast<size_t>(knobInt(Knob::MpiThreshold)) && gMpiCudaAware.load() != 0)
    why = "below MCCL_MPI_THRESHOLD";
  else if (!mpiDatatypeQuiet(dt, &t) || (reduce && dt == MPI_BYTE)) why = "datatype not supported";
  else if (reduce && !mpiOpQuiet(op, &o)) why = "operator not supported";
  else if (comm == MPI_COMM_NULL || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
    why = "not an intracommunicator";
  else if (req != nullptr && !requestsLater() && gMpiCudaAware.load() != 0) why = whyNotLater();
  if (why) return declined(call, bytes, dev, why, comm, staged, req, rc);
  return execute(call, bytes, dev, comm, one, run, req, rc);
#endif
}

#ifdef MCCL_HAVE_CUDA
// Runs a call the route gave to mccl on device dev, on its communicator's stream, and
// waits for it; a nonblocking call instead returns a request that MPI's progress completes
// when an event recorded behind it has happened (mpi_requests.h), or, where requests cannot
// complete later (requestsLater), waits as a blocking call does and returns a completed one.
int execute(const char* call, size_t bytes, int dev, MPI_Comm comm, const OneCall* one,
            const Run& run, MPI_Request* req, int* rc) {
  int prev = -1;
  cudaGetDevice(&prev);
  if (prev != dev) cudaSetDevice(dev);
  ncclComm_t c = nullptr;
  ncclResult_t r = mcclMpiComm(comm, &c);
  cudaStream_t s = r == ncclSuccess ? streamFor(dev, c) : nullptr;
  const bool later = req != nullptr && requestsLater();
  bool graph = false;
  if (r == ncclSuccess && !later) {
    r = runAndWait(call, bytes, one, req == nullptr, run, comm, c, dev, s, &graph);
    const ncclResult_t failed = r == ncclSuccess ? commFailure(c) : ncclSuccess;
    if (failed != ncclSuccess)
      r = MCCL_ERR(ncclRemoteError, c, "%s: the communicator failed while the call ran (%s)", call,
                   ncclGetErrorString(failed));
  } else if (r == ncclSuccess) {
    cudaEvent_t ev = nullptr;
    r = run(s);
    if (r == ncclSuccess && (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess ||
                             cudaEventRecord(ev, s) != cudaSuccess)) {
      cudaGetLastError();
      if (ev) cudaEventDestroy(ev);
      r = MCCL_ERR(ncclUnhandledCudaError, c, "%s: cannot record an event behind the call", call);
    } else if (r == ncclSuccess &&
               startMpiRequest(std::make_unique<StreamWork>(call, ev, c), req) != MPI_SUCCESS) {
      // The call is queued and cannot be taken back: wait for it, then report.
      cudaStreamSynchronize(s);
      r = MCCL_ERR(ncclSystemError, c, "%s: MPI_Grequest_start failed", call);
    }
  }
  if (prev >= 0 && prev != dev) cudaSetDevice(prev);
  gViaMccl.fetch_add(1);
  verbose(call, bytes, later ? "mccl (request)" : req ? "mccl (completed request)" : graph ? "mccl (graph)" : "mccl",
          r == ncclSuccess ? nullptr : ncclGetLastError(nullptr));
  if (r == ncclSuccess && req != nullptr && !later && completedMpiRequest(MPI_SUCCESS, req) != MPI_SUCCESS)
    r = MCCL_ERR(ncclSystemError, c, "%s: MPI_Grequest_start failed", call);
  if (r != ncclSuccess) {
    WARN("%s on device buffers failed in mccl: %s", call, ncclGetLastError(nullptr));
    if (req) *req = MPI_REQUEST_NULL;
    *rc = MPI_ERR_OTHER;
    MPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
    return 1;
  }
  *rc = MPI_SUCCESS;
  return 1;
}
#endif

size_t typeBytes(MPI_Datatype dt, size_t count) {
  int size = 0;
  if (dt == MPI_DATATYPE_NULL || MPI_Type_size(dt, &size) != MPI_SUCCESS) return 0;
  return static_cast<size_t>(size) * count;
}

int commSize(MPI_Comm comm) {
  int n = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &n);
  return n;
}

int commRank(MPI_Comm comm) {
  int r = 0;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &r);
  return r;
}

// The sum of a v-form's counts (elements), 0 for a NULL array (MPI reports that itself).
size_t countSum(const int* counts, MPI_Comm comm) {
  size_t total = 0;
  if (counts == nullptr) return 0;
  for (int q = 0, n = commSize(comm); q < n; ++q) total += counts[q] > 0 ? static_cast<size_t>(counts[q]) : 0;
  return total;
}

bool mismatched(MPI_Datatype a, MPI_Datatype b, bool countsDiffer) { return a != b || countsDiffer; }

// The device a call's probe buffer lives on (-1: none), for the calls declined before route.
int probeDevice(const void* p) {
#ifdef MCCL_HAVE_CUDA
  return deviceOf(p);
#else
  (void)p;
  return -1;
#endif
}

}  // namespace

NCCL_API void mcclMpiPathCounters(uint64_t* viaMccl, uint64_t* viaMpi) {
  if (viaMccl) *viaMccl = gViaMccl.load();
  if (viaMpi) *viaMpi = gViaMpi.load();
}

NCCL_API int mcclMpiRouteAllreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                                   MPI_Comm comm, MPI_Request* req, int* rc) {
  const void* probe = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const char* call = req ? "MPI_Iallreduce" : "MPI_Allreduce";
  const OneCall one{call, sendbuf, recvbuf, static_cast<size_t>(count), dt, op, -1};
  return route(
      call, typeBytes(dt, static_cast<size_t>(count)), probe, dt, true, op, comm, &one,
      [&](cudaStream_t s) { return mcclMpiAllreduce(sendbuf, recvbuf, static_cast<size_t>(count), dt, op, comm, s); },
      [&](HostStage& st, MPI_Request* r) {
        const MpiSpan sp = mpiSpan(dt, static_cast<size_t>(count));
        const void* hs = st.in(sendbuf, sp);
        void* hr = st.out(recvbuf, sp);
        return r ? PMPI_Iallreduce(hs, hr, count, dt, op, comm, r) : PMPI_Allreduce(hs, hr, count, dt, op, comm);
      },
      req, rc);
}

NCCL_API int mcclMpiRouteReduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                                MPI_Comm comm, MPI_Request* req, int* rc) {
  const void* probe = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const char* call = req ? "MPI_Ireduce" : "MPI_Reduce";
  const OneCall one{call, sendbuf, recvbuf, static_cast<size_t>(count), dt, op, root};
  return route(
      call, typeBytes(dt, static_cast<size_t>(count)), probe, dt, true, op, comm, &one,
      [&](cudaStream_t s) {
        return mcclMpiReduce(sendbuf, recvbuf, static_cast<size_t>(count), dt, op, root, comm, s);
      },
      [&](HostStage& st, MPI_Request* r) {
        const MpiSpan sp = mpiSpan(dt, static_cast<size_t>(count));
        const void* hs = st.in(sendbuf, sp);
        void* hr = commRank(comm) == root ? st.out(recvbuf, sp) : recvbuf;  // significant at the root only
        return r ? PMPI_Ireduce(hs, hr, count, dt, op, root, comm, r) : PMPI_Reduce(hs, hr, count, dt, op, root, comm);
      },
      req, rc);
}

NCCL_API int mcclMpiRouteBcast(void* buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* req,
                               int* rc) {
  const char* call = req ? "MPI_Ibcast" : "MPI_Bcast";
  const OneCall one{call, buffer, buffer, static_cast<size_t>(count), dt, MPI_OP_NULL, root};
  return route(
      call, typeBytes(dt, static_cast<size_t>(count)), buffer, dt, false, MPI_OP_NULL, comm, &one,
      [&](cudaStream_t s) { return mcclMpiBcast(buffer, static_cast<size_t>(count), dt, root, comm, s); },
      [&](HostStage& st, MPI_Request* r) {
        void* h = st.out(buffer, mpiSpan(dt, static_cast<size_t>(count)));
        return r ? PMPI_Ibcast(h, count, dt, root, comm, r) : PMPI_Bcast(h, count, dt, root, comm);
      },
      req, rc);
}

NCCL_API int mcclMpiRouteAllgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, int* rc) {
  const int n = commSize(comm);
  size_t bytes = typeBytes(recvtype, static_cast<size_t>(recvcount)) * static_cast<size_t>(n);
  const char* call = req ? "MPI_Iallgather" : "MPI_Allgather";
  const auto staged = [&](HostStage& st, MPI_Request* r) {
    const void* hs = st.in(sendbuf, mpiSpan(sendtype, static_cast<size_t>(sendcount)));
    void* hr = st.out(recvbuf, mpiSpan(recvtype, static_cast<size_t>(recvcount) * static_cast<size_t>(n)));
    return r ? PMPI_Iallgather(hs, sendcount, sendtype, hr, recvcount, recvtype, comm, r)
             : PMPI_Allgather(hs, sendcount, sendtype, hr, recvcount, recvtype, comm);
  };
  if (sendbuf != MPI_IN_PLACE && mismatched(sendtype, recvtype, sendcount != recvcount))
    return declined(call, bytes, probeDevice(recvbuf), "send and receive signatures differ", comm, staged, req, rc);
  const OneCall one{call, sendbuf, recvbuf, static_cast<size_t>(recvcount), recvtype, MPI_OP_NULL, -1};
  return route(
      call, bytes, recvbuf, recvtype, false, MPI_OP_NULL, comm, &one,
      [&](cudaStream_t s) {
        return mcclMpiAllgather(sendbuf, recvbuf, static_cast<size_t>(recvcount), recvtype, comm, s);
      },
      staged, req, rc);
}

NCCL_API int mcclMpiRouteReduceScatterBlock(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype dt,
                                            MPI_Op op, MPI_Comm comm, MPI_Request* req, int* rc) {
  size_t bytes = typeBytes(dt, static_cast<size_t>(recvcount)) * static_cast<size_t>(commSize(comm));
  const void* probe = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const char* call = req ? "MPI_Ireduce_scatter_block" : "MPI_Reduce_scatter_block";
  const OneCall one{call, sendbuf, recvbuf, static_cast<size_t>(recvcount), dt, op, -1};
  return route(
      call, bytes, probe, dt, true, op, comm, sendbuf != MPI_IN_PLACE ? &one : nullptr,
      [&](cudaStream_t s) {
        return mcclMpiReduceScatterBlock(sendbuf, recvbuf, static_cast<size_t>(recvcount), dt, op, comm, s);
      },
      [&](HostStage& st, MPI_Request* r) {
        const size_t whole = static_cast<size_t>(recvcount) * static_cast<size_t>(commSize(comm));
        const void* hs = st.in(sendbuf, mpiSpan(dt, whole));
        void* hr = st.out(recvbuf, mpiSpan(dt, sendbuf == MPI_IN_PLACE ? whole : static_cast<size_t>(recvcount)));
        return r ? PMPI_Ireduce_scatter_block(hs, hr, recvcount, dt, op, comm, r)
                 : PMPI_Reduce_scatter_block(hs, hr, recvcount, dt, op, comm);
      },
      req, rc);
}

NCCL_API int mcclMpiRouteAlltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, int* rc) {
  const size_t n = static_cast<size_t>(commSize(comm));
  size_t bytes = typeBytes(recvtype, static_cast<size_t>(recvcount)) * n;
  const char* call = req ? "MPI_Ialltoall" : "MPI_Alltoall";
  const auto staged = [&](HostStage& st, MPI_Request* r) {
    const void* hs = st.in(sendbuf, mpiSpan(sendtype, static_cast<size_t>(sendcount) * n));
    void* hr = st.out(recvbuf, mpiSpan(recvtype, static_cast<size_t>(recvcount) * n));
    return r ? PMPI_Ialltoall(hs, sendcount, sendtype, hr, recvcount, recvtype, comm, r)
             : PMPI_Alltoall(hs, sendcount, sendtype, hr, recvcount, recvtype, comm);
  };
  if (sendbuf != MPI_IN_PLACE && mismatched(sendtype, recvtype, sendcount != recvcount))
    return declined(call, bytes, probeDevice(recvbuf), "send and receive signatures differ", comm, staged, req, rc);
  return route(
      call, bytes, recvbuf, recvtype, false, MPI_OP_NULL, comm, nullptr,
      [&](cudaStream_t s) {
        return mcclMpiAlltoall(sendbuf, recvbuf, static_cast<size_t>(recvcount), recvtype, comm, s);
      },
      staged, req, rc);
}

// Gather and Scatter: the root decides on its side that holds every block (its two sides
// must agree), the others on their own block; in a program whose ranks pass the same count
// and datatype every rank decides alike.
NCCL_API int mcclMpiRouteGather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* req, int* rc) {
  const int n = commSize(comm);
  if (root < 0 || root >= n) return 0;  // MPI reports it
  const bool atRoot = commRank(comm) == root;
  const MPI_Datatype dt = atRoot ? recvtype : sendtype;
  const int count = atRoot ? recvcount : sendcount;
  const char* call = req ? "MPI_Igather" : "MPI_Gather";
  const size_t bytes = typeBytes(dt, static_cast<size_t>(count)) * static_cast<size_t>(n);
  const void* probe = atRoot ? recvbuf : sendbuf;
  const auto staged = [&](HostStage& st, MPI_Request* r) {
    const void* hs = st.in(sendbuf, mpiSpan(sendtype, static_cast<size_t>(sendcount)));
    void* hr = atRoot ? st.out(recvbuf, mpiSpan(recvtype, static_cast<size_t>(recvcount) * static_cast<size_t>(n)))
                      : recvbuf;
    return r ? PMPI_Igather(hs, sendcount, sendtype, hr, recvcount, recvtype, root, comm, r)
             : PMPI_Gather(hs, sendcount, sendtype, hr, recvcount, recvtype, root, comm);
  };
  if (atRoot && sendbuf != MPI_IN_PLACE && mismatched(sendtype, recvtype, sendcount != recvcount))
    return declined(call, bytes, probeDevice(probe), "send and receive signatures differ", comm, staged, req, rc);
  return route(
      call, bytes, probe, dt, false, MPI_OP_NULL, comm, nullptr,
      [&](cudaStream_t s) { return mcclMpiGather(sendbuf, recvbuf, static_cast<size_t>(count), dt, root, comm, s); },
      staged, req, rc);
}

NCCL_API int mcclMpiRouteScatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* req,
                                 int* rc) {
  const int n = commSize(comm);
  if (root < 0 || root >= n) return 0;
  const bool atRoot = commRank(comm) == root;
  const MPI_Datatype dt = atRoot ? sendtype : recvtype;
  const int count = atRoot ? sendcount : recvcount;
  const char* call = req ? "MPI_Iscatter" : "MPI_Scatter";
  const size_t bytes = typeBytes(dt, static_cast<size_t>(count)) * static_cast<size_t>(n);
  const void* probe = atRoot ? sendbuf : recvbuf;
  const auto staged = [&](HostStage& st, MPI_Request* r) {
    const void* hs = atRoot ? st.in(sendbuf, mpiSpan(sendtype, static_cast<size_t>(sendcount) * static_cast<size_t>(n)))
                            : sendbuf;
    void* hr = st.out(recvbuf, mpiSpan(recvtype, static_cast<size_t>(recvcount)));
    return r ? PMPI_Iscatter(hs, sendcount, sendtype, hr, recvcount, recvtype, root, comm, r)
             : PMPI_Scatter(hs, sendcount, sendtype, hr, recvcount, recvtype, root, comm);
  };
  if (atRoot && recvbuf != MPI_IN_PLACE && mismatched(sendtype, recvtype, sendcount != recvcount))
    return declined(call, bytes, probeDevice(probe), "send and receive signatures differ", comm, staged, req, rc);
  return route(
      call, bytes, probe, dt, false, MPI_OP_NULL, comm, nullptr,
      [&](cudaStream_t s) { return mcclMpiScatter(sendbuf, recvbuf, static_cast<size_t>(count), dt, root, comm, s); },
      staged, req, rc);
}

// recvcounts is the same array on every rank, so every rank sees the same total.
NCCL_API int mcclMpiRouteAllgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Request* req, int* rc) {
  const char* call = req ? "MPI_Iallgatherv" : "MPI_Allgatherv";
  const size_t bytes = typeBytes(recvtype, countSum(recvcounts, comm));
  const auto staged = [&](HostStage& st, MPI_Request* r) {
    const void* hs = st.in(sendbuf, mpiSpan(sendtype, static_cast<size_t>(sendcount)));
    void* hr = st.out(recvbuf, mpiSpanOfBlocks(recvtype, recvcounts, displs, commSize(comm)));
    return r ? PMPI_Iallgatherv(hs, sendcount, sendtype, hr, recvcounts, displs, recvtype, comm, r)
             : PMPI_Allgatherv(hs, sendcount, sendtype, hr, recvcounts, displs, recvtype, comm);
  };
  if (sendbuf != MPI_IN_PLACE && mismatched(sendtype, recvtype, false))
    return declined(call, bytes, probeDevice(recvbuf), "send and receive signatures differ", comm, staged, req, rc);
  return route(
      call, bytes, recvbuf, recvtype, false, MPI_OP_NULL, comm, nullptr,
      [&](cudaStream_t s) {
        return mcclMpiAllgatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, recvtype, comm, s);
      },
      staged, req, rc);
}

NCCL_API int mcclMpiRouteReduceScatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype dt,
                                       MPI_Op op, MPI_Comm comm, MPI_Request* req, int* rc) {
  const void* probe = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const char* call = req ? "MPI_Ireduce_scatter" : "MPI_Reduce_scatter";
  return route(
      call, typeBytes(dt, countSum(recvcounts, comm)), probe, dt, true, op, comm, nullptr,
      [&](cudaStream_t s) { return mcclMpiReduceScatter(sendbuf, recvbuf, recvcounts, dt, op, comm, s); },
      [&](HostStage& st, MPI_Request* r) {
        const size_t whole = countSum(recvcounts, comm);
        const size_t mine = recvcounts && recvcounts[commRank(comm)] > 0 ? recvcounts[commRank(comm)] : 0;
        const void* hs = st.in(sendbuf, mpiSpan(dt, whole));
        void* hr = st.out(recvbuf, mpiSpan(dt, sendbuf == MPI_IN_PLACE ? whole : mine));
        return r ? PMPI_Ireduce_scatter(hs, hr, recvcounts, dt, op, comm, r)
                 : PMPI_Reduce_scatter(hs, hr, recvcounts, dt, op, comm);
      },
      req, rc);
}

// Alltoallv: a rank's counts are its own (one may send and receive nothing, with NULL
// buffers), so no rank can decide alone: the ranks vote with one small PMPI_Allreduce.
// Any rank with data in host memory, or whose call mccl cannot take, sends everyone to
// MPI; else, with data on the GPU somewhere, below MCCL_MPI_THRESHOLD bytes a rank on
// average a CUDA-aware MPI keeps it, and above mccl takes it.
NCCL_API int mcclMpiRouteAlltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, int* rc) {
  routeEntered();  // MCCL_PROFILE
  const char* call = req ? "MPI_Ialltoallv" : "MPI_Alltoallv";
  const bool inPlace = sendbuf == MPI_IN_PLACE;  // then sendcounts and sdispls are ignored (may be NULL)
  int inter = 0;
  if (comm == MPI_COMM_NULL || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
      (!inPlace && sendcounts == nullptr) || recvcounts == nullptr) {
    gViaMpi.fetch_add(1);
    verbose(call, 0, "MPI", "not an intracommunicator, or no counts");
    return 0;
  }
#ifndef MCCL_HAVE_CUDA
  (void)inPlace;
  (void)sdispls;
  (void)sendtype;
  (void)recvbuf;
  (void)rdispls;
  (void)recvtype;
  (void)req;
  (void)rc;
  gViaMpi.fetch_add(1);
  verbose(call, 0, "MPI", "mccl was built without CUDA");
  return 0;
#else
  const size_t sent = inPlace ? 0 : countSum(sendcounts, comm), received = countSum(recvcounts, comm);
  ncclDataType_t t;
  // {ranks that need MPI, ranks with data on a GPU, bytes received}
  long long vote[3] = {0, 0, static_cast<long long>(typeBytes(recvtype, received))};
  int dev = -1;
  const int sdev = sent > 0 ? deviceOf(sendbuf) : -2, rdev = received > 0 ? deviceOf(recvbuf) : -2;
  if ((!inPlace && sendtype != recvtype) || !mpiDatatypeQuiet(recvtype, &t) ||
      (req != nullptr && !requestsLater() && gMpiCudaAware.load() != 0)) {
    vote[0] = 1;
  } else {
    if (sdev == -1 || rdev == -1 || (sdev >= 0 && rdev >= 0 && sdev != rdev))
      vote[0] = 1;  // host memory
    else if (sdev >= 0 || rdev >= 0)
      vote[1] = 1, dev = sdev >= 0 ? sdev : rdev;
  }
  long long all[3] = {0, 0, 0};
  if (PMPI_Allreduce(vote, all, 3, MPI_LONG_LONG, MPI_SUM, comm) != MPI_SUCCESS) return 0;
  const int n = commSize(comm);
  const char* why =
      all[0] > 0    ? "host buffers or a datatype mccl does not take, on some rank"
      : all[1] == 0 ? "no data on a GPU"
      : static_cast<size_t>(all[2]) / static_cast<size_t>(n) < static_cast<size_t>(knobInt(Knob::MpiThreshold)) &&
              gMpiCudaAware.load() != 0
          ? "below MCCL_MPI_THRESHOLD"
          : nullptr;
  if (why) {
    // This rank's own device buffers through host copies, on an MPI that cannot take them.
    const int n2 = commSize(comm);
    const auto staged = [&](HostStage& st, MPI_Request* r) {
      const void* hs = st.in(sendbuf, inPlace ? MpiSpan() : mpiSpanOfBlocks(sendtype, sendcounts, sdispls, n2));
      void* hr = st.out(recvbuf, mpiSpanOfBlocks(recvtype, recvcounts, rdispls, n2));
      return r ? PMPI_Ialltoallv(hs, sendcounts, sdispls, sendtype, hr, recvcounts, rdispls, recvtype, comm, r)
               : PMPI_Alltoallv(hs, sendcounts, sdispls, sendtype, hr, recvcounts, rdispls, recvtype, comm);
    };
    const size_t mine = std::max(typeBytes(recvtype, received), inPlace ? 0 : typeBytes(sendtype, sent));
    return declined(call, mine, std::max(sdev, rdev), why, comm, staged, req, rc);
  }
  if (dev < 0 && cudaGetDevice(&dev) != cudaSuccess) dev = 0;  // nothing of its own: its current GPU
  return execute(
      call, vote[2] > 0 ? static_cast<size_t>(vote[2]) : 0, dev, comm, nullptr,
      [&](cudaStream_t s) {
        return mcclMpiAlltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, recvtype, comm, s);
      },
      req, rc);
#endif
}

// The shim tells what the MPI library's own MPIX_Query_cuda_support says (0: device
// buffers must never reach it).
NCCL_API void mcclMpiRouteSetMpiCudaAware(int aware) { gMpiCudaAware.store(aware); }
int mccl::mpiLibraryCudaAware() { return gMpiCudaAware.load(); }

// What MPIX_Query_cuda_support reports under the preload: 1 when MCCL_MPI_CUDA_AWARE (the
// collectives above accept device buffers), else -1 (ask the MPI library).
NCCL_API int mcclMpiRouteCudaAware(void) {
#ifdef MCCL_HAVE_CUDA
  return knobBool(Knob::MpiCudaAware) ? 1 : -1;
#else
  return -1;
#endif
}
