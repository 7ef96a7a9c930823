// Small helpers shared by the benchmark programs (mccl-perf, mccl-threads-bench,
// micro_word_wait).
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>

// A failed check ends the process at once (_Exit): it may fire on one rank's thread while
// the others are inside mccl, and exit() would run the library's and CUDA's static
// destructors under them (once seen as "double free or corruption" and SIGSEGV after a
// timeout with ranks sharing a GPU).
#define CHECK(cond, ...)                 \
  do {                                   \
    if (!(cond)) {                       \
      std::fprintf(stderr, __VA_ARGS__); \
      std::fprintf(stderr, "\n");        \
      std::fflush(stdout);               \
      std::_Exit(1);                     \
    }                                    \
  } while (0)

namespace mccl_bench {

// "8", "256K", "1M", "2G" (binary multiples) as a byte count.
inline size_t parseSize(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  switch (*end) {
    case 'K': case 'k': v *= 1024; break;
    case 'M': case 'm': v *= 1024 * 1024; break;
    case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
    default: break;
  }
  return static_cast<size_t>(v);
}

}  // namespace mccl_bench
