// Point-to-point calls (and the collectives the route does not take, at the end) on device
// buffers for an MPI library that cannot take them
// (mpi_route.h). Under the preload MPIX_Query_cuda_support says 1 (MCCL_MPI_CUDA_AWARE),
// so a program hands device buffers to MPI_Send and MPI_Irecv as well as to the
// collectives; on an MPI without CUDA support those would crash inside it. Here each
// device buffer goes to MPI as a host copy (HostStage, mpi_stage.h), as a CUDA-aware MPI
// stages it inside itself:
//
//   * a send copies its span to host memory and sends the copy; a receive of a predefined
//     type without gaps receives into a host buffer and copies back the bytes that came
//     (what a short message leaves keeps its values); any other receive (and a
//     Sendrecv_replace) copies its span to host memory first (the bytes a short message
//     or a datatype's gaps leave keep their values), receives into the copy and copies it
//     back whole; the host buffers are pinned (mpi_stage.cc), so each copy is one DMA;
//   * blocking calls do all of that inside the call;
//   * nonblocking and persistent ones hand out MPI's own request on the copy, kept in a
//     table with its copies until the request completes. The program completes requests in
//     MPI_Wait, MPI_Test, their -all, -any and -some forms and MPI_Request_get_status: the
//     shim sends those here while any staged request is alive, and a receive's copy goes
//     back to the device before the call returns. MPI_Start refreshes a persistent
//     request's copy; MPI_Request_free of an active staged request keeps it here (the host
//     copy must outlive the transfer) and later calls complete it.
//
// A request's handle is the table's key from its post until MPI frees it: a completion
// call's handles are read before it runs, and an entry is dropped when its request has
// completed (or MPI freed it with an error), so a handle MPI hands out again later never
// meets a stale entry.
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bootstrap_mpi/mpi_stage.h"
#include "core/debug.h"
#include "core/error.h"
#include "mpi_preload/mpi_route.h"

using namespace mccl;

namespace {

struct StagedRequest {
  StagedRequest() = default;
  explicit StagedRequest(HostStage&& st) : stage(std::move(st)) {}
  HostStage stage;
  MPI_Comm comm = MPI_COMM_NULL;  // whose error handler hears of a failed copy
  bool recv = false;              // copied back when it completes
  bool persistent = false;
  bool active = false;            // posted (a persistent one: started) and not completed
  bool copiedBack = false;        // MPI_Request_get_status saw it complete and copied it back
};

struct Table {
  std::mutex mu;
  std::unordered_map<MPI_Request, std::unique_ptr<StagedRequest>> live;
  // Freed by the program while active: completed here (MPI_Test) by later calls.
  std::vector<std::pair<MPI_Request, std::unique_ptr<StagedRequest>>> detached;
  std::atomic<int> count{0};  // live + detached: the shim's test
  std::atomic<unsigned long long> staged{0};
};

Table& table() {
  static Table* t = new Table();  // outlives MPI_Finalize and static destructors
  return *t;
}

void recount(Table& t) { t.count.store(static_cast<int>(t.live.size() + t.detached.size())); }

bool wanted(const void* buf, int count) {
  int device = -1;
  return count > 0 && mpiLibraryCudaAware() == 0 && mpiStageable(buf, &device);
}

// A failed copy between a device buffer and its host copy: said once, the communicator's
// error handler called, MPI_ERR_OTHER.
int copyFailed(MPI_Comm comm) {
  WARN("libmccl_mpi: copying a device buffer to or from host memory failed (point-to-point)");
  if (comm != MPI_COMM_NULL) MPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

void remember(MPI_Request req, std::unique_ptr<StagedRequest> s) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.live[req] = std::move(s);
  recount(t);
}

bool cancelled(const MPI_Status* st) {
  int c = 0;
  return st != MPI_STATUS_IGNORE && MPI_Test_cancelled(st, &c) == MPI_SUCCESS && c;
}

// The status a call fills: the program's, or ours where it passed MPI_STATUS_IGNORE (a
// receive's copy back reads its count and whether it was cancelled).
class StatusOut {
 public:
  explicit StatusOut(MPI_Status* given) : p_(given == MPI_STATUS_IGNORE ? &own_ : given) {}
  StatusOut(const StatusOut&) = delete;
  StatusOut& operator=(const StatusOut&) = delete;
  MPI_Status* get() const { return p_; }

