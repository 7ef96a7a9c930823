// Dead and frozen peers. Each case forks its ranks (host communicators over the unique-id
// bootstrap, no mpirun: mpirun would end the whole job when one rank dies), kills or
// stops one of them at a chosen moment, and checks that every survivor
//   * gets ncclRemoteError within MCCL_TIMEOUT of the fault (MCCL_TIMEOUT=4 here),
//   * finds the lost rank (and its host) named in ncclGetLastError,
//   * leaves with ncclCommAbort (or ncclCommDestroy) within 5 s,
// and that no process is left hanging: the parent gives every case a hard deadline and
// kills what is left. MCCL_FAULT_REPS (default 20) repetitions of every case (half for
// SIGSTOP, whose detection waits out the same silence every time).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "nccl.h"

namespace {

constexpr double kTimeout = 4.0;        // MCCL_TIMEOUT for the ranks
constexpr double kSlack = 1.5;          // scheduling on a loaded 2-core machine
constexpr double kAbortLimit = 5.0;     // ncclCommAbort must return within this
constexpr double kCaseDeadline = 40.0;  // the parent's hard limit for one case

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // one clock for every process of the machine
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

enum class Fault {
  KillInInit,      // SIGKILL while the ranks initialise
  KillBefore,      // SIGKILL after init, before the first collective
  KillDuring,      // SIGKILL while collectives run
  KillBetween,     // SIGKILL between collectives; survivors then run a send/recv group
  Stop,            // SIGSTOP while collectives run
  KillNonblocking,  // SIGKILL on an idle nonblocking communicator: ncclCommGetAsyncError
  ShrinkAfterKill,  // SIGKILL while collectives run; survivors ncclCommShrink(NCCL_SHRINK_ABORT)
  AbortThenKill     // the rank after the victim aborts (healthy), then the victim is killed
};

// AbortThenKill: the rank that aborts first (as a survivor that alone noticed a fault would).
int aborterOf(int victim, int n) { return (victim + 1) % n; }

const char* faultName(Fault f) {
  switch (f) {
    case Fault::KillInInit: return "kill-in-init";
    case Fault::KillBefore: return "kill-before";
    case Fault::KillDuring: return "kill-during";
    case Fault::KillBetween: return "kill-between";
    case Fault::Stop: return "stop";
    case Fault::KillNonblocking: return "kill-nonblocking";
    case Fault::ShrinkAfterKill: return "shrink-after-kill";
    case Fault::AbortThenKill: return "abort-then-kill";
  }
  return "?";
}

// What a survivor reports to the parent (one write, below PIPE_BUF).
struct Report {
  int rank = -1;
  int failedCall = 0;  // 1 init, 2 collective/group, 3 async error poll, 0 nothing failed
  int rc = ncclSuccess;
  int opsDone = 0;
  double tError = 0;     // when the failing call returned
  double abortSec = -1;  // how long ncclCommAbort / ncclCommDestroy took
  // ShrinkAfterKill: the survivors' communicator.
  int shrinkRc = -1;
  double shrinkSec = -1;  // ncclCommShrink's time
  int newRank = -1, newCount = -1;
  int checkedOk = 0;      // the AllReduce on it gave the exact sums
  char lastError[1400] = {0};
};

struct Pipe {
  int r = -1, w = -1;
  void open() {
    int fds[2];
    if (::pipe(fds) != 0) std::abort();
    r = fds[0];
    w = fds[1];
  }
};

bool readFull(int fd, void* p, size_t n, double deadline) {
  auto* b = static_cast<char*>(p);
  size_t got = 0;
  while (got < n) {
    double left = deadline - now();
    if (left <= 0) return false;
    pollfd pf{fd, POLLIN, 0};
    if (::poll(&pf, 1, static_cast<int>(left * 1000) + 1) <= 0) continue;
    ssize_t k = ::read(fd, b + got, n - got);
    if (k <= 0) return false;
    got += static_cast<size_t>(k);
  }
  return true;
}

void writeFull(int fd, const void* p, size_t n) {
  auto* b = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = ::write(fd, b, n);
    if (k <= 0) return;
    b += k;
    n -= static_cast<size_t>(k);
  }
}

