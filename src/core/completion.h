// A host thread's wait for one launch by a word the launch's kernel raises in host-mapped
// memory, instead of asking the stream.
//
// libmccl_mpi's small MPI collectives on device buffers must return only when their kernel
// is done, and the host learns that late: on one H200 host (bench/results/gpu-1xH200-
// 2026-12-02c) one cudaStreamQuery took 1.3-2.7 us, and an empty kernel launched and waited
// for with cudaStreamSynchronize 8.0-11.0 us, against 7.0-9.2 when its last store raised a
// host word the thread spun on. A caller arms a CompletionWord for the calls of one scope;
// the GPU data path gives the word to the next launch that can raise it (an LL-family
// kernel, alone in its plan, not captured but for a replay: GpuDataPath::launch) and marks
// it taken; the caller then spins on the word (libmccl_mpi's route, waitStream in
// mpi_typed.cc), falling back to the stream if it is not raised (a launch that took another
// form, or one stopped by an abort or a timeout). The launch clears the word before it starts
// and its kernel raises it to a value fixed by the launch (its blocks), so a CUDA graph
// captured with a word (replay) raises it on every replay once the replaying thread has
// cleared it.
#pragma once

#include <cstdint>

namespace mccl {

struct CompletionWord {
  bool armed = false;                    // the next launch of this thread may take it
  bool taken = false;                    // one did: wait for *word == value
  bool replay = false;                   // the launch may be captured (a graph replayed later)
  volatile uint32_t* word = nullptr;     // host-mapped
  uint32_t value = 0;
};

// The calling thread's armed word, or null.
inline CompletionWord*& threadCompletion() {
  static thread_local CompletionWord* armed = nullptr;
  return armed;
}

// Arms cw for the calls made in this scope by this thread; a null cw: no word for them
// (not an enclosing scope's either).
class CompletionScope {
 public:
  explicit CompletionScope(CompletionWord* cw) : prev_(threadCompletion()) {
    if (cw) cw->armed = true;
    threadCompletion() = cw;
  }
  ~CompletionScope() { threadCompletion() = prev_; }
  CompletionScope(const CompletionScope&) = delete;
  CompletionScope& operator=(const CompletionScope&) = delete;

 private:
  CompletionWord* prev_;
};

}  // namespace mccl
