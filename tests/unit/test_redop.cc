#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "core/numeric.h"
#include "core/redop.h"
#include "core/peer_info.h"

using namespace mccl;

TEST(RedOps, BuiltinsResolve) {
  RedOpTable t;
  RedOpInfo info;
  EXPECT_EQ(t.resolve(ncclSum, ncclFloat32, 4, "t", &info), ncclSuccess);
  EXPECT_EQ(info.kind, RedKind::Sum);
  EXPECT_EQ(t.resolve(ncclMax, ncclInt8, 4, "t", &info), ncclSuccess);
  EXPECT_EQ(info.kind, RedKind::Max);
  // Avg: floats pre-multiply by 1/n, integers divide at the end.
  EXPECT_EQ(t.resolve(ncclAvg, ncclFloat64, 4, "t", &info), ncclSuccess);
  EXPECT_EQ(info.kind, RedKind::PreMulSum);
  double s;
  std::memcpy(&s, &info.scalarBits, 8);
  EXPECT_EQ(s, 0.25);
  EXPECT_EQ(t.resolve(ncclAvg, ncclInt32, 3, "t", &info), ncclSuccess);
  EXPECT_EQ(info.kind, RedKind::SumPostDiv);
  EXPECT_EQ(info.postDivisor, 3);
  EXPECT_EQ(t.resolve(static_cast<ncclRedOp_t>(-1), ncclFloat32, 4, "t", &info), ncclInvalidArgument);
  EXPECT_EQ(t.resolve(static_cast<ncclRedOp_t>(77), ncclFloat32, 4, "t", &info), ncclInvalidArgument);
}

TEST(RedOps, PreMulSumLifecycle) {
  RedOpTable t;
  t.setStamp(5);
  float two = 2.0f;
  ncclRedOp_t op;
  ASSERT_EQ(t.create(&op, &two, ncclFloat32, ncclScalarHostImmediate, true, "t"), ncclSuccess);
  EXPECT_GE(static_cast<int>(op), ncclNumOps);
  RedOpInfo info;
  ASSERT_EQ(t.resolve(op, ncclFloat32, 2, "t", &info), ncclSuccess);
  EXPECT_EQ(info.kind, RedKind::PreMulSum);
  float s;
  std::memcpy(&s, &info.scalarBits, 4);
  EXPECT_EQ(s, 2.0f);
  // Wrong datatype, another table (communicator), destroyed, built-in destroy.
  EXPECT_EQ(t.resolve(op, ncclFloat64, 2, "t", &info), ncclInvalidArgument);
  RedOpTable other;
  other.setStamp(6);
  EXPECT_EQ(other.resolve(op, ncclFloat32, 2, "t", &info), ncclInvalidArgument);
  EXPECT_NE(std::string(threadLastError()).find("another"), std::string::npos) << threadLastError();
  EXPECT_EQ(t.destroy(ncclSum, "ncclRedOpDestroy"), ncclInvalidArgument);
  EXPECT_NE(std::string(threadLastError()).find("built-in"), std::string::npos);
  EXPECT_EQ(t.destroy(op, "t"), ncclSuccess);
  EXPECT_EQ(t.destroy(op, "t"), ncclInvalidArgument);
  EXPECT_EQ(t.resolve(op, ncclFloat32, 2, "t", &info), ncclInvalidArgument);
}

TEST(RedOps, DeviceResidenceKeepsThePointer) {
  RedOpTable t;
  double scalar = 3.0;
  ncclRedOp_t op;
  ASSERT_EQ(t.create(&op, &scalar, ncclFloat64, ncclScalarDevice, true, "t"), ncclSuccess);
  RedOpInfo info;
  ASSERT_EQ(t.resolve(op, ncclFloat64, 2, "t", &info), ncclSuccess);
  EXPECT_EQ(info.scalarPtr, &scalar);
}

