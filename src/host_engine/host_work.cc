#include "host_engine/host_work.h"

#include <sched.h>

#include <cstdio>
#include <cstring>

#include "algorithms/schedule_dump.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/idle.h"
#include "core/knobs.h"
#include "core/numeric.h"
#include "core/types.h"
#include "host_engine/reduce.h"

namespace mccl {

HostWork::HostWork(ncclComm* comm, HostTransport* transport, const std::atomic<bool>* aborted, ShmColls* shm,
                   const MpiCollRoute& route)
    : comm_(comm), tr_(transport), aborted_(aborted), route_(route), shm_(shm) {}

ncclResult_t HostWork::init(std::vector<OpDesc>& ops) {
  const bool dump = knobBool(Knob::DumpSchedule);
  std::vector<int> chanQueue(kMaxChannels, -1);
  std::vector<int> p2pQueue(2 * static_cast<size_t>(comm_->nranks), -1);
  ops_.reserve(ops.size());
  for (OpDesc& op : ops) {
    if (shm_->use(op)) {
      shm_->add(shmOps_, op);
      continue;
    }
    if (route_.takes(comm_, op)) {
      MCCL_CHECK(mpi_.start(comm_, route_.mpiComm, op));
      continue;
    }
    if (op.isWholeP2pCall())  // the API asked runsWhole, whose answer does not change
      return MCCL_ERR(ncclInternalError, comm_, "%s seq %llu was queued whole but neither shared memory nor MPI takes it",
                      opKindName(op.kind), static_cast<unsigned long long>(op.seq));
    OpExec e;
    e.op = op;
    e.esize = datatypeSize(op.datatype);
    PlanChoice choice = choosePlan(comm_, op, tr_->layout().slotBytes);
    e.sched = makeSchedule(comm_, op, choice);
    e.in = static_cast<const char*>(op.sendbuff);
    e.out = static_cast<char*>(op.recvbuff);
    if (op.hasReduction() && op.red.kind == RedKind::PreMulSum) {
      e.premul = true;
      e.scalarBits = op.red.scalarBits;
      // ncclScalarDevice on a host communicator: read when the operation runs.
      if (op.red.scalarPtr) std::memcpy(&e.scalarBits, op.red.scalarPtr, e.esize);
    }
    int64_t scratch = scratchElems(e.sched);
    if (scratch > 0)
      e.scratch.assign(static_cast<size_t>(e.sched.nchannels * numLanes(e.sched)),
                       std::vector<char>(static_cast<size_t>(scratch) * e.esize));
    if (dump)
      std::printf("[mccl rank %d] seq %llu %s", comm_->rank, static_cast<unsigned long long>(op.seq),
                  dumpSchedule(e.sched).c_str());
    // Connections this operation needs (pure rank arithmetic, no step walking).
    const ConnClass cls = connClassOf(e.sched.algo);
    int idx = static_cast<int>(ops_.size());
    ops_.push_back(std::move(e));
    const Schedule& s = ops_.back().sched;
    if (op.isP2p()) {
      bool send = op.kind == OpKind::Send;
      if (op.count > 0) MCCL_CHECK(tr_->need(ConnKey{op.root, 0, ConnClass::P2p, send}));
      int& q = p2pQueue[2 * op.root + (send ? 1 : 0)];
      if (q < 0) {
        q = static_cast<int>(queues_.size());
        queues_.emplace_back();
      }
      queues_[q].ops.push_back(idx);
      continue;
    }
    for (int c = 0; c < s.nchannels; ++c) {
      int& q = chanQueue[c];
      if (q < 0) {
        q = static_cast<int>(queues_.size());
        queues_.emplace_back();
        queues_.back().channel = c;
      }
      queues_[q].ops.push_back(idx);
      if (op.count == 0 || s.nranks == 1) continue;
      // The peers of channel c: look at the first step of every lane and every step
      // kind the schedule can produce for this rank.
      for (int lane = 0; lane < numLanes(s); ++lane) {
        int64_t steps = numSteps(s, c, lane);
        int64_t probe = s.algo == Algo::Ring && s.coll == Coll::AllReduce ? 2 * s.nranks - 1
                        : s.algo == Algo::Ring                             ? s.nranks
                        : s.algo == Algo::Binomial                         ? binomialStepsPerChunk(s)
                                                                           : 1;
        for (int64_t i = 0; i < steps && i < probe; ++i) {
          Step st = stepAt(s, c, lane, i);
          for (int k = 0; k < st.nrecv; ++k) MCCL_CHECK(tr_->need(ConnKey{st.recvPeer[k], c, cls, false}));
          for (int k = 0; k < st.nsend; ++k) MCCL_CHECK(tr_->need(ConnKey{st.sendPeer[k], c, cls, true}));
        }
      }
    }
  }
  lastProgress_ = std::chrono::steady_clock::now();
  return ncclSuccess;
}

ncclResult_t HostWork::tryStep(OpExec& e, int channel, int lane, const Step& st, bool* ran) {
  *ran = false;
  if (st.count == 0) {
    *ran = true;
    return ncclSuccess;
  }
  const Schedule& s = e.sched;
  const ConnClass cls = connClassOf(s.algo);
  const int ch = cls == ConnClass::P2p ? 0 : channel;
  const size_t bytes = static_cast<size_t>(st.count) * e.esize;
  FifoRecv* rc[kMaxStepPeers];
  FifoSend* sc[kMaxStepPeers];
  CombineArgs a{};
  for (int k = 0; k < st.nrecv; ++k) {
    rc[k] = tr_->recvConn(ConnKey{st.recvPeer[k], ch, cls, false});
    size_t got = 0;
    const void* p = rc[k] ? rc[k]->peek(&got) : nullptr;
    if (!p) {
      blocked_ = "waiting for data from rank " + std::to_string(st.recvPeer[k]);
      return ncclSuccess;
    }
    if (got != bytes)
      return MCCL_ERR(ncclInvalidUsage, comm_,
                      "%s seq %llu: rank %d sent %zu bytes where rank %d expected %zu (do all ranks "
                      "pass the same count, datatype and root?)",
                      opKindName(e.op.kind), static_cast<unsigned long long>(e.op.seq), st.recvPeer[k], got,
                      comm_->rank, bytes);
    a.in[a.nin++] = p;
  }
  int nout = 0;
  void* dst = nullptr;
  auto bufPtr = [&](Buf b, int64_t off) -> char* {
    switch (b) {
      case Buf::Input: return const_cast<char*>(e.in) + off * static_cast<int64_t>(e.esize);
      case Buf::Output: return e.out + off * static_cast<int64_t>(e.esize);
      case Buf::Scratch: return e.scratch[static_cast<size_t>(channel * numLanes(s) + lane)].data() + off * static_cast<int64_t>(e.esize);
      default: return nullptr;
    }
  };
  if (st.dst != Buf::None) a.out[nout++] = dst = bufPtr(st.dst, st.dstOffset);
  for (int k = 0; k < st.nsend; ++k) {
    sc[k] = tr_->sendConn(ConnKey{st.sendPeer[k], ch, cls, true});
    void* slot = sc[k] ? sc[k]->acquire() : nullptr;
    if (!slot) {
      blocked_ = "waiting for rank " + std::to_string(st.sendPeer[k]) + " to free a slot";
      return ncclSuccess;
    }
    if (bytes > sc[k]->maxBytes())
      return MCCL_ERR(ncclInvalidUsage, comm_,
                      "rank %d's FIFO slots (%zu bytes) are smaller than this rank's chunk (%zu): "
                      "NCCL_BUFFSIZE and MCCL_FIFO_SLOTS must match on every rank",
                      st.sendPeer[k], sc[k]->maxBytes(), bytes);
    a.out[nout++] = slot;
  }
  (void)dst;
  a.op = &e.op.red;
  a.type = e.op.datatype;
  a.src = st.src != Buf::None ? bufPtr(st.src, st.srcOffset) : nullptr;
  a.premulSrc = e.premul && st.src == Buf::Input;
  a.scalarBits = e.scalarBits;
  a.final = st.final;
  a.nout = nout;
  a.count = static_cast<size_t>(st.count);
  hostCombine(a);
  for (int k = 0; k < st.nsend; ++k) MCCL_CHECK(sc[k]->post(bytes));
  for (int k = 0; k < st.nrecv; ++k) MCCL_CHECK(rc[k]->release());
  *ran = true;
  return ncclSuccess;
}

ncclResult_t HostWork::advance(Queue& q, bool* progressed) {
  while (q.cur < q.ops.size()) {
    OpExec& e = ops_[q.ops[q.cur]];
    const int lanes = numLanes(e.sched);
    if (!q.started) {
      q.lanes.assign(static_cast<size_t>(lanes), Lane{});
      for (int l = 0; l < lanes; ++l) q.lanes[l].total = numSteps(e.sched, q.channel, l);
      q.started = true;
    }
    bool opDone = true;
    for (int l = 0; l < lanes; ++l) {
      Lane& lane = q.lanes[l];
      for (int budget = 64; lane.next < lane.total && budget > 0; --budget) {
        Step st = stepAt(e.sched, q.channel, l, lane.next);
        bool ran = false;
        MCCL_CHECK(tryStep(e, q.channel, l, st, &ran));
        if (!ran) break;
        ++lane.next;
        *progressed = true;
      }
      if (lane.next < lane.total) opDone = false;
    }
    if (!opDone) return ncclSuccess;
    ++q.cur;
    q.started = false;
  }
  return ncclSuccess;
}

ncclResult_t HostWork::progress(bool* done) {
  *done = false;
  MCCL_CHECK(comm_->checkPeers());
  if (aborted_->load()) return MCCL_ERR(ncclRemoteError, comm_, "the communicator was aborted");
  const bool engine = !queues_.empty();
  if (engine) MCCL_CHECK(tr_->progress());
  bool progressed = false, allDone = true;
  for (Queue& q : queues_) {
    MCCL_CHECK(advance(q, &progressed));
    if (q.cur < q.ops.size()) allDone = false;
  }
  MCCL_CHECK(shm_->advance(shmOps_, &progressed));
  if (!shmOps_.done()) allDone = false;
  if (!mpi_.empty()) {
    bool mpiDone = false;
    MCCL_CHECK(mpi_.test(comm_, &mpiDone, &progressed));
    if (!mpiDone) allDone = false;
  }
  auto now = std::chrono::steady_clock::now();
  if (progressed) {
    lastProgress_ = now;
    warned_ = false;
    idlePasses_ = 0;
  } else if (++idlePasses_ > static_cast<int>(idlePollsBeforeYield(comm_->idleYieldSoon) / 4)) {
    // Nothing moved for a while: let a peer that shares this core run (where ranks
    // outnumber the node's CPUs, soon; core/idle.h).
    sched_yield();
  }
  if (allDone) {
    // Every step ran; wait until the last puts have left this process.
    bool quiet = !engine;
    if (engine) MCCL_CHECK(tr_->quiescent(&quiet));
    if (quiet) {
      *done = true;
      return ncclSuccess;
    }
  }
  double idle = std::chrono::duration<double>(now - lastProgress_).count();
  int64_t warnAfter = knobInt(Knob::WarnAfter), timeout = knobInt(Knob::Timeout);
  if (!warned_ && warnAfter > 0 && idle > static_cast<double>(warnAfter)) {
    warned_ = true;
    logReport("rank %d: no progress for %.0f s (MCCL_WARN_AFTER) in %s", comm_->rank, idle, describe().c_str());
  }
  if (timeout > 0 && idle > static_cast<double>(timeout))
    return MCCL_ERR(ncclRemoteError, comm_, "rank %d timed out after %lld s (MCCL_TIMEOUT): %s", comm_->rank,
                    static_cast<long long>(timeout), describe().c_str());
  return ncclSuccess;
}

std::string HostWork::describe() const {
  if (!shmOps_.done()) return shmOps_.describe();
  std::string onMpi = mpi_.describe();
  if (!onMpi.empty()) return onMpi;
  for (const Queue& q : queues_) {
    if (q.cur >= q.ops.size()) continue;
    const OpExec& e = ops_[q.ops[q.cur]];
    char buf[256];
    int64_t next = 0, total = 0;
    for (const Lane& l : q.lanes) next += l.next, total += l.total;
    std::snprintf(buf, sizeof buf, "%s seq %llu (%zu x %s, %s) channel %d step %lld/%lld, %s",
                  opKindName(e.op.kind), static_cast<unsigned long long>(e.op.seq), e.op.count,
                  datatypeName(e.op.datatype), algoName(e.sched.algo), q.channel, static_cast<long long>(next),
                  static_cast<long long>(total), blocked_.c_str());
    return buf;
  }
  return "completing";
}

}  // namespace mccl
