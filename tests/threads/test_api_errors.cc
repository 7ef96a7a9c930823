// Misuse of the API: each case returns the documented code, names the argument in
// ncclGetLastError, never crashes and never touches the user's buffers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "mccl.h"
#include "nccl_device.h"
#include "test_util.h"

using namespace mccl_test;

namespace {

struct Misuse {
  const char* name;
  ncclResult_t expected;
  const char* mentions;  // a word the message must contain
  std::function<ncclResult_t(ncclComm_t comm, float* send, float* recv)> call;
};

class ApiErrors : public testing::Test {
 protected:
  void SetUp() override {
    NCCL_OK(ncclCommInitAll(&comm_, 1, nullptr));
  }
  void TearDown() override {
    if (comm_) NCCL_EXPECT_OK(ncclCommDestroy(comm_));
  }
  void run(const std::vector<Misuse>& cases) {
    for (const Misuse& m : cases) {
      float send[64], recv[64];
      for (int i = 0; i < 64; ++i) send[i] = static_cast<float>(i), recv[i] = -1.0f;
      ncclResult_t r = m.call(comm_, send, recv);
      EXPECT_EQ(r, m.expected) << m.name << ": " << ncclGetLastError(comm_);
      std::string msg = ncclGetLastError(nullptr);
      EXPECT_TRUE(contains(msg, m.mentions)) << m.name << ": message \"" << msg << "\" lacks \""
                                             << m.mentions << "\"";
      for (int i = 0; i < 64; ++i) {
        ASSERT_EQ(send[i], static_cast<float>(i)) << m.name << " touched sendbuff";
        ASSERT_EQ(recv[i], -1.0f) << m.name << " touched recvbuff";
      }
    }
  }
  ncclComm_t comm_ = nullptr;
};

}  // namespace

TEST_F(ApiErrors, CommunicatorArguments) {
  static ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t out;
  std::vector<Misuse> cases = {
      {"InitRank comm NULL", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) { return ncclCommInitRank(nullptr, 2, id, 0); }},
      {"InitRank nranks 0", ncclInvalidArgument, "nranks",
       [&](ncclComm_t, float*, float*) { return ncclCommInitRank(&out, 0, id, 0); }},
      {"InitRank rank -1", ncclInvalidArgument, "rank",
       [&](ncclComm_t, float*, float*) { return ncclCommInitRank(&out, 2, id, -1); }},
      {"InitRank rank == nranks", ncclInvalidArgument, "rank",
       [&](ncclComm_t, float*, float*) { return ncclCommInitRank(&out, 2, id, 2); }},
      {"InitRank garbage id", ncclInvalidArgument, "ncclUniqueId",
       [&](ncclComm_t, float*, float*) {
         ncclUniqueId bad;
         std::memset(&bad, 7, sizeof bad);
         return ncclCommInitRank(&out, 2, bad, 0);
       }},
      {"InitRankConfig bad magic", ncclInvalidArgument, "magic",
       [&](ncclComm_t, float*, float*) {
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.magic = 1;
         return ncclCommInitRankConfig(&out, 1, id, 0, &cfg);
       }},
      {"InitRankConfig bad size", ncclInvalidArgument, "size",
       [&](ncclComm_t, float*, float*) {
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.size = 1;
         return ncclCommInitRankConfig(&out, 1, id, 0, &cfg);
       }},
      {"InitRankScalable nId 0", ncclInvalidArgument, "nId",
       [&](ncclComm_t, float*, float*) { return ncclCommInitRankScalable(&out, 2, 0, 0, &id, nullptr); }},
      {"InitRankScalable ids NULL", ncclInvalidArgument, "commIds",
       [&](ncclComm_t, float*, float*) { return ncclCommInitRankScalable(&out, 2, 0, 1, nullptr, nullptr); }},
      {"InitAll comm NULL", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) { return ncclCommInitAll(nullptr, 2, nullptr); }},
      {"InitAll ndev 0", ncclInvalidArgument, "ndev",
       [&](ncclComm_t, float*, float*) { return ncclCommInitAll(&out, 0, nullptr); }},
      {"GetUniqueId NULL", ncclInvalidArgument, "uniqueId",
       [](ncclComm_t, float*, float*) { return ncclGetUniqueId(nullptr); }},
      {"GetVersion NULL", ncclInvalidArgument, "version",
       [](ncclComm_t, float*, float*) { return ncclGetVersion(nullptr); }},
      {"Count NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) {
         int c;
         return ncclCommCount(nullptr, &c);
       }},
      {"Count NULL out", ncclInvalidArgument, "count",
       [](ncclComm_t c, float*, float*) { return ncclCommCount(c, nullptr); }},
      {"CuDevice NULL out", ncclInvalidArgument, "device",
       [](ncclComm_t c, float*, float*) { return ncclCommCuDevice(c, nullptr); }},
      {"UserRank NULL out", ncclInvalidArgument, "rank",
       [](ncclComm_t c, float*, float*) { return ncclCommUserRank(c, nullptr); }},
      {"GetAsyncError NULL out", ncclInvalidArgument, "asyncError",
       [](ncclComm_t c, float*, float*) { return ncclCommGetAsyncError(c, nullptr); }},
      {"Split newcomm NULL", ncclInvalidArgument, "newcomm",
       [](ncclComm_t c, float*, float*) { return ncclCommSplit(c, 0, 0, nullptr, nullptr); }},
      {"Split color -5", ncclInvalidArgument, "color",
       [](ncclComm_t c, float*, float*) {
         ncclComm_t k;
         return ncclCommSplit(c, -5, 0, &k, nullptr);
       }},
      {"Split bad config", ncclInvalidArgument, "maxCTAs",
       [](ncclComm_t c, float*, float*) {
         ncclComm_t k;
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.maxCTAs = 0;
         return ncclCommSplit(c, 0, 0, &k, &cfg);
       }},
      {"Unknown comm handle", ncclInvalidArgument, "not a live communicator",
       [](ncclComm_t, float*, float*) {
         int c;
         static char fake[4096];
         return ncclCommCount(reinterpret_cast<ncclComm_t>(fake), &c);
       }},
      {"GroupEnd without start", ncclInvalidUsage, "ncclGroupStart",
       [](ncclComm_t, float*, float*) { return ncclGroupEnd(); }},
      {"GroupSimulateEnd NULL", ncclInvalidArgument, "simInfo",
       [](ncclComm_t, float*, float*) { return ncclGroupSimulateEnd(nullptr); }},
      {"MemAlloc NULL", ncclInvalidArgument, "ptr",
       [](ncclComm_t, float*, float*) { return ncclMemAlloc(nullptr, 16); }},
      {"MemFree foreign pointer", ncclInvalidArgument, "ncclMemAlloc",
       [](ncclComm_t, float* s, float*) { return ncclMemFree(s); }},
      {"Register NULL buff", ncclInvalidArgument, "buff",
       [](ncclComm_t c, float*, float*) {
         void* h;
         return ncclCommRegister(c, nullptr, 16, &h);
       }},
      {"Register size 0", ncclInvalidArgument, "size",
       [](ncclComm_t c, float* s, float*) {
         void* h;
         return ncclCommRegister(c, s, 0, &h);
       }},
      {"Register NULL handle", ncclInvalidArgument, "handle",
       [](ncclComm_t c, float* s, float*) { return ncclCommRegister(c, s, 16, nullptr); }},
      {"Deregister unknown handle", ncclInvalidArgument, "handle",
       [](ncclComm_t c, float* s, float*) { return ncclCommDeregister(c, s); }},
      {"RedOpCreate NULL op", ncclInvalidArgument, "op",
       [](ncclComm_t c, float* s, float*) {
         return ncclRedOpCreatePreMulSum(nullptr, s, ncclFloat, ncclScalarHostImmediate, c);
       }},
      {"RedOpCreate NULL scalar", ncclInvalidArgument, "scalar",
       [](ncclComm_t c, float*, float*) {
         ncclRedOp_t op;
         return ncclRedOpCreatePreMulSum(&op, nullptr, ncclFloat, ncclScalarHostImmediate, c);
       }},
      {"RedOpCreate bad type", ncclInvalidArgument, "datatype",
       [](ncclComm_t c, float* s, float*) {
         ncclRedOp_t op;
         return ncclRedOpCreatePreMulSum(&op, s, static_cast<ncclDataType_t>(42), ncclScalarHostImmediate, c);
       }},
      {"RedOpCreate bad residence", ncclInvalidArgument, "residence",
       [](ncclComm_t c, float* s, float*) {
         ncclRedOp_t op;
         return ncclRedOpCreatePreMulSum(&op, s, ncclFloat, static_cast<ncclScalarResidence_t>(5), c);
       }},
      {"RedOpDestroy built-in", ncclInvalidArgument, "built-in",
       [](ncclComm_t c, float*, float*) { return ncclRedOpDestroy(ncclSum, c); }},
      {"RedOpDestroy unknown", ncclInvalidArgument, "op",
       [](ncclComm_t c, float*, float*) { return ncclRedOpDestroy(static_cast<ncclRedOp_t>(1234), c); }},
  };
  run(cases);
}

