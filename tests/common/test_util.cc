#include "test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "mccl.h"

namespace mccl_test {

std::vector<ncclComm_t> makeHostComms(int n) {
  std::vector<ncclComm_t> comms(static_cast<size_t>(n), nullptr);
  ncclResult_t r = ncclCommInitAll(comms.data(), n, nullptr);
  EXPECT_EQ(r, ncclSuccess) << ncclGetLastError(nullptr);
  return comms;
}

void destroyComms(std::vector<ncclComm_t>& comms) {
  for (ncclComm_t c : comms)
    if (c) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  comms.clear();
}

}  // namespace mccl_test
