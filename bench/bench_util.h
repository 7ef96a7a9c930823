// Small helpers shared by the benchmark programs (mccl-perf, mccl-threads-bench).
#pragma once

#include <cstddef>
#include <cstdlib>

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