TEST_F(ApiErrors, DataPathArguments) {
  std::vector<Misuse> cases = {
      {"AllReduce NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float* s, float* r) { return ncclAllReduce(s, r, 4, ncclFloat, ncclSum, nullptr, nullptr); }},
      {"AllReduce bad datatype", ncclInvalidArgument, "datatype",
       [](ncclComm_t c, float* s, float* r) {
         return ncclAllReduce(s, r, 4, static_cast<ncclDataType_t>(12), ncclSum, c, nullptr);
       }},
      {"AllReduce negative datatype", ncclInvalidArgument, "datatype",
       [](ncclComm_t c, float* s, float* r) {
         return ncclAllReduce(s, r, 4, static_cast<ncclDataType_t>(-1), ncclSum, c, nullptr);
       }},
      {"AllReduce bad op", ncclInvalidArgument, "op",
       [](ncclComm_t c, float* s, float* r) {
         return ncclAllReduce(s, r, 4, ncclFloat, static_cast<ncclRedOp_t>(99), c, nullptr);
       }},
      {"AllReduce NULL sendbuff", ncclInvalidArgument, "sendbuff",
       [](ncclComm_t c, float*, float* r) { return ncclAllReduce(nullptr, r, 4, ncclFloat, ncclSum, c, nullptr); }},
      {"AllReduce NULL recvbuff", ncclInvalidArgument, "recvbuff",
       [](ncclComm_t c, float* s, float*) { return ncclAllReduce(s, nullptr, 4, ncclFloat, ncclSum, c, nullptr); }},
      {"AllReduce count overflow", ncclInvalidArgument, "count",
       [](ncclComm_t c, float* s, float* r) {
         return ncclAllReduce(s, r, SIZE_MAX / 2, ncclFloat, ncclSum, c, nullptr);
       }},
      {"Broadcast root -1", ncclInvalidArgument, "root",
       [](ncclComm_t c, float* s, float* r) { return ncclBroadcast(s, r, 4, ncclFloat, -1, c, nullptr); }},
      {"Broadcast root == nranks", ncclInvalidArgument, "root",
       [](ncclComm_t c, float* s, float* r) { return ncclBroadcast(s, r, 4, ncclFloat, 1, c, nullptr); }},
      {"Bcast NULL buff", ncclInvalidArgument, "buff",
       [](ncclComm_t c, float*, float*) { return ncclBcast(nullptr, 4, ncclFloat, 0, c, nullptr); }},
      {"Reduce root 7", ncclInvalidArgument, "root",
       [](ncclComm_t c, float* s, float* r) { return ncclReduce(s, r, 4, ncclFloat, ncclSum, 7, c, nullptr); }},
      {"Reduce bad op", ncclInvalidArgument, "op",
       [](ncclComm_t c, float* s, float* r) {
         return ncclReduce(s, r, 4, ncclFloat, static_cast<ncclRedOp_t>(-3), 0, c, nullptr);
       }},
      {"AllGather NULL recvbuff", ncclInvalidArgument, "recvbuff",
       [](ncclComm_t c, float* s, float*) { return ncclAllGather(s, nullptr, 4, ncclFloat, c, nullptr); }},
      {"ReduceScatter NULL sendbuff", ncclInvalidArgument, "sendbuff",
       [](ncclComm_t c, float*, float* r) { return ncclReduceScatter(nullptr, r, 4, ncclFloat, ncclSum, c, nullptr); }},
      {"ReduceScatter bad datatype", ncclInvalidArgument, "datatype",
       [](ncclComm_t c, float* s, float* r) {
         return ncclReduceScatter(s, r, 4, static_cast<ncclDataType_t>(100), ncclSum, c, nullptr);
       }},
      {"Send peer -1", ncclInvalidArgument, "peer",
       [](ncclComm_t c, float* s, float*) { return ncclSend(s, 4, ncclFloat, -1, c, nullptr); }},
      {"Send peer == nranks", ncclInvalidArgument, "peer",
       [](ncclComm_t c, float* s, float*) { return ncclSend(s, 4, ncclFloat, 1, c, nullptr); }},
      {"Send NULL buff", ncclInvalidArgument, "sendbuff",
       [](ncclComm_t c, float*, float*) { return ncclSend(nullptr, 4, ncclFloat, 0, c, nullptr); }},
      {"Recv NULL buff", ncclInvalidArgument, "recvbuff",
       [](ncclComm_t c, float*, float*) { return ncclRecv(nullptr, 4, ncclFloat, 0, c, nullptr); }},
      {"Recv bad datatype", ncclInvalidArgument, "datatype",
       [](ncclComm_t c, float*, float* r) { return ncclRecv(r, 4, static_cast<ncclDataType_t>(13), 0, c, nullptr); }},
      {"PreMulSum wrong datatype", ncclInvalidArgument, "created for",
       [](ncclComm_t c, float* s, float* r) {
         double two = 2;
         ncclRedOp_t op;
         ncclRedOpCreatePreMulSum(&op, &two, ncclDouble, ncclScalarHostImmediate, c);
         ncclResult_t res = ncclAllReduce(s, r, 4, ncclFloat, op, c, nullptr);
         ncclRedOpDestroy(op, c);
         return res;
       }},
      {"PreMulSum of another communicator", ncclInvalidArgument, "another communicator",
       [](ncclComm_t c, float* s, float* r) {
         ncclComm_t other;
         ncclCommInitAll(&other, 1, nullptr);
         float two = 2;
         ncclRedOp_t op;
         ncclRedOpCreatePreMulSum(&op, &two, ncclFloat, ncclScalarHostImmediate, other);
         ncclResult_t res = ncclAllReduce(s, r, 4, ncclFloat, op, c, nullptr);
         ncclCommDestroy(other);
         return res;
       }},
      {"Destroyed PreMulSum", ncclInvalidArgument, "op",
       [](ncclComm_t c, float* s, float* r) {
         float two = 2;
         ncclRedOp_t op;
         ncclRedOpCreatePreMulSum(&op, &two, ncclFloat, ncclScalarHostImmediate, c);
         ncclRedOpDestroy(op, c);
         return ncclAllReduce(s, r, 4, ncclFloat, op, c, nullptr);
       }},
  };
  run(cases);
}

// Further entry points and argument combinations (NULL communicators everywhere, sizes
// that overflow, configs NCCL rejects, handles that were never communicators).
TEST_F(ApiErrors, MoreMisuse) {
  static ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  static ncclComm_t out;
  static char notAComm[256];
  ncclComm_t fake = reinterpret_cast<ncclComm_t>(notAComm);
  std::vector<Misuse> cases = {
      {"InitRank nranks negative", ncclInvalidArgument, "nranks",
       [](ncclComm_t, float*, float*) { return ncclCommInitRank(&out, -3, id, 0); }},
      {"InitRankConfig minCTAs 0", ncclInvalidArgument, "minCTAs",
       [](ncclComm_t, float*, float*) {
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.minCTAs = 0;
         return ncclCommInitRankConfig(&out, 1, id, 0, &cfg);
       }},
      {"InitRankConfig maxCTAs negative", ncclInvalidArgument, "maxCTAs",
       [](ncclComm_t, float*, float*) {
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.maxCTAs = -1;
         return ncclCommInitRankConfig(&out, 1, id, 0, &cfg);
       }},
      {"InitRankConfig minCTAs > maxCTAs", ncclInvalidArgument, "minCTAs",
       [](ncclComm_t, float*, float*) {
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.minCTAs = 16;
         cfg.maxCTAs = 2;
         return ncclCommInitRankConfig(&out, 1, id, 0, &cfg);
       }},
      {"InitRankConfig splitShare 3", ncclInvalidArgument, "splitShare",
       [](ncclComm_t, float*, float*) {
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.splitShare = 3;
         return ncclCommInitRankConfig(&out, 1, id, 0, &cfg);
       }},
      {"InitRankConfig cgaClusterSize negative", ncclInvalidArgument, "cgaClusterSize",
       [](ncclComm_t, float*, float*) {
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.cgaClusterSize = -2;
         return ncclCommInitRankConfig(&out, 1, id, 0, &cfg);
       }},
      {"InitRankConfig unknown netName", ncclInvalidArgument, "netName",
       [](ncclComm_t, float*, float*) {
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.netName = "Carrier-Pigeon";
         return ncclCommInitRankConfig(&out, 1, id, 0, &cfg);
       }},
      {"InitRankScalable nId > nranks", ncclInvalidArgument, "nId",
       [](ncclComm_t, float*, float*) { return ncclCommInitRankScalable(&out, 1, 0, 2, &id, nullptr); }},
      {"InitRankScalable comm NULL", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) { return ncclCommInitRankScalable(nullptr, 1, 0, 1, &id, nullptr); }},
      {"InitAll ndev negative", ncclInvalidArgument, "ndev",
       [](ncclComm_t, float*, float*) {
         ncclComm_t comms[1];
         return ncclCommInitAll(comms, -1, nullptr);
       }},
      {"Finalize NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) { return ncclCommFinalize(nullptr); }},
      {"Finalize not a comm", ncclInvalidArgument, "not a live communicator",
       [fake](ncclComm_t, float*, float*) { return ncclCommFinalize(fake); }},
      {"Destroy not a comm", ncclInvalidArgument, "not a live communicator",
       [fake](ncclComm_t, float*, float*) { return ncclCommDestroy(fake); }},
      {"Abort not a comm", ncclInvalidArgument, "not a live communicator",
       [fake](ncclComm_t, float*, float*) { return ncclCommAbort(fake); }},
      {"GetAsyncError not a comm", ncclInvalidArgument, "not a live communicator",
       [fake](ncclComm_t, float*, float*) {
         ncclResult_t e;
         return ncclCommGetAsyncError(fake, &e);
       }},
      {"Split not a comm", ncclInvalidArgument, "not a live communicator",
       [fake](ncclComm_t, float*, float*) { return ncclCommSplit(fake, 0, 0, &out, nullptr); }},
      {"Split bad config magic", ncclInvalidArgument, "magic",
       [](ncclComm_t c, float*, float*) {
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.magic = 0;
         return ncclCommSplit(c, 0, 0, &out, &cfg);
       }},
      {"CuDevice NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) {
         int d;
         return ncclCommCuDevice(nullptr, &d);
       }},
      {"UserRank NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) {
         int r;
         return ncclCommUserRank(nullptr, &r);
       }},
      {"IsHost NULL out", ncclInvalidArgument, "isHost",
       [](ncclComm_t c, float*, float*) { return mcclCommIsHost(c, nullptr); }},
      {"LaunchGraphCounters NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) {
         uint64_t m, r;
         return mcclCommLaunchGraphCounters(nullptr, &m, &r);
       }},
      {"LaunchGraphCounters NULL made", ncclInvalidArgument, "made",
       [](ncclComm_t c, float*, float*) {
         uint64_t r;
         return mcclCommLaunchGraphCounters(c, nullptr, &r);
       }},
      {"LaunchGraphCounters NULL replayed", ncclInvalidArgument, "replayed",
       [](ncclComm_t c, float*, float*) {
         uint64_t m;
         return mcclCommLaunchGraphCounters(c, &m, nullptr);
       }},
      {"Register NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float* s, float*) {
         void* h;
         return ncclCommRegister(nullptr, s, 64, &h);
       }},
      {"Deregister NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) { return ncclCommDeregister(nullptr, nullptr); }},
      {"RedOpCreate NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) {
         float two = 2;
         ncclRedOp_t op;
         return ncclRedOpCreatePreMulSum(&op, &two, ncclFloat, ncclScalarHostImmediate, nullptr);
       }},
      {"RedOpDestroy NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) { return ncclRedOpDestroy(static_cast<ncclRedOp_t>(ncclNumOps), nullptr); }},
      {"Broadcast NULL recvbuff", ncclInvalidArgument, "recvbuff",
       [](ncclComm_t c, float* s, float*) { return ncclBroadcast(s, nullptr, 4, ncclFloat, 0, c, nullptr); }},
      {"Reduce NULL recvbuff at root", ncclInvalidArgument, "recvbuff",
       [](ncclComm_t c, float* s, float*) { return ncclReduce(s, nullptr, 4, ncclFloat, ncclSum, 0, c, nullptr); }},
      {"AllGather bad datatype", ncclInvalidArgument, "datatype",
       [](ncclComm_t c, float* s, float* r) {
         return ncclAllGather(s, r, 4, static_cast<ncclDataType_t>(77), c, nullptr);
       }},
      {"AllGather count overflow", ncclInvalidArgument, "count",
       [](ncclComm_t c, float* s, float* r) { return ncclAllGather(s, r, SIZE_MAX / 2, ncclFloat, c, nullptr); }},
      {"ReduceScatter bad op", ncclInvalidArgument, "op",
       [](ncclComm_t c, float* s, float* r) {
         return ncclReduceScatter(s, r, 4, ncclFloat, static_cast<ncclRedOp_t>(ncclNumOps), c, nullptr);
       }},
      {"ReduceScatter count overflow", ncclInvalidArgument, "count",
       [](ncclComm_t c, float* s, float* r) {
         return ncclReduceScatter(s, r, SIZE_MAX / 3, ncclFloat, ncclSum, c, nullptr);
       }},
      {"Send count overflow", ncclInvalidArgument, "count",
       [](ncclComm_t c, float* s, float*) { return ncclSend(s, SIZE_MAX / 2, ncclFloat, 0, c, nullptr); }},
      {"Recv NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float* r) { return ncclRecv(r, 4, ncclFloat, 0, nullptr, nullptr); }},
      {"Broadcast not a comm", ncclInvalidArgument, "not a live communicator",
       [fake](ncclComm_t, float* s, float* r) { return ncclBroadcast(s, r, 4, ncclFloat, 0, fake, nullptr); }},
      {"GroupSimulateEnd uninitialised simInfo", ncclInvalidArgument, "NCCL_SIM_INFO_INITIALIZER",
       [](ncclComm_t, float*, float*) {
         ncclSimInfo_t info;
         std::memset(&info, 0, sizeof info);
         ncclGroupStart();
         return ncclGroupSimulateEnd(&info);
       }},
  };
  run(cases);
}