 private:
  MPI_Status own_;
  MPI_Status* p_;
};

// A receive's copy back, unless the request was cancelled or failed. MPI_SUCCESS or
// copyFailed's.
int copyBack(StagedRequest& s, const MPI_Status* st, bool ok) {
  if (!s.recv || s.copiedBack || !ok || cancelled(st)) return MPI_SUCCESS;
  s.copiedBack = true;
  s.stage.received(st);
  return s.stage.finish() == MPI_SUCCESS ? MPI_SUCCESS : copyFailed(s.comm);
}

// Completes the table's detached requests whose transfers are done (the table's lock held).
void reapDetached(Table& t) {
  for (size_t i = 0; i < t.detached.size();) {
    auto& [h, s] = t.detached[i];
    int flag = 0;
    MPI_Status st;
    const int rc = PMPI_Test(&h, &flag, &st);
    if (rc == MPI_SUCCESS && !flag) {
      ++i;
      continue;
    }
    copyBack(*s, &st, rc == MPI_SUCCESS);
    if (s->persistent && h != MPI_REQUEST_NULL) PMPI_Request_free(&h);
    t.detached.erase(t.detached.begin() + static_cast<ptrdiff_t>(i));
  }
  recount(t);
}

// The handles a completion call is given, read before it runs (MPI sets completed ones to
// MPI_REQUEST_NULL), with the statuses the call fills: the program's, or ours where it
// passed MPI_STATUS(ES)_IGNORE (cancelled and failed receives are not copied back).
class Completion {
 public:
  // reqs NULL or n < 0 (a program's error, which MPI reports): no handles to follow.
  Completion(int n, const MPI_Request* reqs, MPI_Status* statuses)
      : handles_(reqs, reqs + (reqs != nullptr && n > 0 ? n : 0)) {
    if (statuses == MPI_STATUSES_IGNORE) {
      own_.resize(handles_.size());
      statuses_ = own_.data();
    } else {
      statuses_ = statuses;
    }
    Table& t = table();
    std::lock_guard<std::mutex> lock(t.mu);
    if (!t.detached.empty()) reapDetached(t);
  }
  MPI_Status* statuses() { return statuses_; }
  int size() const { return static_cast<int>(handles_.size()); }
  MPI_Status* status(int i) { return statuses_ + i; }

  // Request i completed (ok: without error; st: its status). Its receive goes back to the
  // device; a nonpersistent entry is dropped. Returns MPI_SUCCESS or copyFailed's.
  int completed(int i, bool ok) { return completed(i, ok, status(i)); }
  int completed(int i, bool ok, const MPI_Status* st) {
    Table& t = table();
    std::unique_ptr<StagedRequest> gone;
    StagedRequest* s = nullptr;
    {
      std::lock_guard<std::mutex> lock(t.mu);
      if (i < 0 || static_cast<size_t>(i) >= handles_.size()) return MPI_SUCCESS;
      auto it = t.live.find(handles_[static_cast<size_t>(i)]);
      if (it == t.live.end() || !it->second->active) return MPI_SUCCESS;  // not ours, or an inactive persistent one
      s = it->second.get();
      s->active = false;
      if (!s->persistent) {
        gone = std::move(it->second);
        t.live.erase(it);
        recount(t);
      } else {
        return copyBack(*s, st, ok);  // a persistent entry lives on: copied under the lock
      }
    }
    return copyBack(*gone, st, ok);
  }
  // What the call's result says of request i: complete (*ok without error) or not.
  bool settledByResult(int rc, int i, bool* ok) {
    if (rc == MPI_SUCCESS) return *ok = true;
    if (rc == MPI_ERR_IN_STATUS) {
      const int e = statuses_[i].MPI_ERROR;
      *ok = e == MPI_SUCCESS;
      return e != MPI_ERR_PENDING;
    }
    *ok = false;
    return true;
  }

