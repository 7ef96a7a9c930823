// Generalized MPI requests completed from Open MPI's progress engine (mpi_requests.h).
//
// An entry lives from startMpiRequest until MPI frees its request. Open MPI calls the free
// callback only once a generalized request is both complete and freed by the program, which
// may happen inside MPI_Grequest_complete itself (a request freed before it completed); so
// progress takes its done entries off the pending list under the lock, completes them with
// the lock released, and never touches an entry after MPI_Grequest_complete returns. An MPI
// that called the free callback before completion instead (the standard allows either for
// MPI_Request_free) is handled too: the entry is marked and deleted after it completes.
#include "bootstrap_mpi/mpi_requests.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "core/debug.h"

namespace mccl {
namespace {

struct Entry {
  std::unique_ptr<MpiPendingWork> work;
  MPI_Request req = MPI_REQUEST_NULL;
  int result = MpiPendingWork::kNotYet;
  bool completing = false;  // off the pending list, MPI_Grequest_complete called or about to be
  bool freedEarly = false;  // MPI's free callback came before completion
};

struct Table {
  std::mutex mu;
  std::vector<Entry*> pending;
  std::atomic<size_t> pendingCount{0};
  std::atomic<size_t> live{0};
  std::once_flag hookOnce;
  bool hooked = false;
};

Table& table() {
  static Table* t = new Table();  // outlives MPI_Finalize and static destructors
  return *t;
}

void destroy(Entry* e) {
  delete e;
  table().live.fetch_sub(1);
}

int queryFn(void* state, MPI_Status* status) {
  auto* e = static_cast<Entry*>(state);
  const int rc = e->result == MpiPendingWork::kNotYet ? MPI_SUCCESS : e->result;
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = rc;
  return rc;
}

int freeFn(void* state) {
  auto* e = static_cast<Entry*>(state);
  Table& t = table();
  {
    std::lock_guard<std::mutex> lock(t.mu);
    if (!e->completing) {  // freed before it completed: progress deletes it when it does
      e->freedEarly = true;
      return MPI_SUCCESS;
    }
  }
  destroy(e);
  return MPI_SUCCESS;
}

// A collective cannot be cancelled (MPI calls cancelling one erroneous); the request
// completes when its work does.
int cancelFn(void*, int) { return MPI_SUCCESS; }

int hook() {
  if (table().pendingCount.load(std::memory_order_relaxed) == 0) return 0;
  return progressMpiRequests(false);
}

void installHook() {
  Table& t = table();
  std::call_once(t.hookOnce, [&t] {
    using Register = int (*)(int (*)());
    auto reg = reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "opal_progress_register"));
    t.hooked = reg != nullptr && reg(hook) == 0;
    INFO(kLogInit, "MPI requests: %s", t.hooked ? "completed from opal_progress" : "no progress hook (not Open MPI)");
  });
}

}  // namespace

bool mpiRequestsAvailable() {
  installHook();
  return table().hooked;
}

namespace {
// MPI's generalized request for e, counted live; e deleted where MPI refuses.
int grequestFor(Entry* e) {
  table().live.fetch_add(1);
  const int rc = MPI_Grequest_start(queryFn, freeFn, cancelFn, e, &e->req);
  if (rc != MPI_SUCCESS) destroy(e);
  return rc;
}
}  // namespace

int startMpiRequest(std::unique_ptr<MpiPendingWork> work, MPI_Request* req) {
  if (!mpiRequestsAvailable()) return MPI_ERR_INTERN;
  Table& t = table();
  auto* e = new Entry();
  e->work = std::move(work);
  const int rc = grequestFor(e);
  if (rc != MPI_SUCCESS) return rc;
  const MPI_Request r = e->req;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    t.pending.push_back(e);
    t.pendingCount.fetch_add(1);
  }
  *req = r;
  return MPI_SUCCESS;
}

int completedMpiRequest(int result, MPI_Request* req) {
  auto* e = new Entry();
  e->result = result;
  e->completing = true;  // never pending: MPI's free callback deletes it
  const int rc = grequestFor(e);
  if (rc != MPI_SUCCESS) return rc;
  *req = e->req;
  return MPI_Grequest_complete(*req);  // the entry is MPI's from here
}

int progressMpiRequests(bool wait) {
  Table& t = table();
  std::vector<Entry*> done;
  {
    std::unique_lock<std::mutex> lock(t.mu, std::defer_lock);
    if (wait) lock.lock();
    else if (!lock.try_lock()) return 0;
    for (Entry* e : t.pending) {
      e->result = e->work->poll();
      if (e->result != MpiPendingWork::kNotYet) done.push_back(e);
    }
    if (done.empty()) return 0;
    for (Entry* e : done) e->completing = true;
    t.pending.erase(std::remove_if(t.pending.begin(), t.pending.end(), [](Entry* e) { return e->completing; }),
                    t.pending.end());
    t.pendingCount.store(t.pending.size());
  }
  for (Entry* e : done) {
    const bool freedEarly = e->freedEarly;  // set only while it was pending, under the lock
    if (MPI_Grequest_complete(e->req) != MPI_SUCCESS) WARN("MPI_Grequest_complete failed");
    if (freedEarly) destroy(e);  // else MPI's free callback deletes it (maybe already has)
  }
  return static_cast<int>(done.size());
}

size_t liveMpiRequests() { return table().live.load(); }
size_t pendingMpiRequests() { return table().pendingCount.load(); }

}  // namespace mccl
