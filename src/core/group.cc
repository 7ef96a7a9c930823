#include "core/group.h"

#include <sched.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "bootstrap_mpi/bootstrap_mpi.h"
#include "core/comm.h"
#include "core/datapath.h"
#include "core/error.h"
#include "core/idle.h"
#include "core/init.h"
#include "core/planner.h"

namespace mccl {
namespace {

struct CommOps {
  ncclComm* comm;
  std::vector<OpDesc> ops;
};

struct CommSetup {
  ncclComm* comm;
  std::vector<std::function<ncclResult_t()>> calls;
};

struct GroupState {
  ncclResult_t error = ncclSuccess;
  std::vector<ncclComm*> inits;
  std::vector<CommSetup> setups;  // in order of first appearance
  std::vector<CommOps> work;      // in order of first appearance
  std::vector<std::function<void()>> after;
  // The last group's operation list, emptied: the next group's first communicator takes it
  // with its capacity (a malloc, a realloc and their frees a group otherwise: a tenth of a
  // small host Send/Recv pair's time).
  std::vector<OpDesc> spareOps;

  void clear() {
    error = ncclSuccess;
    inits.clear();
    setups.clear();
    work.clear();
    after.clear();
  }
};

// Runs a finished group's `after` functions when it goes out of scope (every return).
struct RunAfter {
  std::vector<std::function<void()>>& fns;
  ~RunAfter() {
    for (auto& f : fns) f();
  }
};

thread_local GroupState tlsGroup;
// The nesting depth of ncclGroupStart, apart from the lists: a thread_local with a
// constructor is reached through a wrapper that checks its initialisation (two TLS lookups
// a use), a plain int directly, and every call of the data path asks for the depth.
thread_local int tlsDepth = 0;

// Lists the works of one ncclGroupEnd on their communicators (comm->activeWorks) for as
// long as they run.
class ActiveWorks {
 public:
  ActiveWorks(std::vector<CommOps>& work, std::vector<std::unique_ptr<Work>>& works, const std::vector<bool>& finished)
      : work_(work), works_(works) {
    for (size_t i = 0; i < works.size(); ++i) {
      if (finished[i]) continue;
      std::lock_guard<std::mutex> lock(work[i].comm->activeMu);
      work[i].comm->activeWorks.push_back(works[i].get());
      listed_.push_back(i);
    }
  }
  ~ActiveWorks() {
    for (size_t i : listed_) unlist(i);
  }
  void remove(size_t i) {
    auto it = std::find(listed_.begin(), listed_.end(), i);
    if (it == listed_.end()) return;
    listed_.erase(it);
    unlist(i);
  }