 private:
  std::vector<MPI_Request> handles_;
  std::vector<MPI_Status> own_;
  MPI_Status* statuses_;
};

int first(int a, int b) { return a != MPI_SUCCESS ? a : b; }

int sendCall(int mode, int form, const void* b, int n, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
             MPI_Request* req) {
  switch (form) {
    case MCCL_MPI_BLOCKING:
      switch (mode) {
        case MCCL_MPI_SEND_SYNCHRONOUS: return PMPI_Ssend(b, n, dt, dest, tag, comm);
        case MCCL_MPI_SEND_READY: return PMPI_Rsend(b, n, dt, dest, tag, comm);
        case MCCL_MPI_SEND_BUFFERED: return PMPI_Bsend(b, n, dt, dest, tag, comm);
        default: return PMPI_Send(b, n, dt, dest, tag, comm);
      }
    case MCCL_MPI_NONBLOCKING:
      switch (mode) {
        case MCCL_MPI_SEND_SYNCHRONOUS: return PMPI_Issend(b, n, dt, dest, tag, comm, req);
        case MCCL_MPI_SEND_READY: return PMPI_Irsend(b, n, dt, dest, tag, comm, req);
        case MCCL_MPI_SEND_BUFFERED: return PMPI_Ibsend(b, n, dt, dest, tag, comm, req);
        default: return PMPI_Isend(b, n, dt, dest, tag, comm, req);
      }
    default:
      switch (mode) {
        case MCCL_MPI_SEND_SYNCHRONOUS: return PMPI_Ssend_init(b, n, dt, dest, tag, comm, req);
        case MCCL_MPI_SEND_READY: return PMPI_Rsend_init(b, n, dt, dest, tag, comm, req);
        case MCCL_MPI_SEND_BUFFERED: return PMPI_Bsend_init(b, n, dt, dest, tag, comm, req);
        default: return PMPI_Send_init(b, n, dt, dest, tag, comm, req);
      }
  }
}

// A posted call's request, its staged copies kept with it: nonblocking ones active,
// persistent ones from their first MPI_Start.
int posted(int rc, int form, bool recv, MPI_Comm comm, std::unique_ptr<StagedRequest> s, MPI_Request* req) {
  const bool copyOk = s->stage.ok();
  if (rc == MPI_SUCCESS && form != MCCL_MPI_BLOCKING) {
    s->comm = comm;
    s->recv = recv;
    s->persistent = form == MCCL_MPI_PERSISTENT;
    s->active = form == MCCL_MPI_NONBLOCKING;
    remember(*req, std::move(s));
  }
  table().staged.fetch_add(1);
  return copyOk ? rc : first(rc, copyFailed(comm));
}

}  // namespace

NCCL_API int mcclMpiStageSend(int mode, int form, const void* buf, int count, MPI_Datatype dt, int dest, int tag,
                              MPI_Comm comm, MPI_Request* req, int* rc) {
  if (!wanted(buf, count)) return 0;
  auto s = std::make_unique<StagedRequest>();
  const void* host = s->stage.in(buf, mpiSpan(dt, static_cast<size_t>(count)));
  if (!s->stage.staged()) return 0;
  *rc = posted(sendCall(mode, form, host, count, dt, dest, tag, comm, req), form, false, comm, std::move(s), req);
  return 1;
}

NCCL_API int mcclMpiStageRecv(int form, void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                              MPI_Status* status, MPI_Request* req, int* rc) {
  if (!wanted(buf, count)) return 0;
  auto s = std::make_unique<StagedRequest>();
  void* host = s->stage.into(buf, dt, static_cast<size_t>(count));
  if (!s->stage.staged()) return 0;
  s->recv = true;
  s->comm = comm;
  int r;
  if (form == MCCL_MPI_BLOCKING) {
    const StatusOut st(status);
    r = PMPI_Recv(host, count, dt, source, tag, comm, st.get());
    if (r == MPI_SUCCESS) r = copyBack(*s, st.get(), true);
  } else if (form == MCCL_MPI_NONBLOCKING) {
    r = PMPI_Irecv(host, count, dt, source, tag, comm, req);
  } else {
    r = PMPI_Recv_init(host, count, dt, source, tag, comm, req);
  }
  *rc = posted(r, form, true, comm, std::move(s), req);
  return 1;
}

NCCL_API int mcclMpiStageMrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* message, MPI_Status* status,
                               MPI_Request* req, int* rc) {
  if (!wanted(buf, count)) return 0;
  auto s = std::make_unique<StagedRequest>();
  void* host = s->stage.into(buf, dt, static_cast<size_t>(count));
  if (!s->stage.staged()) return 0;
  s->recv = true;
  int r;
  if (req == nullptr) {
    const StatusOut st(status);
    r = PMPI_Mrecv(host, count, dt, message, st.get());
    if (r == MPI_SUCCESS) r = copyBack(*s, st.get(), true);
  } else {
    r = PMPI_Imrecv(host, count, dt, message, req);
  }
  *rc = posted(r, req ? MCCL_MPI_NONBLOCKING : MCCL_MPI_BLOCKING, true, MPI_COMM_NULL, std::move(s), req);
  return 1;
}

