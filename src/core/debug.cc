#include "core/debug.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>

#include "core/knobs.h"

namespace mccl {

std::atomic<int> gLogCeiling{static_cast<int>(LogLevel::Trace)};

namespace {

struct LogState {
  std::mutex mu;
  std::atomic<int> level{-1};  // -1: not read yet
  std::atomic<uint32_t> mask{0};
  FILE* out = nullptr;
  bool ownsFile = false;
  char host[64] = {0};
};

LogState& state() {
  static LogState* s = new LogState();  // outlives static destructors: logs at exit work
  return *s;
}

thread_local int tlsRank = -1;

struct NamedSubsys {
  const char* name;
  uint32_t bit;
};
const NamedSubsys kSubsys[] = {
    {"INIT", kLogInit},   {"COLL", kLogColl},   {"P2P", kLogP2p},     {"SHM", kLogShm},
    {"NET", kLogNet},     {"GRAPH", kLogGraph}, {"TUNING", kLogTuning}, {"ENV", kLogEnv},
    {"ALLOC", kLogAlloc}, {"CALL", kLogCall},   {"PROXY", kLogProxy}, {"BOOTSTRAP", kLogBootstrap},
    {"REG", kLogReg},     {"ALL", kLogAll},
};

LogLevel parseLevel(const std::string& v) {
  std::string u;
  for (char c : v) u.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (u == "VERSION") return LogLevel::Version;
  if (u == "WARN") return LogLevel::Warn;
  if (u == "INFO") return LogLevel::Info;
  if (u == "ABORT") return LogLevel::Abort;
  if (u == "TRACE") return LogLevel::Trace;
  return LogLevel::None;
}

std::string expandFileName(const std::string& pattern, const char* host) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[++i];
      if (c == 'h') out += host;
      else if (c == 'p') out += std::to_string(getpid());
      else if (c == '%') out += '%';
      else {
        out += '%';
        out += c;
      }
    } else {
      out += pattern[i];
    }
  }
  return out;
}

void init(LogState& s) {
  // Called with s.mu held.
  if (s.ownsFile && s.out) std::fclose(s.out);
  s.out = stdout;
  s.ownsFile = false;
  gethostname(s.host, sizeof s.host - 1);
  for (char* p = s.host; *p; ++p)
    if (*p == '.') *p = '\0';
  LogLevel level = parseLevel(knobStr(Knob::Debug));
  s.mask.store(parseSubsysMask(knobStr(Knob::DebugSubsys).c_str()));
  std::string file = knobStr(Knob::DebugFile);
  if (level != LogLevel::None && !file.empty()) {
    std::string path = expandFileName(file, s.host);
    FILE* f = std::fopen(path.c_str(), "w");
    if (f) {
      s.out = f;
      s.ownsFile = true;
    }
  }
  s.level.store(static_cast<int>(level));
  gLogCeiling.store(static_cast<int>(level), std::memory_order_relaxed);
}

LogState& ready() {
  LogState& s = state();
  if (s.level.load(std::memory_order_acquire) < 0) {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.level.load() < 0) init(s);
  }
  return s;
}

const char* levelName(LogLevel l) {
  switch (l) {
    case LogLevel::Version: return "VERSION";
    case LogLevel::Warn: return "WARN";
    case LogLevel::Info: return "INFO";
    case LogLevel::Abort: return "ABORT";
    case LogLevel::Trace: return "TRACE";
    default: return "";
  }
}

}  // namespace

uint32_t parseSubsysMask(const char* spec) {
  if (spec == nullptr || *spec == '\0') return kLogInit | kLogBootstrap | kLogEnv;
  bool invert = false;
  if (*spec == '^') {
    invert = true;
    ++spec;
  }
  uint32_t mask = 0;
  std::string tok;
  auto flush = [&] {
    for (const NamedSubsys& n : kSubsys) {
      if (tok.size() == std::strlen(n.name) &&
          std::equal(tok.begin(), tok.end(), n.name,
                     [](char a, char b) { return std::toupper((unsigned char)a) == b; }))
        mask |= n.bit;
    }
    tok.clear();
  };
  for (const char* p = spec;; ++p) {
    if (*p == ',' || *p == '\0') {
      flush();
      if (*p == '\0') break;
    } else if (!std::isspace(static_cast<unsigned char>(*p))) {
      tok.push_back(*p);
    }
  }
  return invert ? ~mask : mask;
}

LogLevel logLevel() { return static_cast<LogLevel>(ready().level.load(std::memory_order_relaxed)); }

bool logEnabled(LogLevel level, uint32_t subsys) {
  LogState& s = ready();
  int cur = s.level.load(std::memory_order_relaxed);
  if (static_cast<int>(level) > cur) return false;
  if (level == LogLevel::Info || level == LogLevel::Trace)
    return (s.mask.load(std::memory_order_relaxed) & subsys) != 0;
  return true;
}

void logReset() {
  LogState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  init(s);
}

void logSetThreadRank(int rank) { tlsRank = rank; }

namespace {
void vlog(FILE* to, LogLevel level, const char* file, int line, const char* fmt, va_list ap) {
  LogState& s = ready();
  char msg[2048];
  int n = 0;
  long tid = syscall(SYS_gettid);
  if (tlsRank >= 0)
    n = std::snprintf(msg, sizeof msg, "%s:%d:%ld [%d] MCCL %s ", s.host, getpid(), tid, tlsRank,
                      levelName(level));
  else
    n = std::snprintf(msg, sizeof msg, "%s:%d:%ld MCCL %s ", s.host, getpid(), tid,
                      levelName(level));
  if (level == LogLevel::Trace && n >= 0 && n < static_cast<int>(sizeof msg)) {
    const char* base = std::strrchr(file, '/');
    n += std::snprintf(msg + n, sizeof msg - n, "%s:%d ", base ? base + 1 : file, line);
  }
  if (n >= 0 && n < static_cast<int>(sizeof msg)) std::vsnprintf(msg + n, sizeof msg - n, fmt, ap);
  std::lock_guard<std::mutex> lock(s.mu);
  if (!to) to = s.out;
  std::fprintf(to, "%s\n", msg);
  std::fflush(to);
}
}  // namespace

void logMessage(LogLevel level, uint32_t subsys, const char* file, int line, const char* fmt, ...) {
  (void)subsys;
  va_list ap;
  va_start(ap, fmt);
  vlog(nullptr, level, file, line, fmt, ap);
  va_end(ap);
}

void logReport(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(logEnabled(LogLevel::Warn, kLogAll) ? nullptr : stderr, LogLevel::Warn, __FILE__, __LINE__, fmt, ap);
  va_end(ap);
}

}  // namespace mccl
