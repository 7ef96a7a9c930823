// Logging filtered by level (NCCL_DEBUG) and subsystem (NCCL_DEBUG_SUBSYS), written to
// stdout or NCCL_DEBUG_FILE. Lines look like NCCL's:
//   host:pid:tid [rank] MCCL INFO <message>
#pragma once

#include <atomic>
#include <cstdint>

namespace mccl {

enum class LogLevel : int { None = 0, Version = 1, Warn = 2, Info = 3, Abort = 4, Trace = 5 };

enum LogSubsys : uint32_t {
  kLogInit = 1u << 0,
  kLogColl = 1u << 1,
  kLogP2p = 1u << 2,
  kLogShm = 1u << 3,
  kLogNet = 1u << 4,
  kLogGraph = 1u << 5,
  kLogTuning = 1u << 6,
  kLogEnv = 1u << 7,
  kLogAlloc = 1u << 8,
  kLogCall = 1u << 9,
  kLogProxy = 1u << 10,
  kLogBootstrap = 1u << 11,
  kLogReg = 1u << 12,
  kLogAll = ~0u,
};

// Current level and subsystem mask (read from the knobs on first use).
LogLevel logLevel();
bool logEnabled(LogLevel level, uint32_t subsys);
// The level logging is set to (Trace until it is read): MCCL_LOG skips a message above it
// with one load, no call (a TRACE on every operation's way costs nothing when off).
extern std::atomic<int> gLogCeiling;

// Re-reads NCCL_DEBUG* (after knobsReload) and reopens the log file.
void logReset();

// The rank shown in this thread's log lines (-1: none).
void logSetThreadRank(int rank);

void logMessage(LogLevel level, uint32_t subsys, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

// Hang reports, lost peers and dumps: a WARN line in the log, or on stderr when logging
// is off (NCCL_DEBUG unset), since a job that hangs must say why without a rerun.
void logReport(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Parses an NCCL_DEBUG_SUBSYS value into a mask (exposed for tests).
uint32_t parseSubsysMask(const char* spec);

}  // namespace mccl

#define MCCL_LOG(level, subsys, ...)                                           \
  do {                                                                         \
    if (static_cast<int>(level) <= ::mccl::gLogCeiling.load(std::memory_order_relaxed) && \
        ::mccl::logEnabled(level, subsys))                                     \
      ::mccl::logMessage(level, subsys, __FILE__, __LINE__, __VA_ARGS__);      \
  } while (0)

#define WARN(...) MCCL_LOG(::mccl::LogLevel::Warn, ::mccl::kLogAll, __VA_ARGS__)
#define INFO(subsys, ...) MCCL_LOG(::mccl::LogLevel::Info, subsys, __VA_ARGS__)
#define TRACE(subsys, ...) MCCL_LOG(::mccl::LogLevel::Trace, subsys, __VA_ARGS__)
