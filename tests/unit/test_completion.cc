// The completion word a waiting host spins on (core/completion.h): a scope arms it for its
// thread alone and restores what was armed before; the wait ends on the raised word without
// asking the stream, and on a word never raised the stream decides, in bounded time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "bootstrap_mpi/mpi_map.h"
#include "core/completion.h"

#ifdef MCCL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

using namespace mccl;

TEST(Completion, ScopeArmsItsThreadOnlyAndNests) {
  EXPECT_EQ(threadCompletion(), nullptr);
  CompletionWord outer, inner;
  {
    CompletionScope a(&outer);
    EXPECT_TRUE(outer.armed);
    EXPECT_EQ(threadCompletion(), &outer);
    CompletionWord* elsewhere = &outer;
    std::thread([&] { elsewhere = threadCompletion(); }).join();
    EXPECT_EQ(elsewhere, nullptr);  // another thread's launches never take it
    {
      CompletionScope b(&inner);
      EXPECT_EQ(threadCompletion(), &inner);
    }
    EXPECT_EQ(threadCompletion(), &outer);
    {
      CompletionScope none(nullptr);  // calls that may raise no word: not the outer one either
      EXPECT_EQ(threadCompletion(), nullptr);
    }
    EXPECT_EQ(threadCompletion(), &outer);
  }
  EXPECT_EQ(threadCompletion(), nullptr);
}

TEST(Completion, RaisedWordEndsTheWaitWithoutTheStream) {
  // The stream is one no call may touch: a wait that asked it would fail or hang.
  volatile uint32_t word = 41;
  CompletionWord cw;
  cw.taken = true;
  cw.word = &word;
  cw.value = 41;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(waitStream(reinterpret_cast<cudaStream_t>(0x1), MPI_COMM_NULL, &cw), ncclSuccess);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

TEST(Completion, WordNeverRaisedLeavesItToTheStream) {
  // A launch stopped early never raises its word: past the first spin the stream decides
  // (the legacy stream: idle on a GPU machine, an error where there is no GPU).
  volatile uint32_t word = 7;
  CompletionWord cw;
  cw.taken = true;
  cw.word = &word;
  cw.value = 8;
  bool streamDone = true;
#ifdef MCCL_HAVE_CUDA
  streamDone = cudaStreamQuery(nullptr) == cudaSuccess;
  cudaGetLastError();
#endif
  const auto t0 = std::chrono::steady_clock::now();
  const ncclResult_t r = waitStream(nullptr, MPI_COMM_NULL, &cw);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  if (streamDone) EXPECT_EQ(r, ncclSuccess);
  else EXPECT_EQ(r, ncclUnhandledCudaError);
}
