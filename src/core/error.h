// One error path: every failure becomes an ncclResult_t plus one sentence, kept as the
// thread's (and the communicator's) last error for ncclGetLastError and logged at WARN.
#pragma once

#include <string>

#include "core/debug.h"
#include "nccl.h"

struct ncclComm;

namespace mccl {

// Records "message" as the last error of this thread and, when comm is not null, of comm;
// logs it at WARN; returns code. Use through MCCL_ERR.
ncclResult_t recordError(ncclResult_t code, ncclComm* comm, const char* file, int line,
                         const char* fmt, ...) __attribute__((format(printf, 5, 6)));

// The last error recorded on this thread ("" when none).
const char* threadLastError();
void clearThreadLastError();
void setThreadLastError(const char* msg);  // puts back one saved by threadLastError()

// Human-readable name of a result code ("invalid argument", ...).
const char* resultString(ncclResult_t r);

}  // namespace mccl

#define MCCL_ERR(code, comm, ...) ::mccl::recordError(code, comm, __FILE__, __LINE__, __VA_ARGS__)

// Propagates any result other than ncclSuccess, leaving a trail at TRACE.
#define MCCL_CHECK(call)                                                        \
  do {                                                                          \
    ncclResult_t mccl_r_ = (call);                                              \
    if (mccl_r_ != ncclSuccess) {                                               \
      TRACE(::mccl::kLogAll, "%s -> %d", #call, static_cast<int>(mccl_r_));     \
      return mccl_r_;                                                           \
    }                                                                           \
  } while (0)

// Same, but jumps to a cleanup label with the result stored in res.
#define MCCL_CHECK_GOTO(call, res, label)                                       \
  do {                                                                          \
    (res) = (call);                                                             \
    if ((res) != ncclSuccess) {                                                 \
      TRACE(::mccl::kLogAll, "%s -> %d", #call, static_cast<int>(res));         \
      goto label;                                                               \
    }                                                                           \
  } while (0)

// Marks a public entry point: C linkage, exported (the library hides everything else).
#define NCCL_API extern "C" __attribute__((visibility("default")))

// After an entry point's definition: its pnccl* twin, the same function under NVIDIA's
// profiling name (an alias of the one implementation, not a wrapper).
#define NCCL_API_ALIAS(name) \
  extern "C" __attribute__((visibility("default"), alias(#name))) decltype(name) p##name;
// The same for a name C++ overloads (the device API's team functions have device twins):
// the C function's type spelled out.
#define NCCL_API_ALIAS_OF(ret, name, args) \
  extern "C" __attribute__((visibility("default"), alias(#name))) ret p##name args;

// Entry points catch everything: no C++ exception crosses the C API.
#define MCCL_API_BEGIN try {
#define MCCL_API_END                                                                       \
  }                                                                                        \
  catch (const std::bad_alloc&) {                                                          \
    return MCCL_ERR(ncclSystemError, nullptr, "out of host memory");                       \
  }                                                                                        \
  catch (const std::exception& e) {                                                        \
    return MCCL_ERR(ncclInternalError, nullptr, "internal error: %s", e.what());           \
  }                                                                                        \
  catch (...) {                                                                            \
    return MCCL_ERR(ncclInternalError, nullptr, "internal error: unknown exception");      \
  }