NCCL_API int mcclMpiStageSendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                                  MPI_Comm comm, MPI_Status* status, int* rc) {
  if (!wanted(sendbuf, sendcount) && !wanted(recvbuf, recvcount)) return 0;
  HostStage st;
  const void* hs = sendcount > 0 ? st.in(sendbuf, mpiSpan(sendtype, static_cast<size_t>(sendcount))) : sendbuf;
  void* hr = recvcount > 0 ? st.into(recvbuf, recvtype, static_cast<size_t>(recvcount)) : recvbuf;
  if (!st.staged()) return 0;
  const StatusOut got(status);
  int r = PMPI_Sendrecv(hs, sendcount, sendtype, dest, sendtag, hr, recvcount, recvtype, source, recvtag, comm,
                        got.get());
  if (r == MPI_SUCCESS) st.received(got.get());
  if (st.finish() != MPI_SUCCESS) r = first(r, copyFailed(comm));
  table().staged.fetch_add(1);
  *rc = r;
  return 1;
}

NCCL_API int mcclMpiStageSendrecvReplace(void* buf, int count, MPI_Datatype dt, int dest, int sendtag, int source,
                                         int recvtag, MPI_Comm comm, MPI_Status* status, int* rc) {
  if (!wanted(buf, count)) return 0;
  HostStage st;
  void* host = st.out(buf, mpiSpan(dt, static_cast<size_t>(count)));
  if (!st.staged()) return 0;
  int r = PMPI_Sendrecv_replace(host, count, dt, dest, sendtag, source, recvtag, comm, status);
  if (st.finish() != MPI_SUCCESS) r = first(r, copyFailed(comm));
  table().staged.fetch_add(1);
  *rc = r;
  return 1;
}

NCCL_API int mcclMpiStagedRequests(void) { return table().count.load(std::memory_order_relaxed); }

NCCL_API int mcclMpiStagedWait(MPI_Request* req, MPI_Status* status) {
  Completion c(1, req, status);
  const int rc = PMPI_Wait(req, c.status(0));
  return first(rc, c.completed(0, rc == MPI_SUCCESS));
}

NCCL_API int mcclMpiStagedTest(MPI_Request* req, int* flag, MPI_Status* status) {
  Completion c(1, req, status);
  const int rc = PMPI_Test(req, flag, c.status(0));
  if (rc != MPI_SUCCESS && *req != MPI_REQUEST_NULL) return rc;  // nothing completed
  return (rc != MPI_SUCCESS || *flag) ? first(rc, c.completed(0, rc == MPI_SUCCESS)) : rc;
}

NCCL_API int mcclMpiStagedWaitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  Completion c(n, reqs, statuses);
  const int rc = PMPI_Waitall(n, reqs, c.statuses());
  int back = MPI_SUCCESS;
  for (int i = 0; i < c.size(); ++i) {
    bool ok = false;
    if (c.settledByResult(rc, i, &ok)) back = first(back, c.completed(i, ok));
  }
  return first(rc, back);
}

NCCL_API int mcclMpiStagedTestall(int n, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  Completion c(n, reqs, statuses);
  const int rc = PMPI_Testall(n, reqs, flag, c.statuses());
  if (rc == MPI_SUCCESS && !*flag) return rc;
  int back = MPI_SUCCESS;
  for (int i = 0; i < c.size(); ++i) {
    bool ok = false;
    if (c.settledByResult(rc, i, &ok)) back = first(back, c.completed(i, ok));
  }
  return first(rc, back);
}

NCCL_API int mcclMpiStagedWaitany(int n, MPI_Request reqs[], int* index, MPI_Status* status) {
  Completion c(n, reqs, MPI_STATUSES_IGNORE);
  const StatusOut out(status);
  MPI_Status* const st = out.get();
  const int rc = PMPI_Waitany(n, reqs, index, st);
  if (*index == MPI_UNDEFINED || *index < 0 || *index >= n) return rc;
  return first(rc, c.completed(*index, rc == MPI_SUCCESS, st));
}

