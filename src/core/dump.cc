// Hang reports for the whole process: mcclDumpState() and, with MCCL_DUMP_SIGNAL=1,
// SIGUSR2. For every live communicator: who it is, what it is doing (the operation of an
// ncclGroupEnd in progress with the ranks it waits for, or GPU kernels still running),
// and whether a peer was lost.
#include "core/dump.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <string>
#include <thread>

#include "core/comm.h"
#include "core/datapath.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/watchdog.h"


namespace mccl {
namespace {

void dumpOne(ncclComm* c, void* count) {
  ++*static_cast<int*>(count);
  std::string state;
  ncclResult_t e = c->asyncError.load();
  if (e == ncclInProgress) {
    state = "initialising";
  } else {
    {
      std::lock_guard<std::mutex> lock(c->activeMu);
      for (Work* w : c->activeWorks) {
        std::lock_guard<std::mutex> wl(w->stateMu);
        if (!state.empty()) state += "; ";
        state += "in ncclGroupEnd: " + w->describe();
      }
    }
    if (c->dataPath) {
      std::string gpu = c->dataPath->describeInFlight();
      if (!gpu.empty()) state += (state.empty() ? "" : "; ") + gpu;
    }
    if (state.empty()) state = "idle";
    if (e != ncclSuccess) state += std::string("; failed: ") + c->failureMessage();
    std::string why;
    if (c->watchdog && c->watchdog->lostRank(&why) >= 0) state += "; lost " + why;
    if (c->aborted.load()) state += "; aborted";
  }
  logReport("dump: comm %p hash %016llx rank %d of %d (%s) ops issued %llu: %s", static_cast<void*>(c),
            static_cast<unsigned long long>(c->commHash), c->rank, c->nranks,
            c->isHost() ? "host" : ("GPU " + std::to_string(c->cudaDev)).c_str(),
            static_cast<unsigned long long>(c->collSeq.load()), state.c_str());
}

int gSignalPipe[2] = {-1, -1};

void onSignal(int) {
  int saved = errno;
  char b = 'd';
  ssize_t ignored = ::write(gSignalPipe[1], &b, 1);  // async-signal-safe; the thread dumps
  (void)ignored;
  errno = saved;
}

}  // namespace

void dumpState() {
  int count = 0;
  forEachLiveComm(dumpOne, &count);
  if (count == 0) logReport("dump: no live communicator in this process");
}

void installDumpSignal() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!knobBool(Knob::DumpSignal)) return;
    if (::pipe(gSignalPipe) != 0) return;
    std::thread([] {
      char b;
      while (::read(gSignalPipe[0], &b, 1) > 0 || errno == EINTR) dumpState();
    }).detach();
    struct sigaction sa = {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &sa, nullptr);
  });
}

}  // namespace mccl

NCCL_API void mcclDumpState(void) { mccl::dumpState(); }
