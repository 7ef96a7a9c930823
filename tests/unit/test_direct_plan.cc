// Which collectives on symmetric windows take the direct path (directWanted,
// kernels/plan/direct_plan.cc), checked without a GPU: MCCL_WIN_DIRECT=0 never, 2 at every size,
// 1 (the default) only where the direct path measured faster than the FIFO path.
#ifdef MCCL_HAVE_CUDA
#include <gtest/gtest.h>

#include <cstddef>

#include "core/op.h"
#include "kernels/plan/direct_plan.h"

using namespace mccl;

namespace {

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024, kGiB = kMiB * 1024;
const OpKind kColls[] = {OpKind::AllReduce, OpKind::ReduceScatter, OpKind::Reduce, OpKind::AllGather,
                         OpKind::Broadcast};

TEST(DirectPlan, OffNeverAndEverySizeAlways) {
  for (OpKind k : kColls)
    for (size_t b : {size_t{8}, 128 * kKiB, 2 * kMiB, 2 * kGiB}) {
      EXPECT_FALSE(directWanted(0, k, b)) << static_cast<int>(k) << " " << b;
      EXPECT_TRUE(directWanted(2, k, b)) << static_cast<int>(k) << " " << b;
    }
}

// Small calls stay on LL (one flag round trip against two barriers), Reduce always on the
// FIFOs; the middle sizes take the direct path; large AllReduce, ReduceScatter and
// Broadcast go back to the FIFOs' Simple channels, AllGather stays direct.
TEST(DirectPlan, MeasuredBands) {
  for (OpKind k : kColls)
    for (size_t b : {size_t{8}, 4 * kKiB, 128 * kKiB}) EXPECT_FALSE(directWanted(1, k, b)) << static_cast<int>(k) << " " << b;
  for (size_t b : {size_t{8}, 2 * kMiB, 2 * kGiB}) EXPECT_FALSE(directWanted(1, OpKind::Reduce, b)) << b;
  for (OpKind k : {OpKind::AllReduce, OpKind::ReduceScatter, OpKind::AllGather, OpKind::Broadcast})
    EXPECT_TRUE(directWanted(1, k, 2 * kMiB)) << static_cast<int>(k);
  EXPECT_TRUE(directWanted(1, OpKind::AllReduce, 512 * kKiB));
  EXPECT_FALSE(directWanted(1, OpKind::AllReduce, 8 * kMiB));
  EXPECT_TRUE(directWanted(1, OpKind::ReduceScatter, 8 * kMiB));
  EXPECT_FALSE(directWanted(1, OpKind::ReduceScatter, 32 * kMiB));
  EXPECT_FALSE(directWanted(1, OpKind::Broadcast, 512 * kKiB));
  EXPECT_TRUE(directWanted(1, OpKind::Broadcast, 32 * kMiB));
  EXPECT_FALSE(directWanted(1, OpKind::Broadcast, 128 * kMiB));
  for (size_t b : {512 * kKiB, 128 * kMiB, 2 * kGiB}) EXPECT_TRUE(directWanted(1, OpKind::AllGather, b)) << b;
  // Point-to-point never has a direct path.
  EXPECT_FALSE(directWanted(1, OpKind::Send, 2 * kMiB));
}

}  // namespace
#endif