NCCL_API int mcclMpiStagedTestany(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  Completion c(n, reqs, MPI_STATUSES_IGNORE);
  const StatusOut out(status);
  MPI_Status* const st = out.get();
  const int rc = PMPI_Testany(n, reqs, index, flag, st);
  if (!*flag || *index == MPI_UNDEFINED || *index < 0 || *index >= n) return rc;
  return first(rc, c.completed(*index, rc == MPI_SUCCESS, st));
}

namespace {
// Waitsome and Testsome: the requests at indices[0 .. outcount) completed.
int completedSome(Completion& c, int rc, int n, const int* outcount, const int indices[]) {
  if (*outcount == MPI_UNDEFINED) return rc;
  int back = MPI_SUCCESS;
  for (int k = 0; k < *outcount; ++k) {  // statuses in completion order, k-th for indices[k]
    const int i = indices[k];
    const MPI_Status* st = c.status(k);
    if (i < 0 || i >= n) continue;
    const bool ok = rc == MPI_SUCCESS || (rc == MPI_ERR_IN_STATUS && st->MPI_ERROR == MPI_SUCCESS);
    back = first(back, c.completed(i, ok, st));
  }
  return first(rc, back);
}
}  // namespace

NCCL_API int mcclMpiStagedWaitsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  Completion c(n, reqs, statuses);
  const int rc = PMPI_Waitsome(n, reqs, outcount, indices, c.statuses());
  return completedSome(c, rc, n, outcount, indices);
}

NCCL_API int mcclMpiStagedTestsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  Completion c(n, reqs, statuses);
  const int rc = PMPI_Testsome(n, reqs, outcount, indices, c.statuses());
  return completedSome(c, rc, n, outcount, indices);
}

NCCL_API int mcclMpiStagedRequestGetStatus(MPI_Request req, int* flag, MPI_Status* status) {
  const StatusOut out(status);
  MPI_Status* const st = out.get();
  const int rc = PMPI_Request_get_status(req, flag, st);
  if (rc != MPI_SUCCESS || !*flag) return rc;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.live.find(req);
  if (it == t.live.end() || !it->second->active) return rc;
  return copyBack(*it->second, st, true);  // the entry stays until MPI_Wait or MPI_Test frees the request
}

NCCL_API int mcclMpiStagedRequestFree(MPI_Request* req) {
  Table& t = table();
  {
    std::lock_guard<std::mutex> lock(t.mu);
    auto it = t.live.find(*req);
    if (it != t.live.end()) {
      std::unique_ptr<StagedRequest> s = std::move(it->second);
      t.live.erase(it);
      if (s->active) {  // its transfer still runs on the host copy: kept, completed here later
        t.detached.emplace_back(*req, std::move(s));
        *req = MPI_REQUEST_NULL;
        reapDetached(t);
        return MPI_SUCCESS;
      }
      recount(t);
    }
  }
  return PMPI_Request_free(req);
}

NCCL_API int mcclMpiStagedStart(MPI_Request* req) { return mcclMpiStagedStartall(1, req); }

NCCL_API int mcclMpiStagedStartall(int n, MPI_Request reqs[]) {
  Table& t = table();
  int back = MPI_SUCCESS;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    for (int i = 0; i < n; ++i) {
      auto it = t.live.find(reqs[i]);
      if (it == t.live.end()) continue;
      StagedRequest& s = *it->second;
      // A send's data as it is now; a receive's too (what the message leaves stays as is).
      if (s.stage.refresh() != MPI_SUCCESS) back = first(back, copyFailed(s.comm));
      s.active = true;
      s.copiedBack = false;
    }
  }
  const int rc = n == 1 ? PMPI_Start(reqs) : PMPI_Startall(n, reqs);
  return first(rc, back);
}

NCCL_API void mcclMpiStageCounters(unsigned long long* staged, unsigned long long* live) {
  if (staged) *staged = table().staged.load();
  if (live) *live = static_cast<unsigned long long>(table().count.load());
}

NCCL_API void mcclMpiStageHostForTests(int on) { mpiStageHostForTests(on != 0); }

