// The TCP bootstrap refuses connections that do not prove the id's secret, and survives
// garbage, while the real ranks still get their communicator.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "bootstrap_mpi/socket.h"
#include "bootstrap_mpi/wire.h"
#include "mccl.h"
#include "test_util.h"

using namespace mccl;
using namespace mccl_test;

namespace {
// Connects to the id's root and sends a hello with the given secret; returns whether the
// root closed the connection (refused) within a second.
bool rootRefuses(const ncclUniqueId& id, uint64_t secret, bool garbage) {
  UniqueIdFields f;
  EXPECT_EQ(decodeUniqueId(id, &f, "test"), ncclSuccess);
  int fd = -1;
  EXPECT_EQ(connectTo(f.root, deadlineAfter(5), nullptr, &fd), ncclSuccess);
  if (garbage) {
    char junk[64];
    std::memset(junk, 0xab, sizeof junk);
    EXPECT_EQ(writeAll(fd, junk, sizeof junk, deadlineAfter(5), nullptr), ncclSuccess);
  } else {
    HelloMsg h{};
    h.secret = secret;
    h.role = static_cast<uint32_t>(HelloRole::RankToRoot);
    h.rank = 0;
    h.nranks = 2;
    h.nId = 1;
    f.root.toWire(h.listenAddr);
    f.root.toWire(h.prevRootAddr);
    FrameHeader fh = makeFrameHeader(FrameType::Hello, 0, sizeof h);
    EXPECT_EQ(writeAll(fd, &fh, sizeof fh, deadlineAfter(5), nullptr), ncclSuccess);
    EXPECT_EQ(writeAll(fd, &h, sizeof h, deadlineAfter(5), nullptr), ncclSuccess);
  }
  char c;
  ncclResult_t r = readAll(fd, &c, 1, deadlineAfter(2), nullptr);
  closeFd(&fd);
  return r == ncclRemoteError;  // closed (or nothing ever came back)
}
}  // namespace

TEST(BootstrapSecurity, RootRefusesWrongSecretAndGarbage) {
  ncclUniqueId id;
  NCCL_OK(ncclGetUniqueId(&id));
  UniqueIdFields f;
  ASSERT_EQ(decodeUniqueId(id, &f, "test"), ncclSuccess);
  EXPECT_TRUE(rootRefuses(id, f.secret ^ 1, false));
  EXPECT_TRUE(rootRefuses(id, 0, true));
  // The genuine ranks are not disturbed.
  ncclComm_t comms[2] = {nullptr, nullptr};
  ncclResult_t res[2];
  runThreads(2, [&](int r) { res[r] = ncclCommInitRank(&comms[r], 2, id, r); });
  ASSERT_EQ(res[0], ncclSuccess) << ncclGetLastError(nullptr);
  ASSERT_EQ(res[1], ncclSuccess) << ncclGetLastError(nullptr);
  for (ncclComm_t c : comms) NCCL_EXPECT_OK(ncclCommDestroy(c));
}
