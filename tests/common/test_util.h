// Helpers shared by the tests: ranks as threads, MPI-aware gtest main, comparisons.
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"

#define NCCL_OK(call)                                                                  \
  do {                                                                                 \
    ncclResult_t r_ = (call);                                                          \
    ASSERT_EQ(r_, ncclSuccess) << #call << ": " << ncclGetErrorString(r_) << " / "     \
                               << ncclGetLastError(nullptr);                           \
  } while (0)

#define NCCL_EXPECT_OK(call)                                                           \
  do {                                                                                 \
    ncclResult_t r_ = (call);                                                          \
    EXPECT_EQ(r_, ncclSuccess) << #call << ": " << ncclGetErrorString(r_) << " / "     \
                               << ncclGetLastError(nullptr);                           \
  } while (0)

namespace mccl_test {

// Runs body(rank) on n threads and joins them.
inline void runThreads(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r) ts.emplace_back(body, r);
  for (auto& t : ts) t.join();
}

// n host communicators of one process (ncclCommInitAll with MCCL_DEVICE=host semantics
// when no GPU is present; forced to host otherwise through MCCL_DEVICE).
std::vector<ncclComm_t> makeHostComms(int n);
void destroyComms(std::vector<ncclComm_t>& comms);

// True if s contains sub.
inline bool contains(const std::string& s, const std::string& sub) {
  return s.find(sub) != std::string::npos;
}

}  // namespace mccl_test