// The collectives the route does not take (MPI_Gatherv, MPI_Scatterv, MPI_Scan,
// MPI_Exscan, MPI_Alltoallw, MPI_Reduce_local and the nonblocking forms): on device buffers
// and an MPI that cannot take them, the same host copies, a nonblocking one's request kept
// in the table with its copies as a receive's is (every buffer the call writes goes back
// when it completes). Each rank decides alone: every rank calls the same PMPI_* either way.
// Intercommunicators (buffers sized by the remote group) go to MPI as they are. The
// neighbourhood collectives (MPI_Neighbor_*) too, their spans counted by the topology's
// neighbours.
namespace {

bool collectiveWanted(MPI_Comm comm) {
  if (mpiLibraryCudaAware() != 0) return false;
  if (comm == MPI_COMM_NULL) return true;  // MPI_Reduce_local; MPI reports a null communicator
  int inter = 1;
  return MPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

int rankIn(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int sizeOf(MPI_Comm comm) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  return n;
}
size_t elements(int count) { return count > 0 ? static_cast<size_t>(count) : 0; }

// Runs a collective whose buffers s holds (issue(NULL) blocking, issue(req) nonblocking):
// a blocking one's written buffers copied back now, a nonblocking one's when its request
// completes.
template <class Issue>
int issueStaged(MPI_Comm comm, std::unique_ptr<StagedRequest> s, MPI_Request* req, const Issue& issue) {
  int r = issue(req);
  if (req == nullptr) {
    if (r == MPI_SUCCESS && s->stage.finish() != MPI_SUCCESS) r = copyFailed(comm);
    return posted(r, MCCL_MPI_BLOCKING, true, comm, std::move(s), req);
  }
  return posted(r, MCCL_MPI_NONBLOCKING, true, comm, std::move(s), req);
}

}  // namespace

int mccl::mpiStageKeepRequest(HostStage&& st, MPI_Comm comm, int rc, MPI_Request* req) {
  auto s = std::make_unique<StagedRequest>(std::move(st));
  return posted(rc, MCCL_MPI_NONBLOCKING, true, comm, std::move(s), req);
}

NCCL_API int mcclMpiStageGatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Request* req, int* rc) {
  if (!collectiveWanted(comm) || comm == MPI_COMM_NULL) return 0;
  auto s = std::make_unique<StagedRequest>();
  const void* hs = s->stage.in(sendbuf, mpiSpan(sendtype, elements(sendcount)));
  void* hr = rankIn(comm) == root ? s->stage.out(recvbuf, mpiSpanOfBlocks(recvtype, recvcounts, displs, sizeOf(comm)))
                                  : recvbuf;  // significant at the root only
  if (!s->stage.staged()) return 0;
  *rc = issueStaged(comm, std::move(s), req, [&](MPI_Request* r) {
    return r ? PMPI_Igatherv(hs, sendcount, sendtype, hr, recvcounts, displs, recvtype, root, comm, r)
             : PMPI_Gatherv(hs, sendcount, sendtype, hr, recvcounts, displs, recvtype, root, comm);
  });
  return 1;
}

NCCL_API int mcclMpiStageScatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, MPI_Request* req, int* rc) {
  if (!collectiveWanted(comm) || comm == MPI_COMM_NULL) return 0;
  auto s = std::make_unique<StagedRequest>();
  const void* hs = rankIn(comm) == root
                       ? s->stage.in(sendbuf, mpiSpanOfBlocks(sendtype, sendcounts, displs, sizeOf(comm)))
                       : sendbuf;
  void* hr = s->stage.out(recvbuf, mpiSpan(recvtype, elements(recvcount)));
  if (!s->stage.staged()) return 0;
  *rc = issueStaged(comm, std::move(s), req, [&](MPI_Request* r) {
    return r ? PMPI_Iscatterv(hs, sendcounts, displs, sendtype, hr, recvcount, recvtype, root, comm, r)
             : PMPI_Scatterv(hs, sendcounts, displs, sendtype, hr, recvcount, recvtype, root, comm);
  });
  return 1;
}

