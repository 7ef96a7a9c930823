// The hold on a peer's System V FIFO segment (ucx.h, sysvHold): a region UCX allocates
// names its segment, holding that segment shows the region's bytes and keeps it alive
// after its owner lets it go, and a segment that no longer exists is reported gone.
#include <gtest/gtest.h>
#include <sys/shm.h>

#include <cstring>
#include <memory>

#include "ucx_transport/ucx.h"

using namespace mccl;

TEST(SysvHold, AllocatedRegionIsHeldAndGoneSegmentIsSeen) {
  EXPECT_NE(sysvNamespaceKey(), 0u);
  EXPECT_EQ(sysvNamespaceKey(), sysvNamespaceKey());

  std::shared_ptr<UcxContext> ctx;
  ASSERT_EQ(UcxContext::get(&ctx), ncclSuccess);
  UcxWorker w(nullptr, ctx);
  ASSERT_EQ(w.create(), ncclSuccess);
  UcxRegion reg;
  ASSERT_EQ(w.mapRegion(1 << 16, true, &reg), ncclSuccess);
  if (reg.shmid < 0) {
    w.unmapRegion(&reg);
    GTEST_SKIP() << "UCX did not allocate the region in a System V segment";
  }
  auto* mine = static_cast<unsigned char*>(reg.ptr);
  for (int i = 0; i < 4096; ++i) mine[i] = static_cast<unsigned char>(i * 7 + 3);
  bool gone = true;
  void* held = sysvHold(reg.shmid, &gone);
  ASSERT_NE(held, nullptr);
  EXPECT_FALSE(gone);
  EXPECT_EQ(std::memcmp(held, mine, 4096), 0) << "shmid " << reg.shmid << " is not the region's segment";
  // The owner lets go (as a dying peer does): the held segment stays readable.
  const int shmid = reg.shmid;
  w.unmapRegion(&reg);
  EXPECT_EQ(static_cast<unsigned char*>(held)[100], static_cast<unsigned char>(100 * 7 + 3));
  sysvRelease(held);
  // Now nobody holds it: it is gone.
  EXPECT_EQ(sysvHold(shmid, &gone), nullptr);
  EXPECT_TRUE(gone);

  // A segment removed before anyone attached it is gone at once.
  int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
  ASSERT_GE(id, 0);
  ASSERT_EQ(shmctl(id, IPC_RMID, nullptr), 0);
  EXPECT_EQ(sysvHold(id, &gone), nullptr);
  EXPECT_TRUE(gone);
}