// The NCCL 2.28 calls: AlltoAll, Gather, Scatter, mccl's AlltoAllv, ncclGroupSimulateEnd,
// and the window calls this version does not support.
TEST_F(ApiErrors, Nccl228Calls) {
  static const size_t c4[1] = {4}, d0[1] = {0}, big[1] = {SIZE_MAX / 2};
  std::vector<Misuse> cases = {
      {"AlltoAll NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float* s, float* r) { return ncclAlltoAll(s, r, 4, ncclFloat, nullptr, nullptr); }},
      {"AlltoAll bad datatype", ncclInvalidArgument, "datatype",
       [](ncclComm_t c, float* s, float* r) {
         return ncclAlltoAll(s, r, 4, static_cast<ncclDataType_t>(ncclNumTypes), c, nullptr);
       }},
      {"AlltoAll NULL sendbuff", ncclInvalidArgument, "sendbuff",
       [](ncclComm_t c, float*, float* r) { return ncclAlltoAll(nullptr, r, 4, ncclFloat, c, nullptr); }},
      {"AlltoAll NULL recvbuff", ncclInvalidArgument, "recvbuff",
       [](ncclComm_t c, float* s, float*) { return ncclAlltoAll(s, nullptr, 4, ncclFloat, c, nullptr); }},
      {"AlltoAll overlapping", ncclInvalidArgument, "overlap",
       [](ncclComm_t c, float*, float* r) { return ncclAlltoAll(r + 2, r, 4, ncclFloat, c, nullptr); }},
      {"AlltoAll count overflow", ncclInvalidArgument, "count",
       [](ncclComm_t c, float* s, float* r) { return ncclAlltoAll(s, r, SIZE_MAX / 2, ncclFloat, c, nullptr); }},
      {"Gather root -1", ncclInvalidArgument, "root",
       [](ncclComm_t c, float* s, float* r) { return ncclGather(s, r, 4, ncclFloat, -1, c, nullptr); }},
      {"Gather root 1 of 1", ncclInvalidArgument, "root",
       [](ncclComm_t c, float* s, float* r) { return ncclGather(s, r, 4, ncclFloat, 1, c, nullptr); }},
      {"Gather NULL sendbuff", ncclInvalidArgument, "sendbuff",
       [](ncclComm_t c, float*, float* r) { return ncclGather(nullptr, r, 4, ncclFloat, 0, c, nullptr); }},
      {"Gather NULL recvbuff at root", ncclInvalidArgument, "recvbuff",
       [](ncclComm_t c, float* s, float*) { return ncclGather(s, nullptr, 4, ncclFloat, 0, c, nullptr); }},
      {"Gather in place at the wrong offset", ncclInvalidArgument, "in-place",
       [](ncclComm_t c, float*, float* r) { return ncclGather(r + 1, r, 4, ncclFloat, 0, c, nullptr); }},
      {"Gather bad datatype", ncclInvalidArgument, "datatype",
       [](ncclComm_t c, float* s, float* r) {
         return ncclGather(s, r, 4, static_cast<ncclDataType_t>(-3), 0, c, nullptr);
       }},
      {"Scatter root 7", ncclInvalidArgument, "root",
       [](ncclComm_t c, float* s, float* r) { return ncclScatter(s, r, 4, ncclFloat, 7, c, nullptr); }},
      {"Scatter NULL recvbuff", ncclInvalidArgument, "recvbuff",
       [](ncclComm_t c, float* s, float*) { return ncclScatter(s, nullptr, 4, ncclFloat, 0, c, nullptr); }},
      {"Scatter NULL sendbuff at root", ncclInvalidArgument, "sendbuff",
       [](ncclComm_t c, float*, float* r) { return ncclScatter(nullptr, r, 4, ncclFloat, 0, c, nullptr); }},
      {"Scatter in place at the wrong offset", ncclInvalidArgument, "in-place",
       [](ncclComm_t c, float* s, float*) { return ncclScatter(s, s + 3, 4, ncclFloat, 0, c, nullptr); }},
      {"Scatter NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float* s, float* r) { return ncclScatter(s, r, 4, ncclFloat, 0, nullptr, nullptr); }},
      {"AlltoAllv NULL sendcounts", ncclInvalidArgument, "sendcounts",
       [](ncclComm_t c, float* s, float* r) { return mcclAlltoAllv(s, nullptr, d0, r, c4, d0, ncclFloat, c, nullptr); }},
      {"AlltoAllv NULL rdispls", ncclInvalidArgument, "rdispls",
       [](ncclComm_t c, float* s, float* r) { return mcclAlltoAllv(s, c4, d0, r, c4, nullptr, ncclFloat, c, nullptr); }},
      {"AlltoAllv displacement overflow", ncclInvalidArgument, "sdispls",
       [](ncclComm_t c, float* s, float* r) { return mcclAlltoAllv(s, c4, big, r, c4, d0, ncclFloat, c, nullptr); }},
      {"AlltoAllv NULL sendbuff", ncclInvalidArgument, "sendbuff",
       [](ncclComm_t c, float*, float* r) { return mcclAlltoAllv(nullptr, c4, d0, r, c4, d0, ncclFloat, c, nullptr); }},
      {"AlltoAllv in place", ncclInvalidArgument, "in place",
       [](ncclComm_t c, float*, float* r) { return mcclAlltoAllv(r, c4, d0, r, c4, d0, ncclFloat, c, nullptr); }},
      {"AlltoAllv bad datatype", ncclInvalidArgument, "datatype",
       [](ncclComm_t c, float* s, float* r) {
         return mcclAlltoAllv(s, c4, d0, r, c4, d0, static_cast<ncclDataType_t>(99), c, nullptr);
       }},
      {"GroupSimulateEnd wrong version", ncclInvalidArgument, "version",
       [](ncclComm_t c, float* s, float* r) {
         ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
         info.version = 7;
         ncclGroupStart();
         ncclAlltoAll(s, r, 4, ncclFloat, c, nullptr);  // dropped with the group
         return ncclGroupSimulateEnd(&info);
       }},
      {"GroupSimulateEnd wrong size", ncclInvalidArgument, "size",
       [](ncclComm_t, float*, float*) {
         ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
         info.size = 4;
         ncclGroupStart();
         return ncclGroupSimulateEnd(&info);
       }},
      {"GroupSimulateEnd NULL inside a group", ncclInvalidArgument, "simInfo",
       [](ncclComm_t c, float* s, float* r) {
         ncclGroupStart();
         ncclGather(s, r, 4, ncclFloat, 0, c, nullptr);  // dropped with the group
         return ncclGroupSimulateEnd(nullptr);
       }},
      {"WindowRegister on a host communicator", ncclInvalidUsage, "host communicator",
       [](ncclComm_t c, float*, float* r) {
         ncclWindow_t w = nullptr;
         return ncclCommWindowRegister(c, r, 64, &w, NCCL_WIN_COLL_SYMMETRIC);
       }},
      {"WindowRegister NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float* r) {
         ncclWindow_t w = nullptr;
         return ncclCommWindowRegister(nullptr, r, 64, &w, NCCL_WIN_COLL_SYMMETRIC);
       }},
      {"WindowRegister NULL win", ncclInvalidArgument, "win",
       [](ncclComm_t c, float*, float* r) { return ncclCommWindowRegister(c, r, 64, nullptr, NCCL_WIN_DEFAULT); }},
      {"WindowRegister NULL buff", ncclInvalidArgument, "buff",
       [](ncclComm_t c, float*, float*) {
         ncclWindow_t w = nullptr;
         return ncclCommWindowRegister(c, nullptr, 64, &w, NCCL_WIN_DEFAULT);
       }},
      {"WindowRegister size 0", ncclInvalidArgument, "size is 0",
       [](ncclComm_t c, float*, float* r) {
         ncclWindow_t w = nullptr;
         return ncclCommWindowRegister(c, r, 0, &w, NCCL_WIN_COLL_SYMMETRIC);
       }},
      {"WindowRegister bad flags", ncclInvalidArgument, "winFlags",
       [](ncclComm_t c, float*, float* r) {
         ncclWindow_t w;
         return ncclCommWindowRegister(c, r, 64, &w, 12);
       }},
      {"WindowDeregister NULL comm", ncclInvalidArgument, "comm",
       [](ncclComm_t, float*, float*) { return ncclCommWindowDeregister(nullptr, nullptr); }},
      {"WindowDeregister NULL win", ncclInvalidArgument, "win is NULL",
       [](ncclComm_t c, float*, float*) { return ncclCommWindowDeregister(c, nullptr); }},
      {"WindowDeregister on a host communicator", ncclInvalidUsage, "host communicator",
       [](ncclComm_t c, float*, float* r) {
         return ncclCommWindowDeregister(c, reinterpret_cast<ncclWindow_t>(r));
       }},
  };
  run(cases);
  // After all of that no group is open and nothing is queued: an operation runs at once.
  float in[2] = {3, 4}, out[2] = {0, 0};
  NCCL_OK(ncclAlltoAll(in, out, 2, ncclFloat, comm_, nullptr));
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], 4.0f);
}