// ---------------------------------------------------------------- the ranks

struct Child {
  Fault fault;
  int rank, nranks, victim;
  int ctl;     // parent -> this rank: the unique id, then 'G' (go)
  int events;  // this rank -> parent: the unique id (rank 0), 'R' (victim ready)
  int results; // survivors' reports
};

constexpr size_t kCount = 1 << 20;  // floats per collective: 4 MiB, long enough to be hit

int runChild(const Child& c) {
  ncclUniqueId id;
  if (c.rank == 0) {
    if (ncclGetUniqueId(&id) != ncclSuccess) return 10;
    writeFull(c.events, &id, sizeof id);
  } else if (!readFull(c.ctl, &id, sizeof id, now() + 20)) {
    return 11;
  }
  const bool isVictim = c.rank == c.victim;
  Report rep;
  rep.rank = c.rank;
  auto finish = [&](ncclComm_t comm, int call, ncclResult_t rc, bool useDestroy) {
    rep.failedCall = call;
    rep.rc = rc;
    rep.tError = now();
    const char* le = ncclGetLastError(comm);
    std::snprintf(rep.lastError, sizeof rep.lastError, "%s", le ? le : "");
    if (comm && c.fault == Fault::ShrinkAfterKill && rc == ncclRemoteError) {
      // The survivors leave the dead rank behind and go on with a checked AllReduce.
      int victim = c.victim;
      ncclComm_t kid = nullptr;
      double t0 = now();
      rep.shrinkRc = ncclCommShrink(comm, &victim, 1, &kid, nullptr, NCCL_SHRINK_ABORT);
      rep.shrinkSec = now() - t0;
      if (rep.shrinkRc == ncclSuccess) {
        ncclCommCount(kid, &rep.newCount);
        ncclCommUserRank(kid, &rep.newRank);
        const size_t n = 4097;
        std::vector<float> in(n), out(n, -1.0f);
        for (size_t i = 0; i < n; ++i) in[i] = static_cast<float>((rep.newRank + 1) * (i % 7 + 1));
        int m = rep.newCount;
        if (ncclAllReduce(in.data(), out.data(), n, ncclFloat32, ncclSum, kid, nullptr) == ncclSuccess) {
          rep.checkedOk = 1;
          for (size_t i = 0; i < n; ++i)
            if (out[i] != static_cast<float>(m * (m + 1) / 2 * (i % 7 + 1))) rep.checkedOk = 0;
        }
        if (ncclCommDestroy(kid) != ncclSuccess) rep.checkedOk = 0;
      } else {
        const char* e = ncclGetLastError(comm);
        std::snprintf(rep.lastError, sizeof rep.lastError, "shrink: %s", e ? e : "");
      }
      useDestroy = true;  // a revoked parent is destroyed
    }
    if (comm) {
      double t0 = now();
      if (useDestroy) ncclCommDestroy(comm);
      else ncclCommAbort(comm);
      rep.abortSec = now() - t0;
    }
    writeFull(c.results, &rep, sizeof rep);
    return 0;
  };

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = c.fault == Fault::KillNonblocking ? 0 : 1;
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRankConfig(&comm, c.nranks, id, c.rank, &config);
  if (c.fault == Fault::KillNonblocking) {
    ncclResult_t st = r;
    double until = now() + 30;
    while (st == ncclInProgress && now() < until) ncclCommGetAsyncError(comm, &st);
    r = st;
  }
  if (r != ncclSuccess) return finish(comm, 1, r, false);

  std::vector<float> send(kCount, 1.0f), recv(kCount, 0.0f);
  auto allreduce = [&]() -> ncclResult_t {
    ncclResult_t e = ncclAllReduce(send.data(), recv.data(), kCount, ncclFloat32, ncclSum, comm, nullptr);
    if (e == ncclSuccess) ++rep.opsDone;
    return e;
  };
  auto waitGo = [&] {
    char g = 0;
    readFull(c.ctl, &g, 1, now() + 30);
  };
  auto ready = [&] {
    char b = 'R';
    writeFull(c.events, &b, 1);
  };

  switch (c.fault) {
    case Fault::KillInInit:
      // The victim is killed by the parent at a random moment of init; if init got
      // through everywhere, the first collectives find the gap.
      for (int i = 0; i < 200; ++i)
        if ((r = allreduce()) != ncclSuccess) return finish(comm, 2, r, false);
      return finish(comm, 0, ncclSuccess, false);
    case Fault::KillBefore:
      if (isVictim) {
        ready();
        pause();
      }
      waitGo();
      r = allreduce();
      return finish(comm, r == ncclSuccess ? 0 : 2, r, false);
    case Fault::ShrinkAfterKill:
      // One AllReduce first, so every connection is made before the victim dies (a
      // connection made while it dies is what kill-during exercises).
      if ((r = allreduce()) != ncclSuccess) return finish(comm, 2, r, false);
      [[fallthrough]];
    case Fault::KillDuring:
    case Fault::Stop:
      if (isVictim) ready();
      for (int i = 0; i < 100000; ++i)
        if ((r = allreduce()) != ncclSuccess) return finish(comm, 2, r, false);
      return finish(comm, 0, ncclSuccess, false);
    case Fault::KillBetween: {
      for (int i = 0; i < 3; ++i)
        if ((r = allreduce()) != ncclSuccess) return finish(comm, 2, r, false);
      if (isVictim) {
        ready();
        pause();
      }
      waitGo();
      // A group: a ring of send/recv and an allreduce. Survivors leave with destroy.
      int next = (c.rank + 1) % c.nranks, prev = (c.rank + c.nranks - 1) % c.nranks;
      ncclGroupStart();
      ncclSend(send.data(), kCount, ncclFloat32, next, comm, nullptr);
      ncclRecv(recv.data(), kCount, ncclFloat32, prev, comm, nullptr);
      ncclAllReduce(send.data(), send.data(), kCount, ncclFloat32, ncclSum, comm, nullptr);
      r = ncclGroupEnd();
      return finish(comm, r == ncclSuccess ? 0 : 2, r, true);
    }
    case Fault::AbortThenKill: {
      // The victim dies just after another rank aborted: the others must name the victim,
      // not the rank that left first on purpose (it says it left after a failure).
      if ((r = allreduce()) != ncclSuccess) return finish(comm, 2, r, false);
      if (isVictim) {
        ready();
        pause();
      }
      if (c.rank == aborterOf(c.victim, c.nranks)) {
        double t0 = now();
        ncclCommAbort(comm);
        rep.abortSec = now() - t0;
        char b = 'A';
        writeFull(c.events, &b, 1);
        writeFull(c.results, &rep, sizeof rep);
        return 0;
      }
      waitGo();
      r = allreduce();
      return finish(comm, r == ncclSuccess ? 0 : 2, r, false);
    }
    case Fault::KillNonblocking: {
      if (isVictim) {
        ready();
        pause();
      }
      waitGo();
      ncclResult_t st = ncclSuccess;
      double until = now() + 3 * kTimeout;
      while (st == ncclSuccess && now() < until) {
        ncclCommGetAsyncError(comm, &st);
        usleep(1000);
      }
      return finish(comm, st == ncclSuccess ? 0 : 3, st, false);
    }
  }
  return 12;
}

