// Ranks as threads of one process wait here until all arrived (tests and
// mccl-threads-bench). Ranks sharing a GPU (MCCL_SHARED_GPU) meet before their first
// collective when they allocate with cudaMalloc or instantiate a graph first, and before
// they free: those may wait for the whole device, where an early rank's kernel already
// spins for this one.
#pragma once

#include <atomic>
#include <thread>

namespace mccl_test {

class ThreadBarrier {
 public:
  explicit ThreadBarrier(int n) : n_(n) {}
  void wait() {
    const int gen = gen_.load();
    if (count_.fetch_add(1) + 1 == n_) {
      count_.store(0);
      gen_.fetch_add(1);
    } else {
      while (gen_.load() == gen) std::this_thread::yield();
    }
  }

 private:
  const int n_;
  std::atomic<int> count_{0}, gen_{0};
};

}  // namespace mccl_test