// The device API's host side (nccl_device.h) on a host communicator: every argument is
// checked, GIN and the LL all-to-all are refused with a sentence, and a valid request is
// refused because a host communicator has no GPU memory to map; nothing is written.
namespace {
bool untouched(const void* p, size_t bytes, unsigned char fill) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < bytes; i++)
    if (b[i] != fill) return false;
  return true;
}
}  // namespace

TEST_F(ApiErrors, DeviceCommunicatorArguments) {
  ncclDevComm dc;
  std::memset(&dc, 0xAB, sizeof dc);
  ncclDevResourceHandle handle = 77;
  ncclDevResourceRequirements res;
  std::memset(&res, 0, sizeof res);
  res.bufferSize = 256;
  res.outBufferHandle = &handle;
  struct Case {
    const char* name;
    ncclResult_t expected;
    const char* mentions;
    std::function<void(ncclDevCommRequirements&)> set;
  };
  const std::vector<Case> cases = {
      {"negative lsaBarrierCount", ncclInvalidArgument, "lsaBarrierCount",
       [](ncclDevCommRequirements& r) { r.lsaBarrierCount = -1; }},
      {"negative ginSignalCount", ncclInvalidArgument, "negative",
       [](ncclDevCommRequirements& r) { r.ginSignalCount = -3; }},
      {"GIN signals", ncclInvalidUsage, "GIN", [](ncclDevCommRequirements& r) { r.ginSignalCount = 2; }},
      {"GIN counters", ncclInvalidUsage, "GIN", [](ncclDevCommRequirements& r) { r.ginCounterCount = 1; }},
      {"GIN forced", ncclInvalidUsage, "GIN", [](ncclDevCommRequirements& r) { r.ginForceEnable = true; }},
      {"rail GIN barriers", ncclInvalidUsage, "GIN", [](ncclDevCommRequirements& r) { r.railGinBarrierCount = 4; }},
      {"world barriers", ncclInvalidUsage, "barrierCount", [](ncclDevCommRequirements& r) { r.barrierCount = 4; }},
      // Accepted (NCCL 2.28 has no handle for them), so refused only for the communicator.
      {"LL all-to-all counts on a host communicator", ncclInvalidUsage, "host communicator",
       [](ncclDevCommRequirements& r) { r.lsaLLA2ABlockCount = 1, r.lsaLLA2ASlotCount = 8; }},
      {"resource with GIN signals", ncclInvalidUsage, "GIN signals",
       [&](ncclDevCommRequirements& r) {
         res.ginSignalCount = 1;
         r.resourceRequirementsList = &res;
       }},
      {"resource alignment", ncclInvalidArgument, "bufferAlign",
       [&](ncclDevCommRequirements& r) {
         res.ginSignalCount = 0;
         res.bufferAlign = 48;
         r.resourceRequirementsList = &res;
       }},
      {"lsaMultimem", ncclInvalidUsage, "multicast", [](ncclDevCommRequirements& r) { r.lsaMultimem = true; }},
      {"team multimem", ncclInvalidUsage, "multicast",
       [](ncclDevCommRequirements& r) {
         static ncclTeamRequirements team;
         std::memset(&team, 0, sizeof team);
         team.team = ncclTeam{1, 0, 1};
         team.multimem = true;
         r.teamRequirementsList = &team;
       }},
      {"valid request on a host communicator", ncclInvalidUsage, "host communicator",
       [&](ncclDevCommRequirements& r) {
         res.bufferAlign = 64;
         r.resourceRequirementsList = &res;
         r.lsaBarrierCount = 8;
       }},
  };
  for (const Case& c : cases) {
    ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
    c.set(reqs);
    EXPECT_EQ(ncclDevCommCreate(comm_, &reqs, &dc), c.expected) << c.name;
    EXPECT_TRUE(contains(ncclGetLastError(comm_), c.mentions)) << c.name << ": " << ncclGetLastError(comm_);
    EXPECT_TRUE(untouched(&dc, sizeof dc, 0xAB)) << c.name << " wrote the device communicator";
    EXPECT_EQ(handle, 77u) << c.name << " wrote a resource handle";
  }
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  EXPECT_EQ(ncclDevCommCreate(nullptr, &reqs, &dc), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "comm"));
  EXPECT_EQ(ncclDevCommCreate(comm_, nullptr, &dc), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "reqs is NULL"));
  EXPECT_EQ(ncclDevCommCreate(comm_, &reqs, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "outDevComm is NULL"));
  EXPECT_EQ(ncclDevCommDestroy(nullptr, &dc), ncclInvalidArgument);
  EXPECT_EQ(ncclDevCommDestroy(comm_, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "devComm is NULL"));
  EXPECT_EQ(ncclDevCommDestroy(comm_, &dc), ncclInvalidUsage);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "host communicator"));
  EXPECT_TRUE(untouched(&dc, sizeof dc, 0xAB));
}