// ---------------------------------------------------------------- the parent

struct Outcome {
  bool ok = true;
  std::string why;
  double worstDetect = 0, worstAbort = 0;
  void fail(const std::string& s) {
    ok = false;
    if (why.size() < 4000) why += s + "\n";
  }
};

// Hang reports: survivors' stderr goes to files, SIGUSR2 asks them for a dump.
struct Reporting {
  bool on = false;
  std::vector<std::string> logs;  // per rank, filled by runCase
};

std::string slurp(const std::string& path) {
  std::string s;
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return s;
  char buf[4096];
  size_t k;
  while ((k = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, k);
  std::fclose(f);
  return s;
}

Outcome runCase(Fault fault, int n, int victim, std::mt19937& rng, Reporting* reporting = nullptr) {
  Outcome out;
  const double timeout = reporting ? 2 * kTimeout : kTimeout;
  std::vector<Pipe> ctl(n), ev(n);
  Pipe res;
  res.open();
  for (int i = 0; i < n; ++i) ctl[i].open(), ev[i].open();
  std::vector<pid_t> pids(n, -1);
  for (int i = 0; i < n; ++i) {
    pid_t p = fork();
    if (p == 0) {
      if (reporting) {
        std::string path = "/tmp/mccl_fault_" + std::to_string(getppid()) + "_" + std::to_string(i) + ".log";
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) dup2(fd, 2), close(fd);
        setenv("MCCL_TIMEOUT", "8", 1);
        setenv("MCCL_WARN_AFTER", "1", 1);
        setenv("MCCL_DUMP_SIGNAL", "1", 1);
      }
      // Survivors may see the death up to MCCL_TIMEOUT apart; the shrink's rendezvous
      // (a bootstrap wait) must outlast that spread.
      if (fault == Fault::ShrinkAfterKill) setenv("MCCL_BOOTSTRAP_TIMEOUT", "20", 1);
      // A rank killed in init is mostly noticed by a bootstrap wait that cannot tell a dead
      // rank from a late one and runs out MCCL_BOOTSTRAP_TIMEOUT (MCCL_TIMEOUT, 4 s, when
      // unset). 2 s halves that wait; the victim is dead whichever wait fails, and the
      // detection limit stays MCCL_TIMEOUT + slack (a data-path wait may still find it).
      if (fault == Fault::KillInInit) setenv("MCCL_BOOTSTRAP_TIMEOUT", "2", 1);
      Child c{fault, i, n, victim, ctl[i].r, ev[i].w, res.w};
      _exit(runChild(c));
    }
    pids[i] = p;
  }
  const double start = now(), hard = start + kCaseDeadline;
  double tFault = 0;
  bool stopped = false;
  auto killVictim = [&](int sig) {
    tFault = now();
    kill(pids[victim], sig);
    stopped = sig == SIGSTOP;
  };
  auto tellSurvivors = [&] {
    for (int i = 0; i < n; ++i)
      if (i != victim) writeFull(ctl[i].w, "G", 1);
  };
  ncclUniqueId id;
  if (!readFull(ev[0].r, &id, sizeof id, start + 20)) {
    out.fail("rank 0 did not publish the unique id");
  } else {
    for (int i = 1; i < n; ++i) writeFull(ctl[i].w, &id, sizeof id);
    std::uniform_int_distribution<int> initDelay(0, 30), runDelay(20, 250);
    char b = 0;
    switch (fault) {
      case Fault::KillInInit:
        usleep(static_cast<useconds_t>(initDelay(rng)) * 1000);
        killVictim(SIGKILL);
        break;
      case Fault::KillBefore:
      case Fault::KillBetween:
      case Fault::KillNonblocking:
        if (!readFull(ev[victim].r, &b, 1, hard)) {
          out.fail("the victim never got ready");
          break;
        }
        killVictim(SIGKILL);
        usleep(50 * 1000);  // the fault happens between the survivors' calls
        tellSurvivors();
        break;
      case Fault::AbortThenKill:
        if (!readFull(ev[victim].r, &b, 1, hard) || !readFull(ev[aborterOf(victim, n)].r, &b, 1, hard)) {
          out.fail("the victim or the aborting rank never got ready");
          break;
        }
        usleep(50 * 1000);
        killVictim(SIGKILL);
        usleep(50 * 1000);
        tellSurvivors();
        break;
      case Fault::KillDuring:
      case Fault::Stop:
      case Fault::ShrinkAfterKill:
        if (!readFull(ev[victim].r, &b, 1, hard)) {
          out.fail("the victim never got ready");
          break;
        }
        usleep(static_cast<useconds_t>(runDelay(rng)) * 1000);
        killVictim(fault == Fault::Stop ? SIGSTOP : SIGKILL);
        if (reporting) {
          // After MCCL_WARN_AFTER (1 s), before the watchdog gives up on the victim (4 s).
          usleep(2500 * 1000);
          for (int i = 0; i < n; ++i)
            if (i != victim) kill(pids[i], SIGUSR2);
        }
        break;
    }
  }
  // Survivors' reports.
  std::vector<bool> seen(n, false);
  for (int k = 0; k < n - 1 && out.ok; ++k) {
    Report rep;
    if (!readFull(res.r, &rep, sizeof rep, hard)) {
      out.fail("a survivor did not report within " + std::to_string(kCaseDeadline) + " s (hang)");
      break;
    }
    std::string who = "rank " + std::to_string(rep.rank) + ": ";
    if (rep.rank < 0 || rep.rank >= n || rep.rank == victim || seen[rep.rank]) {
      out.fail(who + "unexpected report");
      continue;
    }
    seen[rep.rank] = true;
    if (fault == Fault::AbortThenKill && rep.rank == aborterOf(victim, n)) {
      if (rep.abortSec < 0 || rep.abortSec > kAbortLimit)
        out.fail(who + "ncclCommAbort took " + std::to_string(rep.abortSec) + " s");
      continue;
    }
    if (rep.rc != ncclRemoteError) {
      out.fail(who + "expected ncclRemoteError, got " + ncclGetErrorString(static_cast<ncclResult_t>(rep.rc)) +
               " after " + std::to_string(rep.opsDone) + " ops; last error: " + rep.lastError);
      continue;
    }
    double detect = rep.tError - tFault;
    if (std::getenv("MCCL_FAULT_VERBOSE") && detect > 1.0)
      std::printf("[ slow     ] %s victim %d: %sdetected after %.2f s, call %d, ops %d: %s\n", faultName(fault), victim,
                  who.c_str(), detect, rep.failedCall, rep.opsDone, rep.lastError);
    out.worstDetect = std::max(out.worstDetect, detect);
    out.worstAbort = std::max(out.worstAbort, rep.abortSec);
    if (detect > timeout + kSlack)
      out.fail(who + "took " + std::to_string(detect) + " s to report the fault (MCCL_TIMEOUT " +
               std::to_string(timeout) + " s)");
    if (rep.abortSec < 0 || rep.abortSec > kAbortLimit)
      out.fail(who + "abort/destroy took " + std::to_string(rep.abortSec) + " s");
    if (fault == Fault::ShrinkAfterKill) {
      int expectRank = rep.rank - (rep.rank > victim ? 1 : 0);
      if (rep.shrinkRc != ncclSuccess)
        out.fail(who + "ncclCommShrink(NCCL_SHRINK_ABORT) failed: " +
                 ncclGetErrorString(static_cast<ncclResult_t>(rep.shrinkRc)) + ": " + rep.lastError);
      else if (rep.newCount != n - 1 || rep.newRank != expectRank || !rep.checkedOk)
        out.fail(who + "new communicator rank " + std::to_string(rep.newRank) + " of " +
                 std::to_string(rep.newCount) + (rep.checkedOk ? "" : ", AllReduce wrong or failed"));
      else if (rep.shrinkSec > kTimeout + 3 * kSlack)  // survivors notice the death apart
        out.fail(who + "ncclCommShrink took " + std::to_string(rep.shrinkSec) + " s");
      continue;  // the last error is the shrink's
    }
    // Init failures may come from a bootstrap wait that cannot know which rank is
    // missing; after init, the lost rank and its host must be named.
    std::string want = "rank " + std::to_string(victim) + " (host ";
    if (rep.failedCall != 1 && std::string(rep.lastError).find(want) == std::string::npos)
      out.fail(who + "the last error does not name rank " + std::to_string(victim) + ": " + rep.lastError);
  }
  if (stopped) kill(pids[victim], SIGKILL);
  // Every process must end: survivors by themselves, the victim by its signal.
  for (int i = 0; i < n; ++i) {
    int status = 0;
    pid_t got = 0;
    while ((got = waitpid(pids[i], &status, WNOHANG)) == 0 && now() < hard) usleep(2000);
    if (got == 0) {
      out.fail("rank " + std::to_string(i) + " still running at the deadline (hang); killed");
      kill(pids[i], SIGKILL);
      waitpid(pids[i], &status, 0);
    } else if (i != victim && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
      out.fail("rank " + std::to_string(i) + " ended badly (status " + std::to_string(status) + ")");
    }
  }
  for (int i = 0; i < n; ++i) {
    close(ctl[i].r), close(ctl[i].w), close(ev[i].r), close(ev[i].w);
  }
  close(res.r), close(res.w);
  if (reporting) {
    reporting->logs.assign(static_cast<size_t>(n), "");
    for (int i = 0; i < n; ++i) {
      std::string path = "/tmp/mccl_fault_" + std::to_string(getpid()) + "_" + std::to_string(i) + ".log";
      reporting->logs[i] = slurp(path);
      ::unlink(path.c_str());
    }
  }
  return out;
}

