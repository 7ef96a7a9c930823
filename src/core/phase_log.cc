#include "core/phase_log.h"

#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/knobs.h"

namespace mccl {
namespace {
thread_local PhaseLog* tPhaseLog = nullptr;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void setThreadPhaseLog(PhaseLog* log) { tPhaseLog = log; }
PhaseLog* threadPhaseLog() { return tPhaseLog; }

PhaseLog::PhaseLog() : on_(knobBool(Knob::ProfileInit)) {
  if (on_) start_ = last_ = nowNs();
}

void PhaseLog::mark(const char* phase) {
  if (!on_) return;
  int64_t t = nowNs();
  int64_t d = t - last_;
  last_ = t;
  for (auto& p : phases_)
    if (std::strcmp(p.first, phase) == 0) {
      p.second += d;
      return;
    }
  phases_.emplace_back(phase, d);
}

void PhaseLog::print(const char* what, int rank, int nranks) {
  if (!on_ || printed_) return;
  printed_ = true;
  std::string line;
  char buf[96];
  std::snprintf(buf, sizeof buf, "mccl-profile %s rank %d/%d total %.3f ms", what, rank, nranks,
                static_cast<double>(last_ - start_) / 1e6);
  line = buf;
  for (auto& p : phases_) {
    std::snprintf(buf, sizeof buf, " | %s %.3f", p.first, static_cast<double>(p.second) / 1e6);
    line += buf;
  }
  line += notes_;
  line += "\n";
  std::fputs(line.c_str(), stderr);
}

}  // namespace mccl
