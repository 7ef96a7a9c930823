// MCCL_PROFILE_INIT: where the time of init, split and destroy goes. A PhaseLog charges
// the time since its last mark to a named phase (marks of one name add up); code deep in
// the call (transport, watchdog) marks the log of its thread through phaseMark() without
// being handed it. print() writes one line per rank to stderr:
//   mccl-profile <what> rank R/N total T ms | phase ms | phase ms ...
// Off (the default), a PhaseLog does nothing and phaseMark() is one thread-local load.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mccl {

class PhaseLog {
 public:
  PhaseLog();  // enabled by MCCL_PROFILE_INIT
  bool on() const { return on_; }
  void mark(const char* phase);
  // Extra text for the line (" | text"), e.g. what the init exchange received.
  void note(const std::string& text) {
    if (on_) notes_ += " | " + text;
  }
  void print(const char* what, int rank, int nranks);

 private:
  bool on_ = false;
  bool printed_ = false;
  int64_t start_ = 0, last_ = 0;
  std::vector<std::pair<const char*, int64_t>> phases_;
  std::string notes_;  // name, ns (in first-seen order)
};

// The log phaseMark() charges on this thread (null: none).
void setThreadPhaseLog(PhaseLog* log);
PhaseLog* threadPhaseLog();
inline void phaseMark(const char* phase) {
  if (PhaseLog* l = threadPhaseLog()) l->mark(phase);
}

// Sets this thread's log for a scope and restores the previous one.
class ScopedPhaseLog {
 public:
  explicit ScopedPhaseLog(PhaseLog* log) : prev_(threadPhaseLog()) { setThreadPhaseLog(log && log->on() ? log : nullptr); }
  ~ScopedPhaseLog() { setThreadPhaseLog(prev_); }
  ScopedPhaseLog(const ScopedPhaseLog&) = delete;
  ScopedPhaseLog& operator=(const ScopedPhaseLog&) = delete;

 private:
  PhaseLog* prev_;
};

}  // namespace mccl