TEST_F(ApiErrors, DeviceRequirementBuilders) {
  ncclLsaBarrierHandle h{5, 5};
  ncclDevResourceRequirements req;
  std::memset(&req, 0x5A, sizeof req);
  // A set of 3 barriers over a team of 4: per member 3 epoch words and 3 x 4 inbox words.
  NCCL_OK(ncclLsaBarrierCreateRequirement(ncclTeam{4, 1, 1}, 3, &h, &req));
  EXPECT_EQ(req.bufferSize, 3u * (1 + 4) * sizeof(uint32_t));
  EXPECT_EQ(req.outBufferHandle, &h.bufHandle);
  EXPECT_EQ(req.next, nullptr);
  EXPECT_EQ(req.ginSignalCount, 0);
  EXPECT_EQ(req.ginCounterCount, 0);
  EXPECT_EQ(h.nBarriers, 3);
  ncclLsaBarrierHandle h2{5, 5};
  ncclDevResourceRequirements req2;
  std::memset(&req2, 0x5A, sizeof req2);
  const ncclDevResourceRequirements before = req2;
  EXPECT_EQ(ncclLsaBarrierCreateRequirement(ncclTeam{1, 0, 1}, -1, &h2, &req2), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "nBarriers"));
  EXPECT_EQ(ncclLsaBarrierCreateRequirement(ncclTeam{0, 0, 1}, 2, &h2, &req2), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "team"));
  EXPECT_EQ(ncclLsaBarrierCreateRequirement(ncclTeam{1, 0, 1}, 2, &h2, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "outReq"));
  EXPECT_EQ(ncclLsaBarrierCreateRequirement(ncclTeam{1, 0, 1}, 2, nullptr, &req2), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "outHandle"));
  EXPECT_EQ(std::memcmp(&before, &req2, sizeof req2), 0);
  EXPECT_EQ(h2.bufHandle, 5u);
  ncclGinBarrierHandle gh;
  EXPECT_EQ(ncclGinBarrierCreateRequirement(comm_, ncclTeam{1, 0, 1}, 1, &gh, &req2), ncclInvalidUsage);
  EXPECT_TRUE(contains(ncclGetLastError(comm_), "GIN"));
  EXPECT_EQ(std::memcmp(&before, &req2, sizeof req2), 0);

  // The LL all-to-all: a line per 8 bytes of a value; per block a header line and two
  // halves of nSlots lines, 16 bytes each.
  EXPECT_EQ(ncclLLA2ACalcSlots(10, 12), 20);
  EXPECT_EQ(ncclLLA2ACalcSlots(7, 8), 7);
  EXPECT_EQ(ncclLLA2ACalcSlots(3, 1), 3);
  EXPECT_EQ(ncclLLA2ACalcSlots(0, 16), 0);
  EXPECT_EQ(ncclLLA2ACalcSlots(-1, 8), -1);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "maxElts"));
  EXPECT_EQ(ncclLLA2ACalcSlots(1 << 30, 64), -1);
  ncclLLA2AHandle lh{9, 9};
  NCCL_OK(ncclLLA2ACreateRequirement(3, 20, &lh, &req));
  EXPECT_EQ(req.bufferSize, 3u * (1 + 2 * 20) * 16);
  EXPECT_EQ(req.bufferAlign, 16u);
  EXPECT_EQ(req.outBufferHandle, &lh.bufHandle);
  EXPECT_EQ(req.next, nullptr);
  EXPECT_EQ(req.ginSignalCount, 0);
  EXPECT_EQ(lh.nSlots, 20u);
  ncclLLA2AHandle lh2{9, 9};
  EXPECT_EQ(ncclLLA2ACreateRequirement(-1, 4, &lh2, &req2), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "nBlocks"));
  EXPECT_EQ(ncclLLA2ACreateRequirement(1, -4, &lh2, &req2), ncclInvalidArgument);
  EXPECT_EQ(ncclLLA2ACreateRequirement(1, 4, nullptr, &req2), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "outHandle"));
  EXPECT_EQ(ncclLLA2ACreateRequirement(1, 4, &lh2, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "outReq"));
  EXPECT_EQ(std::memcmp(&before, &req2, sizeof req2), 0);
  EXPECT_EQ(lh2.nSlots, 9u);
}