NCCL_API int mcclMpiStageScan(int exclusive, const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                              MPI_Comm comm, MPI_Request* req, int* rc) {
  if (!collectiveWanted(comm) || comm == MPI_COMM_NULL) return 0;
  auto s = std::make_unique<StagedRequest>();
  const MpiSpan sp = mpiSpan(dt, elements(count));
  const void* hs = s->stage.in(sendbuf, sp);
  void* hr = s->stage.out(recvbuf, sp);
  if (!s->stage.staged()) return 0;
  *rc = issueStaged(comm, std::move(s), req, [&](MPI_Request* r) {
    if (exclusive)
      return r ? PMPI_Iexscan(hs, hr, count, dt, op, comm, r) : PMPI_Exscan(hs, hr, count, dt, op, comm);
    return r ? PMPI_Iscan(hs, hr, count, dt, op, comm, r) : PMPI_Scan(hs, hr, count, dt, op, comm);
  });
  return 1;
}

NCCL_API int mcclMpiStageAlltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                   MPI_Request* req, int* rc) {
  if (!collectiveWanted(comm) || comm == MPI_COMM_NULL) return 0;
  const int n = sizeOf(comm);
  auto s = std::make_unique<StagedRequest>();
  const void* hs = s->stage.in(sendbuf, mpiSpanOfTypedBlocks(sendcounts, sdispls, sendtypes, n));
  void* hr = s->stage.out(recvbuf, mpiSpanOfTypedBlocks(recvcounts, rdispls, recvtypes, n));
  if (!s->stage.staged()) return 0;
  *rc = issueStaged(comm, std::move(s), req, [&](MPI_Request* r) {
    return r ? PMPI_Ialltoallw(hs, sendcounts, sdispls, sendtypes, hr, recvcounts, rdispls, recvtypes, comm, r)
             : PMPI_Alltoallw(hs, sendcounts, sdispls, sendtypes, hr, recvcounts, rdispls, recvtypes, comm);
  });
  return 1;
}

NCCL_API int mcclMpiStageReduceLocal(const void* inbuf, void* inoutbuf, int count, MPI_Datatype dt, MPI_Op op,
                                     int* rc) {
  if (!collectiveWanted(MPI_COMM_NULL)) return 0;
  auto s = std::make_unique<StagedRequest>();
  const MpiSpan sp = mpiSpan(dt, elements(count));
  const void* hi = s->stage.in(inbuf, sp);
  void* hio = s->stage.out(inoutbuf, sp);
  if (!s->stage.staged()) return 0;
  *rc = issueStaged(MPI_COMM_NULL, std::move(s), nullptr,
                    [&](MPI_Request*) { return PMPI_Reduce_local(hi, hio, count, dt, op); });
  return 1;
}

namespace {
// How many neighbours a topology communicator receives from (in) and sends to (out): a
// Cartesian one's 2 a dimension, a graph's neighbours of this rank, a distributed graph's
// in- and out-degree. False without a topology (MPI reports the call's error itself).
bool neighbours(MPI_Comm comm, int* in, int* out) {
  int kind = MPI_UNDEFINED;
  if (comm == MPI_COMM_NULL || MPI_Topo_test(comm, &kind) != MPI_SUCCESS) return false;
  int k = 0, weighted = 0;
  switch (kind) {
    case MPI_CART:
      if (MPI_Cartdim_get(comm, &k) != MPI_SUCCESS) return false;
      *in = *out = 2 * k;
      return true;
    case MPI_GRAPH:
      if (MPI_Graph_neighbors_count(comm, rankIn(comm), &k) != MPI_SUCCESS) return false;
      *in = *out = k;
      return true;
    case MPI_DIST_GRAPH:
      return MPI_Dist_graph_neighbors_count(comm, in, out, &weighted) == MPI_SUCCESS;
    default:
      return false;
  }
}
}  // namespace

NCCL_API void mcclMpiStageNeighbours(MPI_Comm comm, int* in, int* out) {
  if (!neighbours(comm, in, out)) *in = *out = 0;
}

namespace {
size_t times(int count, int blocks) { return elements(count) * static_cast<size_t>(blocks > 0 ? blocks : 0); }
}  // namespace

NCCL_API int mcclMpiStageNeighborAllgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req,
                                           int* rc) {
  int in = 0, out = 0;
  if (!collectiveWanted(comm) || !neighbours(comm, &in, &out)) return 0;
  auto s = std::make_unique<StagedRequest>();
  const void* hs = s->stage.in(sendbuf, mpiSpan(sendtype, elements(sendcount)));
  void* hr = s->stage.out(recvbuf, mpiSpan(recvtype, times(recvcount, in)));
  if (!s->stage.staged()) return 0;
  *rc = issueStaged(comm, std::move(s), req, [&](MPI_Request* r) {
    return r ? PMPI_Ineighbor_allgather(hs, sendcount, sendtype, hr, recvcount, recvtype, comm, r)
             : PMPI_Neighbor_allgather(hs, sendcount, sendtype, hr, recvcount, recvtype, comm);
  });
  return 1;
}

NCCL_API int mcclMpiStageNeighborAllgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                            const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                            MPI_Comm comm, MPI_Request* req, int* rc) {
  int in = 0, out = 0;
  if (!collectiveWanted(comm) || !neighbours(comm, &in, &out)) return 0;
  auto s = std::make_unique<StagedRequest>();
  const void* hs = s->stage.in(sendbuf, mpiSpan(sendtype, elements(sendcount)));
  void* hr = s->stage.out(recvbuf, mpiSpanOfBlocks(recvtype, recvcounts, displs, in));
  if (!s->stage.staged()) return 0;
  *rc = issueStaged(comm, std::move(s), req, [&](MPI_Request* r) {
    return r ? PMPI_Ineighbor_allgatherv(hs, sendcount, sendtype, hr, recvcounts, displs, recvtype, comm, r)
             : PMPI_Neighbor_allgatherv(hs, sendcount, sendtype, hr, recvcounts, displs, recvtype, comm);
  });
  return 1;
}

NCCL_API int mcclMpiStageNeighborAlltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req,
                                          int* rc) {
  int in = 0, out = 0;
  if (!collectiveWanted(comm) || !neighbours(comm, &in, &out)) return 0;
  auto s = std::make_unique<StagedRequest>();
  const void* hs = s->stage.in(sendbuf, mpiSpan(sendtype, times(sendcount, out)));
  void* hr = s->stage.out(recvbuf, mpiSpan(recvtype, times(recvcount, in)));
  if (!s->stage.staged()) return 0;
  *rc = issueStaged(comm, std::move(s), req, [&](MPI_Request* r) {
    return r ? PMPI_Ineighbor_alltoall(hs, sendcount, sendtype, hr, recvcount, recvtype, comm, r)
             : PMPI_Neighbor_alltoall(hs, sendcount, sendtype, hr, recvcount, recvtype, comm);
  });
  return 1;
}

NCCL_API int mcclMpiStageNeighborAlltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                           MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                           MPI_Request* req, int* rc) {
  int in = 0, out = 0;
  if (!collectiveWanted(comm) || !neighbours(comm, &in, &out)) return 0;
  auto s = std::make_unique<StagedRequest>();
  const void* hs = s->stage.in(sendbuf, mpiSpanOfBlocks(sendtype, sendcounts, sdispls, out));
  void* hr = s->stage.out(recvbuf, mpiSpanOfBlocks(recvtype, recvcounts, rdispls, in));
  if (!s->stage.staged()) return 0;
  *rc = issueStaged(comm, std::move(s), req, [&](MPI_Request* r) {
    return r ? PMPI_Ineighbor_alltoallv(hs, sendcounts, sdispls, sendtype, hr, recvcounts, rdispls, recvtype, comm, r)
             : PMPI_Neighbor_alltoallv(hs, sendcounts, sdispls, sendtype, hr, recvcounts, rdispls, recvtype, comm);
  });
  return 1;
}

NCCL_API int mcclMpiStageNeighborAlltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                           MPI_Request* req, int* rc) {
  int in = 0, out = 0;
  if (!collectiveWanted(comm) || !neighbours(comm, &in, &out)) return 0;
  auto s = std::make_unique<StagedRequest>();
  const void* hs = s->stage.in(sendbuf, mpiSpanOfTypedBlocks(sendcounts, sdispls, sendtypes, out));
  void* hr = s->stage.out(recvbuf, mpiSpanOfTypedBlocks(recvcounts, rdispls, recvtypes, in));
  if (!s->stage.staged()) return 0;
  *rc = issueStaged(comm, std::move(s), req, [&](MPI_Request* r) {
    return r ? PMPI_Ineighbor_alltoallw(hs, sendcounts, sdispls, sendtypes, hr, recvcounts, rdispls, recvtypes, comm,
                                        r)
             : PMPI_Neighbor_alltoallw(hs, sendcounts, sdispls, sendtypes, hr, recvcounts, rdispls, recvtypes, comm);
  });
  return 1;
}