 private:
  void unlist(size_t i) {
    ncclComm* c = work_[i].comm;
    std::lock_guard<std::mutex> lock(c->activeMu);
    auto& v = c->activeWorks;
    v.erase(std::remove(v.begin(), v.end(), works_[i].get()), v.end());
  }
  std::vector<CommOps>& work_;
  std::vector<std::unique_ptr<Work>>& works_;
  std::vector<size_t> listed_;
};

// Runs the deferred inits of the group together (they rendezvous with each other).
ncclResult_t runInits(std::vector<ncclComm*>& inits) {
  ncclResult_t first = ncclSuccess;
  bool anyNonblocking = false;
  for (ncclComm* c : inits) c->initTask->startThread();
  for (ncclComm* c : inits) {
    if (!c->config.blocking) {
      anyNonblocking = true;
      continue;
    }
    c->initTask->join();
    ncclResult_t r = c->initTask->result();
    c->initTask.reset();
    if (r != ncclSuccess && first == ncclSuccess) first = r;
  }
  if (first == ncclSuccess && anyNonblocking) return ncclInProgress;
  return first;
}

// Runs the group's deferred setup calls: each communicator's in order, the communicators
// at once (one thread each when there are several), since the calls rendezvous across
// ranks that this thread may hold more than one of.
ncclResult_t runSetups(std::vector<CommSetup>& setups) {
  auto runOne = [](CommSetup& cs) {
    ncclResult_t first = ncclSuccess;
    for (auto& call : cs.calls) {
      ncclResult_t r = call();
      if (r != ncclSuccess && first == ncclSuccess) first = r;
    }
    return first;
  };
  if (setups.size() == 1) return runOne(setups[0]);
  std::vector<ncclResult_t> results(setups.size(), ncclSuccess);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < setups.size(); ++i)
    threads.emplace_back([&, i] { results[i] = runOne(setups[i]); });
  for (std::thread& t : threads) t.join();
  for (ncclResult_t r : results)
    if (r != ncclSuccess) return r;
  return ncclSuccess;
}

ncclResult_t runWork(std::vector<CommOps>& work) {
  std::vector<std::unique_ptr<Work>> works(work.size());
  std::vector<bool> finished(work.size(), false);
  ncclResult_t first = ncclSuccess;
  for (size_t i = 0; i < work.size(); ++i) {
    ncclComm* c = work[i].comm;
    ncclResult_t r = c->checkUsable("ncclGroupEnd");
    if (r == ncclSuccess) {
      // Submitting may exchange connection records with peers (lazy connect); a peer lost
      // there is named like one lost while the work runs.
      r = c->dataPath->submit(work[i].ops, &works[i]);
      if (r != ncclSuccess) r = c->attributeRemoteError(r);
    }
    if (r != ncclSuccess) {
      finished[i] = true;
      if (first == ncclSuccess) first = r;
    }
  }
  size_t left = 0;
  for (size_t i = 0; i < work.size(); ++i) left += finished[i] ? 0 : 1;
  // Visible to hang reports while they run.
  ActiveWorks active(work, works, finished);
  // Communicators that ride on MPI keep MPI progressing while they wait (guide section
  // "MPI Progress"): a peer may need this rank's MPI calls to reach its own ncclGroupEnd.
  std::vector<MPI_Comm> mpiComms;
  for (CommOps& w : work) {
    auto* mb = dynamic_cast<MpiBootstrap*>(w.comm->bootstrap.get());
    if (mb) mpiComms.push_back(mb->comm());
  }
  if (!mpiComms.empty() && !MpiBootstrap::callerMayUseMpi()) mpiComms.clear();
  // Past this many passes every pass yields the core (core/idle.h): soon if any
  // communicator's ranks outnumber the node's CPUs.
  uint64_t yieldAfter = kIdlePollsLate;
  for (CommOps& w : work) yieldAfter = std::min<uint64_t>(yieldAfter, idlePollsBeforeYield(w.comm->idleYieldSoon));
  uint64_t pass = 0;
  while (left > 0) {
    for (size_t i = 0; i < works.size(); ++i) {
      if (finished[i]) continue;
      bool done = false;
      ncclResult_t r;
      {
        std::lock_guard<std::mutex> lock(works[i]->stateMu);
        r = works[i]->progress(&done);
      }
      if (r != ncclSuccess) {
        r = work[i].comm->attributeRemoteError(r);
        if (first == ncclSuccess) first = r;
        done = true;
        work[i].comm->fail(r);
      }
      if (done) {
        finished[i] = true;
        active.remove(i);
        --left;
      }
    }
    ++pass;
    if (!mpiComms.empty() && (pass & 15) == 0)
      for (MPI_Comm mc : mpiComms) MpiBootstrap::progress(mc);
    if (pass > yieldAfter) sched_yield();
  }
  return first;
}

// Why simInfo is not an ncclSimInfo_t from NCCL_SIM_INFO_INITIALIZER, or null when it is.
const char* simInfoProblem(const ncclSimInfo_t* simInfo) {
  if (simInfo == nullptr) return "is NULL";
  if (simInfo->magic != 0x74685283u) return "has the wrong magic number";
  if (simInfo->size < sizeof(ncclSimInfo_t) || simInfo->size > 4096) return "has the wrong size";
  // The layout is that of NCCL 2.22; any later version code is accepted.
  if (simInfo->version < 22200 || simInfo->version > 99999) return "has an invalid version code";
  return nullptr;
}

}  // namespace