TEST_F(ApiErrors, HostTeams) {
  ncclTeam w = ncclTeamWorld(comm_);
  EXPECT_EQ(w.nRanks, 1);
  EXPECT_EQ(w.rank, 0);
  EXPECT_EQ(w.stride, 1);
  // A host communicator's ranks share no GPU memory: each is its own LSA team.
  ncclTeam l = ncclTeamLsa(comm_);
  EXPECT_EQ(l.nRanks, 1);
  EXPECT_EQ(l.rank, 0);
  EXPECT_EQ(ncclTeamRail(comm_).nRanks, 1);
  EXPECT_EQ(ncclTeamRankToWorld(comm_, w, 0), 0);
  EXPECT_EQ(ncclTeamRankToLsa(comm_, l, 0), 0);
  EXPECT_EQ(ncclTeamWorld(nullptr).nRanks, 0);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "comm"));
  EXPECT_EQ(ncclTeamRankToWorld(nullptr, w, 0), -1);
}

TEST(ApiErrorsLifecycle, FailedAlltoAllFailsItsGroup) {
  ncclComm_t comm;
  NCCL_OK(ncclCommInitAll(&comm, 1, nullptr));
  float a[4] = {1, 2, 3, 4}, b[4] = {0, 0, 0, 0};
  NCCL_OK(ncclGroupStart());
  NCCL_OK(ncclAllReduce(a, b, 4, ncclFloat, ncclSum, comm, nullptr));
  EXPECT_EQ(ncclScatter(a, b, 4, ncclFloat, 3, comm, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidArgument);
  EXPECT_EQ(b[0], 0.0f);  // the AllReduce of the failed group did not run
  NCCL_OK(ncclCommDestroy(comm));
}

TEST(ApiErrorsLifecycle, DestroyedCommIsRejected) {
  ncclComm_t comm;
  NCCL_OK(ncclCommInitAll(&comm, 1, nullptr));
  NCCL_OK(ncclCommDestroy(comm));
  float buf[4] = {1, 2, 3, 4};
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "not a live communicator"));
  EXPECT_EQ(ncclCommDestroy(comm), ncclInvalidArgument);
  EXPECT_EQ(ncclCommAbort(comm), ncclInvalidArgument);
  EXPECT_EQ(ncclCommDestroy(nullptr), ncclSuccess);  // as NCCL: destroying NULL is a no-op
  EXPECT_EQ(buf[0], 1);
}

