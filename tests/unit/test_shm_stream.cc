// Streaming stores into the shared-memory segment (host_engine/shm_segment.h): shmPut, the
// copy a rank makes into it, ordinary or streamed, at every alignment of either end and
// every length around its 16- and 64-byte steps, leaving every byte around the destination
// untouched; and ShmStreamChoice, which decides between the two from timed copies.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/knobs.h"
#include "host_engine/shm_segment.h"

namespace {

void checkPut(bool stream) {
  const size_t lens[] = {0, 1, 7, 15, 16, 17, 31, 48, 63, 64, 65, 79, 127, 128, 129, 200, 1000, 2048, 4099, 65536};
  constexpr size_t kGuard = 64;
  for (size_t n : lens)
    for (size_t dstOff = 0; dstOff < 32; dstOff += (n > 4096 ? 7 : 1))
      for (size_t srcOff = 0; srcOff < 32; srcOff += 5) {
        std::vector<unsigned char> src(n + 128), dst(n + 2 * kGuard + 64, 0xEE);
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + n + srcOff);
        // 64-byte aligned bases, so dstOff is the destination's offset from a line.
        auto* s = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(src.data()) + 63) & ~uintptr_t{63});
        auto* d = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(dst.data()) + kGuard + 63) & ~uintptr_t{63});
        mccl::shmPut(reinterpret_cast<char*>(d + dstOff), reinterpret_cast<const char*>(s + srcOff), n, stream);
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(d[dstOff + i], s[srcOff + i]) << "n " << n << " dst+" << dstOff << " src+" << srcOff << " byte " << i;
        for (unsigned char* p = dst.data(); p < d + dstOff; ++p) ASSERT_EQ(*p, 0xEE) << "n " << n << " before";
        for (unsigned char* p = d + dstOff + n; p < dst.data() + dst.size(); ++p)
          ASSERT_EQ(*p, 0xEE) << "n " << n << " after";
      }
}

}  // namespace

TEST(ShmPut, OrdinaryCopyEveryAlignmentAndLength) { checkPut(false); }
TEST(ShmPut, StreamingStoresEveryAlignmentAndLength) { checkPut(true); }

using mccl::ShmStreamChoice;

// Copies until the choice asks for a timed one; returns how many it streamed before that.
static int streamedUntilTimed(ShmStreamChoice& c, size_t bytes) {
  bool time = false;
  for (int streamed = 0;; ++streamed) {
    const bool s = c.stream(bytes, &time);
    if (time) {
      EXPECT_FALSE(s) << "a timed copy is an ordinary one";
      return streamed;
    }
    if (!s) return -1;  // an ordinary copy not timed
  }
}

TEST(ShmStreamChoice, NeverAlwaysAndTheSmallestSize) {
  bool time = true;
  ShmStreamChoice never(ShmStreamChoice::Mode::Never, 4096);
  EXPECT_FALSE(never.stream(1 << 20, &time));
  EXPECT_FALSE(time);
  ShmStreamChoice always(ShmStreamChoice::Mode::Always, 4096);
  EXPECT_TRUE(always.stream(4096, &time));
  EXPECT_FALSE(time);
  EXPECT_FALSE(always.stream(4095, &time)) << "below MCCL_HOST_SHM_STREAM_BYTES";
  ShmStreamChoice autoc(ShmStreamChoice::Mode::Auto, 4096);
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(autoc.stream(4095, &time));
    EXPECT_FALSE(time) << "copies below the size are neither streamed nor timed";
  }
}

// Ordinary copies until the choice asks for a timed one; false if it streams one first.
static bool ordinaryUntilTimed(ShmStreamChoice& c, size_t bytes, int* ordinary) {
  bool time = false;
  for (*ordinary = 1;; ++*ordinary) {
    if (c.stream(bytes, &time)) return false;
    if (time) return true;
  }
}