int groupDepth() { return tlsDepth; }

ncclResult_t groupStart() {
  ++tlsDepth;
  return ncclSuccess;
}

void groupAddInit(ncclComm* comm) { tlsGroup.inits.push_back(comm); }

void groupAddSetup(ncclComm* comm, std::function<ncclResult_t()> call) {
  for (CommSetup& cs : tlsGroup.setups)
    if (cs.comm == comm) {
      cs.calls.push_back(std::move(call));
      return;
    }
  tlsGroup.setups.push_back(CommSetup{comm, {}});
  tlsGroup.setups.back().calls.push_back(std::move(call));
}

void groupAddAfter(std::function<void()> fn) { tlsGroup.after.push_back(std::move(fn)); }

void groupAddOp(ncclComm* comm, const OpDesc& op) {
  for (CommOps& w : tlsGroup.work)
    if (w.comm == comm) {
      w.ops.push_back(op);
      return;
    }
  tlsGroup.work.push_back(CommOps{comm, std::move(tlsGroup.spareOps)});
  tlsGroup.spareOps = std::vector<OpDesc>();
  tlsGroup.work.back().ops.push_back(op);
}

void groupSetError(ncclResult_t r) {
  if (tlsDepth > 0 && tlsGroup.error == ncclSuccess) tlsGroup.error = r;
}

void groupForget(ncclComm* comm) {
  GroupState& g = tlsGroup;
  g.inits.erase(std::remove(g.inits.begin(), g.inits.end(), comm), g.inits.end());
  g.setups.erase(std::remove_if(g.setups.begin(), g.setups.end(),
                                [comm](const CommSetup& cs) { return cs.comm == comm; }),
                 g.setups.end());
  g.work.erase(std::remove_if(g.work.begin(), g.work.end(),
                              [comm](const CommOps& w) { return w.comm == comm; }),
               g.work.end());
}

