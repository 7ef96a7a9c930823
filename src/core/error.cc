#include "core/error.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "core/comm.h"

namespace mccl {
namespace {
thread_local char tlsLastError[1024];
}

const char* resultString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the mccl developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

ncclResult_t recordError(ncclResult_t code, ncclComm* comm, const char* file, int line,
                         const char* fmt, ...) {
  char msg[sizeof tlsLastError];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  std::memcpy(tlsLastError, msg, sizeof msg);
  if (comm != nullptr) comm->setLastError(msg);
  if (logEnabled(LogLevel::Warn, kLogAll)) {
    const char* base = std::strrchr(file, '/');
    logMessage(LogLevel::Warn, kLogAll, file, line, "%s:%d %s (%s)", base ? base + 1 : file, line,
               msg, resultString(code));
  }
  return code;
}

const char* threadLastError() { return tlsLastError; }
void clearThreadLastError() { tlsLastError[0] = '\0'; }
void setThreadLastError(const char* msg) {
  std::snprintf(tlsLastError, sizeof tlsLastError, "%s", msg);
}

}  // namespace mccl