TEST(ShmStreamChoice, AutoStreamsWhileTimedOrdinaryCopiesAverageSlow) {
  const size_t bytes = 65536;
  const uint64_t slowPs = 3 * ShmStreamChoice::kSlowPsPerByte / 2, fastPs = ShmStreamChoice::kSlowPsPerByte / 3;
  const uint64_t slow = bytes * slowPs / 1000, fast = bytes * fastPs / 1000, preempted = 1000000;
  ShmStreamChoice c(ShmStreamChoice::Mode::Auto, 4096);
  int n = 0;
  // Ordinary copies, every kSampleEvery-th timed; fast ones keep it so.
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(ordinaryUntilTimed(c, bytes, &n));
    EXPECT_EQ(n, static_cast<int>(ShmStreamChoice::kSampleEvery));
    c.copied(bytes, fast);
    EXPECT_FALSE(c.streaming());
  }
  // One preempted copy does not tip it, and fast ones bring it back; two in a row do.
  c.copied(bytes, preempted);
  EXPECT_FALSE(c.streaming()) << "one slow copy may be a preempted one";
  for (int i = 0; i < 4; ++i) c.copied(bytes, fast);
  c.copied(bytes, preempted);
  c.copied(bytes, preempted);
  EXPECT_TRUE(c.streaming());
  // Streaming: every kProbeEvery-th copy is an ordinary one, timed; slow ones keep it streaming.
  const int between = streamedUntilTimed(c, bytes);
  EXPECT_GE(between, 0);
  EXPECT_LT(between, static_cast<int>(ShmStreamChoice::kProbeEvery));
  for (int i = 0; i < 8; ++i) {
    c.copied(bytes, slow);
    EXPECT_TRUE(c.streaming());
    EXPECT_EQ(streamedUntilTimed(c, bytes), static_cast<int>(ShmStreamChoice::kProbeEvery) - 1);
  }
  // One fast probe after slow ones does not turn it off; a few in a row do.
  c.copied(bytes, fast);
  EXPECT_TRUE(c.streaming());
  int probes = 1;
  while (c.streaming() && probes < 10) {
    EXPECT_EQ(streamedUntilTimed(c, bytes), static_cast<int>(ShmStreamChoice::kProbeEvery) - 1);
    c.copied(bytes, fast);
    ++probes;
  }
  EXPECT_FALSE(c.streaming());
  EXPECT_LE(probes, 4);
  bool time = false;
  EXPECT_FALSE(c.stream(bytes, &time));
  // From rest, copies slower than the line stream within a few samples.
  ShmStreamChoice far(ShmStreamChoice::Mode::Auto, 4096);
  int samples = 0;
  while (!far.streaming() && samples < 10) {
    ASSERT_TRUE(ordinaryUntilTimed(far, bytes, &n));
    far.copied(bytes, slow);
    ++samples;
  }
  EXPECT_TRUE(far.streaming());
  EXPECT_LE(samples, 6);
}

TEST(ShmStreamChoice, ElapsedTimeLessTheClocksOwnCost) {
  const uint64_t t0 = mccl::shmNowNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const uint64_t ns = mccl::shmElapsedNs(t0);
  EXPECT_GE(ns, 1900000u);
  EXPECT_LT(ns, 2000000000u);
  const uint64_t t1 = mccl::shmNowNs();
  EXPECT_LT(mccl::shmElapsedNs(t1), 1000000u) << "two clock reads in a row";
}

TEST(ShmStreamChoice, ACopyToPagesNotTouchedBeforeIsNotTimed) {
  ShmStreamChoice c(ShmStreamChoice::Mode::Auto, 4096);
  size_t high = 0;
  bool time = false;
  int timed = 0;
  // Growing sizes into one slot: every copy reaches pages not touched before.
  for (size_t bytes = 4096, i = 0; i < 4 * ShmStreamChoice::kSampleEvery; ++i, bytes += 4096) {
    EXPECT_FALSE(c.stream(bytes, &high, &time));
    timed += time;
    EXPECT_EQ(high, bytes);
  }
  EXPECT_EQ(timed, 0);
  // The same size again: timed as usual, and the high-water mark stays.
  const size_t top = high;
  for (uint32_t i = 0; i < 4 * ShmStreamChoice::kSampleEvery; ++i) {
    c.stream(4096, &high, &time);
    timed += time;
  }
  EXPECT_EQ(timed, 4);
  EXPECT_EQ(high, top);
}

TEST(ShmStreamChoice, KnobReadsAutoZeroOneAndTakesAnythingElseAsAuto) {
  bool value = false;
  setenv("MCCL_HOST_SHM_STREAM", "1", 1);
  mccl::knobsReload();
  EXPECT_TRUE(mccl::knobForced(mccl::Knob::HostShmStream, &value));
  EXPECT_TRUE(value);
  setenv("MCCL_HOST_SHM_STREAM", "off", 1);
  mccl::knobsReload();
  EXPECT_TRUE(mccl::knobForced(mccl::Knob::HostShmStream, &value));
  EXPECT_FALSE(value);
  setenv("MCCL_HOST_SHM_STREAM", "sometimes", 1);
  mccl::knobsReload();
  EXPECT_FALSE(mccl::knobForced(mccl::Knob::HostShmStream, &value));
  unsetenv("MCCL_HOST_SHM_STREAM");
  mccl::knobsReload();
  EXPECT_FALSE(mccl::knobForced(mccl::Knob::HostShmStream, &value)) << "auto by default";
}