int reps() {
  const char* s = std::getenv("MCCL_FAULT_REPS");
  int r = s ? std::atoi(s) : 20;
  return r > 0 ? r : 1;
}

class Faults : public ::testing::TestWithParam<std::tuple<Fault, int>> {
 protected:
  static void SetUpTestSuite() {
    setenv("MCCL_TIMEOUT", "4", 1);
    setenv("MCCL_DEVICE", "host", 1);
    setenv("NCCL_COMM_ID", "", 1);
    unsetenv("NCCL_COMM_ID");
    signal(SIGPIPE, SIG_IGN);
  }
};

TEST_P(Faults, SurvivorsReportTheLostRankAndAbort) {
  Fault fault = std::get<0>(GetParam());
  int n = std::get<1>(GetParam());
  std::mt19937 rng(1234 + n * 7 + static_cast<int>(fault));
  double worstDetect = 0, worstAbort = 0;
  int failures = 0;
  // A stopped rank is only ever found by its silence (MCCL_TIMEOUT / 2, at least 2 s,
  // waited out in every repetition): half the repetitions, still at least 4 (every
  // victim of np 3 and 4) where MCCL_FAULT_REPS allows.
  // A rank that aborts before the victim's death: a few repetitions (every victim).
  const int repsHere = fault == Fault::Stop            ? std::max(std::min(reps(), 4), reps() / 2)
                       : fault == Fault::AbortThenKill ? std::min(reps(), 2 * n)
                                                       : reps();
  for (int rep = 0; rep < repsHere; ++rep) {
    // Victims rotate through the ranks, rank 0 (which holds the bootstrap root) included.
    int victim = (rep + 1) % n;
    Outcome o = runCase(fault, n, victim, rng);
    worstDetect = std::max(worstDetect, o.worstDetect);
    worstAbort = std::max(worstAbort, o.worstAbort);
    if (!o.ok) {
      ++failures;
      ADD_FAILURE() << faultName(fault) << " np " << n << " victim " << victim << " rep " << rep << ":\n" << o.why;
    }
  }
  std::printf("[ fault    ] %-16s np %d: %d reps, %d failed, worst detection %.2f s, worst abort %.2f s\n",
              faultName(fault), n, repsHere, failures, worstDetect, worstAbort);
}