TEST(ApiErrorsLifecycle, FinalizedCommTakesNoOperations) {
  ncclComm_t comm;
  NCCL_OK(ncclCommInitAll(&comm, 1, nullptr));
  NCCL_OK(ncclCommFinalize(comm));
  float buf[4] = {1, 2, 3, 4};
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, nullptr), ncclInvalidUsage);
  EXPECT_TRUE(contains(ncclGetLastError(comm), "finalized"));
  NCCL_OK(ncclCommDestroy(comm));
}

TEST(ApiErrorsLifecycle, FailedGroupReportsAtEnd) {
  ncclComm_t comm;
  NCCL_OK(ncclCommInitAll(&comm, 1, nullptr));
  float buf[4] = {1, 2, 3, 4};
  NCCL_OK(ncclGroupStart());
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat, static_cast<ncclRedOp_t>(50), comm, nullptr),
            ncclInvalidArgument);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidArgument);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "group"));
  NCCL_OK(ncclCommDestroy(comm));
}

TEST(Versions, VersionCodes) {
  int v = 0;
  NCCL_OK(ncclGetVersion(&v));
  EXPECT_EQ(v, NCCL_VERSION(2, 28, 3));
  EXPECT_EQ(NCCL_VERSION_CODE, 22803);
  EXPECT_EQ(v, NCCL_VERSION_CODE);
  EXPECT_TRUE(contains(mcclGetVersionString(), "mccl"));
  for (int r = 0; r < ncclNumResults; ++r) EXPECT_NE(ncclGetErrorString(static_cast<ncclResult_t>(r)), nullptr);
}

