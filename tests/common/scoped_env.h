// Environment variables for a test's scope (tests that link mccl's internals).
#pragma once

#include <stdlib.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "core/knobs.h"

namespace mccl_test {

// Environment variables for a test's scope, read by the communicators it makes and their
// calls (the knobs are read again on entry and on exit).
class ScopedEnv {
 public:
  explicit ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) : vars_(vars) {
    for (const auto& v : vars_) setenv(v.first, v.second, 1);
    mccl::knobsReload();
  }
  ~ScopedEnv() {
    for (const auto& v : vars_) unsetenv(v.first);
    mccl::knobsReload();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<const char*, const char*>> vars_;
};

}  // namespace mccl_test