// A rank killed mid-AllReduce: every survivor gets ncclRemoteError, shrinks the parent with
// NCCL_SHRINK_ABORT (excluding the dead rank, talking only to survivors) and runs a checked
// AllReduce on the new communicator. Few repetitions: the detection part is covered above.
TEST(FaultShrink, SurvivorsShrinkWithAbortAndContinue) {
  setenv("MCCL_TIMEOUT", "4", 1);
  setenv("MCCL_DEVICE", "host", 1);
  unsetenv("NCCL_COMM_ID");
  signal(SIGPIPE, SIG_IGN);
  std::mt19937 rng(4242);
  const int repsHere = std::min(reps(), 3);
  for (int n : {3, 4}) {
    double worstShrink = 0;
    for (int rep = 0; rep < repsHere; ++rep) {
      int victim = rep % n;  // rank 0 (the parent's bootstrap root) included
      Outcome o = runCase(Fault::ShrinkAfterKill, n, victim, rng);
      EXPECT_TRUE(o.ok) << "np " << n << " victim " << victim << " rep " << rep << ":\n" << o.why;
      worstShrink = std::max(worstShrink, o.worstDetect);
    }
    std::printf("[ fault    ] shrink-after-kill np %d: %d reps, worst detection %.2f s\n", n, repsHere, worstShrink);
  }
}

