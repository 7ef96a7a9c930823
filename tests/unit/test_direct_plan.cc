// Which collectives on symmetric windows take the direct path (directWanted,
// kernels/plan/direct_plan.cc), checked without a GPU: MCCL_WIN_DIRECT=0 never, 2 at every size,
// 1 (the default) only where the direct path measured faster than the FIFO path.
#ifdef MCCL_HAVE_CUDA
#include <gtest/gtest.h>

#include <cstddef>

#include "core/comm.h"
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

// Which AllGather and Broadcast on symmetric windows the copy engines move
// (copyEnginesMove): from MCCL_WIN_CE_MIN_BYTES a rank (32 MiB), a Broadcast by size only on
// two ranks (its root would write every peer at once); under NCCL_CTA_POLICY_ZERO above 4 KiB
// a rank, a Broadcast from 2 MiB, on any number of ranks.
TEST(DirectPlan, CopyEnginesBySizeAndPolicy) {
  for (int n : {2, 3, 8}) {
    ncclComm comm;
    comm.rank = 0;
    comm.nranks = n;
    comm.cudaDev = 0;
    EXPECT_TRUE(copyEnginesMove(&comm, OpKind::AllGather, 32 * kMiB)) << n;
    EXPECT_FALSE(copyEnginesMove(&comm, OpKind::AllGather, 16 * kMiB)) << n;
    EXPECT_EQ(copyEnginesMove(&comm, OpKind::Broadcast, 64 * kMiB), n == 2) << n;
    comm.config.ctaPolicy = NCCL_CTA_POLICY_ZERO;
    EXPECT_TRUE(copyEnginesMove(&comm, OpKind::Broadcast, 2 * kMiB)) << n;
    EXPECT_TRUE(copyEnginesMove(&comm, OpKind::Broadcast, 64 * kMiB)) << n;
    EXPECT_FALSE(copyEnginesMove(&comm, OpKind::Broadcast, kMiB)) << n;
    EXPECT_TRUE(copyEnginesMove(&comm, OpKind::AllGather, 8 * kKiB)) << n;
    EXPECT_FALSE(copyEnginesMove(&comm, OpKind::AllGather, 4 * kKiB)) << n;
  }
}

}  // namespace
#endif