ncclResult_t groupEnd(bool simulate, ncclSimInfo_t* simInfo) {
  GroupState& g = tlsGroup;
  const char* call = simulate ? "ncclGroupSimulateEnd" : "ncclGroupEnd";
  const char* badSim = simulate ? simInfoProblem(simInfo) : nullptr;
  if (badSim && tlsDepth <= 1) {
    if (tlsDepth == 0)
      return MCCL_ERR(ncclInvalidArgument, nullptr,
                      "%s: simInfo %s; initialise it with NCCL_SIM_INFO_INITIALIZER", call, badSim);
    tlsDepth = 0;
    // As NCCL: the group ends here, its operations are dropped.
    GroupState mine = std::move(g);
    g = GroupState();
    RunAfter after{mine.after};
    if (!mine.inits.empty()) runInits(mine.inits);
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: simInfo %s; initialise it with NCCL_SIM_INFO_INITIALIZER (the group was dropped)",
                    call, badSim);
  }
  if (tlsDepth == 0)
    return MCCL_ERR(ncclInvalidUsage, nullptr, "%s called without a matching ncclGroupStart", call);
  if (badSim) {
    // An inner group: the outer one fails at its end and runs nothing.
    --tlsDepth;
    groupSetError(ncclInvalidArgument);
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: simInfo %s; initialise it with NCCL_SIM_INFO_INITIALIZER", call, badSim);
  }
  if (--tlsDepth > 0) return ncclSuccess;
  if (simulate) {
    double us = 0;
    for (CommOps& w : g.work) us = std::max(us, estimateGroupTimeUs(w.comm, w.ops));
    simInfo->estimatedTime = static_cast<float>(us);
  }

  // Operations on one communicator and nothing else, the usual group: its data path may run
  // it on a lean path of its own, from this thread's lists in place: not moved out into a
  // GroupState and back, one of the small costs that together kept a small host Send/Recv
  // pair below MPI_Sendrecv (docs/DESIGN.md, "Small Send/Recv groups").
  bool triedAlone = false;
  if (!simulate && g.error == ncclSuccess && g.inits.empty() && g.setups.empty() && g.after.empty() &&
      g.work.size() == 1) {
    triedAlone = true;
    ncclComm* c = g.work[0].comm;
    if (c->checkUsable(call) == ncclSuccess) {
      // Once run (an exception too), the lists are emptied, keeping their capacity for the
      // thread's next group; not run, they go the general way below.
      struct EmptyIfRan {
        GroupState& g;
        bool ran = true;
        ~EmptyIfRan() {
          if (!ran) return;
          g.spareOps = std::move(g.work[0].ops);
          g.spareOps.clear();
          g.work.clear();
        }
      } lists{g};
      ncclResult_t r;
      lists.ran = c->dataPath->runGroupAlone(lists.g.work[0].ops, &r);
      if (lists.ran) {
        if (r == ncclSuccess) return ncclSuccess;
        r = c->attributeRemoteError(r);
        c->fail(r);
        return r;
      }
    }
  }
  GroupState mine = std::move(g);
  g = GroupState();
  // Hands the first communicator's operation list (emptied) and the work list back to the
  // thread's next group when this one is done, unless a group was started meanwhile.
  struct Recycle {
    GroupState& mine;
    ~Recycle() {
      GroupState& next = tlsGroup;
      if (tlsDepth != 0 || !next.work.empty() || mine.work.empty()) return;
      next.spareOps = std::move(mine.work[0].ops);
      next.spareOps.clear();
      mine.work.clear();
      next.work = std::move(mine.work);
    }
  } recycle{mine};
  RunAfter after{mine.after};
  if (mine.error != ncclSuccess) {
    // The operations of a failed group are dropped; deferred inits still happen so the
    // other ranks do not wait for this one forever.
    if (!mine.inits.empty()) runInits(mine.inits);
    return MCCL_ERR(mine.error, nullptr,
                    "%s: an operation inside the group failed (%s); the group was not executed",
                    call, resultString(mine.error));
  }
  ncclResult_t res = ncclSuccess;
  if (!mine.inits.empty()) res = runInits(mine.inits);
  if (res != ncclSuccess && res != ncclInProgress) return res;
  // Setup calls (windows, device communicators) run in a simulated group too: they are
  // not operations, and their peers made them in their own groups.
  if (!mine.setups.empty()) {
    ncclResult_t s = runSetups(mine.setups);
    if (s != ncclSuccess) return s;
  }
  if (simulate) return res;
  if (!triedAlone && mine.work.size() == 1 && mine.work[0].comm->checkUsable(call) == ncclSuccess) {
    // One communicator: its data path may run the group on a lean path of its own.
    ncclComm* c = mine.work[0].comm;
    ncclResult_t r;
    if (c->dataPath->runGroupAlone(mine.work[0].ops, &r)) {
      if (r == ncclSuccess) return res;
      r = c->attributeRemoteError(r);
      c->fail(r);
      return r;
    }
  }
  if (!mine.work.empty()) {
    ncclResult_t w = runWork(mine.work);
    if (w != ncclSuccess) return w;
  }
  return res;
}

ncclResult_t runSingleOp(ncclComm* comm, const OpDesc& op) {
  ncclResult_t r;
  if (comm->dataPath->runAlone(op, &r)) {
    if (r != ncclSuccess) {
      r = comm->attributeRemoteError(r);
      comm->fail(r);
    }
    return r;
  }
  std::vector<CommOps> work{CommOps{comm, {op}}};
  return runWork(work);
}

}  // namespace mccl