// Beyond 5 ranks the liveness links are not a full mesh (ring distances 1, 2, 4): at 6
// ranks rank 0 has no link to rank 3, so it learns of rank 3's death or freeze only
// through the others' relays, on an idle communicator (no data-path wait) and in a
// collective. Two repetitions each: the relay is deterministic, the timing is bounded.
TEST(FaultRelay, RanksWithoutALinkToTheVictimLearnThroughTheirPeers) {
  setenv("MCCL_TIMEOUT", "4", 1);
  setenv("MCCL_DEVICE", "host", 1);
  unsetenv("NCCL_COMM_ID");
  signal(SIGPIPE, SIG_IGN);
  std::mt19937 rng(4242);
  for (Fault fault : {Fault::KillNonblocking, Fault::Stop}) {
    for (int rep = 0; rep < 2; ++rep) {
      Outcome o = runCase(fault, 6, 3, rng);
      EXPECT_TRUE(o.ok) << faultName(fault) << " np 6 victim 3 rep " << rep << ":\n" << o.why;
    }
  }
}

// A frozen rank: the survivors say, after MCCL_WARN_AFTER, which collective they are in
// and whom they wait for; SIGUSR2 (MCCL_DUMP_SIGNAL=1) dumps every communicator; the
// watchdog then gives up on the frozen rank.
TEST(HangReport, WarnAfterAndSignalDumpNameTheOperationAndThePeer) {
  setenv("MCCL_DEVICE", "host", 1);
  std::mt19937 rng(99);
  const int n = 3, victim = 1;
  Reporting rep;
  rep.on = true;
  Outcome o = runCase(Fault::Stop, n, victim, rng, &rep);
  EXPECT_TRUE(o.ok) << o.why;
  for (int i = 0; i < n; ++i) {
    if (i == victim) continue;
    const std::string& log = rep.logs[i];
    SCOPED_TRACE("rank " + std::to_string(i) + " stderr:\n" + log);
    if (std::getenv("MCCL_FAULT_VERBOSE")) std::printf("rank %d stderr:\n%s", i, log.c_str());
    EXPECT_NE(log.find("no progress for"), std::string::npos);
    EXPECT_NE(log.find("AllReduce seq"), std::string::npos);
    EXPECT_NE(log.find("waiting for"), std::string::npos);
    EXPECT_NE(log.find("dump: comm"), std::string::npos);
    EXPECT_NE(log.find("rank " + std::to_string(i) + " of 3 (host)"), std::string::npos);
  }
  // The survivor after the victim in the ring waits for the victim's data.
  EXPECT_NE(rep.logs[2].find("waiting for data from rank 1"), std::string::npos) << rep.logs[2];
}

INSTANTIATE_TEST_SUITE_P(
    All, Faults,
    ::testing::Combine(::testing::Values(Fault::KillInInit, Fault::KillBefore, Fault::KillDuring,
                                         Fault::KillBetween, Fault::Stop, Fault::KillNonblocking,
                                         Fault::AbortThenKill),
                       ::testing::Values(3, 4)),
    [](const ::testing::TestParamInfo<std::tuple<Fault, int>>& info) {
      std::string s = faultName(std::get<0>(info.param));
      for (char& ch : s)
        if (ch == '-') ch = '_';
      return s + "_np" + std::to_string(std::get<1>(info.param));
    });

}  // namespace