// ncclCommShrink / ncclCommRevoke misuse: ncclInvalidArgument naming the argument, nothing
// created (newcomm untouched), the parent unchanged (checked by a collective afterwards).
TEST(ApiErrorsShrink, BadArgumentsCreateNothing) {
  std::vector<ncclComm_t> comms = makeHostComms(3);
  ncclComm_t c = comms[0];
  ncclComm_t sentinel = reinterpret_cast<ncclComm_t>(0x1234);
  struct Case {
    const char* name;
    const char* mentions;
    std::function<ncclResult_t(ncclComm_t*)> call;
  };
  int one[] = {1}, twice[] = {1, 1}, all[] = {0, 1, 2}, outside[] = {2, 3}, negative[] = {-1}, self[] = {2, 0};
  std::vector<Case> cases = {
      {"comm NULL", "comm", [&](ncclComm_t* o) { return ncclCommShrink(nullptr, one, 1, o, nullptr, 0); }},
      {"newcomm NULL", "newcomm", [&](ncclComm_t*) { return ncclCommShrink(c, one, 1, nullptr, nullptr, 0); }},
      {"count -1", "excludeRanksCount", [&](ncclComm_t* o) { return ncclCommShrink(c, one, -1, o, nullptr, 0); }},
      {"count > nranks", "excludeRanksCount", [&](ncclComm_t* o) { return ncclCommShrink(c, all, 4, o, nullptr, 0); }},
      {"list NULL", "excludeRanksList is NULL", [&](ncclComm_t* o) { return ncclCommShrink(c, nullptr, 1, o, nullptr, 0); }},
      {"rank out of range", "excludeRanksList[1] = 3", [&](ncclComm_t* o) { return ncclCommShrink(c, outside, 2, o, nullptr, 0); }},
      {"negative rank", "excludeRanksList[0] = -1", [&](ncclComm_t* o) { return ncclCommShrink(c, negative, 1, o, nullptr, 0); }},
      {"duplicate", "appears twice", [&](ncclComm_t* o) { return ncclCommShrink(c, twice, 2, o, nullptr, 0); }},
      {"every rank", "all 3 ranks", [&](ncclComm_t* o) { return ncclCommShrink(c, all, 3, o, nullptr, 0); }},
      {"caller excluded", "excluded ranks must not call", [&](ncclComm_t* o) { return ncclCommShrink(c, self, 2, o, nullptr, 0); }},
      {"unknown flags", "shrinkFlags = 2", [&](ncclComm_t* o) { return ncclCommShrink(c, one, 1, o, nullptr, 2); }},
      {"abort flag with unknown bits", "shrinkFlags = 5", [&](ncclComm_t* o) { return ncclCommShrink(c, one, 1, o, nullptr, 5); }},
      {"bad config", "magic", [&](ncclComm_t* o) {
         ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
         cfg.magic = 1;
         return ncclCommShrink(c, one, 1, o, &cfg, NCCL_SHRINK_ABORT);
       }},
      {"revoke comm NULL", "comm", [&](ncclComm_t*) { return ncclCommRevoke(nullptr, 0); }},
      {"revoke flags", "revokeFlags = 1", [&](ncclComm_t*) { return ncclCommRevoke(c, 1); }},
  };
  for (const Case& k : cases) {
    ncclComm_t out = sentinel;
    EXPECT_EQ(k.call(&out), ncclInvalidArgument) << k.name;
    std::string msg = ncclGetLastError(nullptr);
    EXPECT_TRUE(contains(msg, k.mentions)) << k.name << ": \"" << msg << "\" lacks \"" << k.mentions << "\"";
    EXPECT_EQ(out, sentinel) << k.name << " wrote newcomm";
  }
  // None of it revoked or broke the parent (the bad-config case used NCCL_SHRINK_ABORT).
  std::vector<ncclResult_t> res(3);
  runThreads(3, [&](int r) {
    float x = 1, y = 0;
    res[r] = ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, comms[r], nullptr);
    if (res[r] == ncclSuccess && y != 3.0f) res[r] = ncclInternalError;
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(res[r], ncclSuccess) << ncclGetLastError(comms[r]);
  destroyComms(comms);
}

// ncclMemAlloc of 0 bytes succeeds with a NULL pointer, as NVIDIA's does (it calls
// cudaMalloc(ptr, 0)): nccl-tests allocates a 0-byte buffer for some tests and sizes, and
// frees it with ncclMemFree(NULL).
TEST(MemAlloc, ZeroBytesGiveNullAsNccl) {
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(ncclMemAlloc(&p, 0), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(ncclMemFree(p), ncclSuccess);
}
