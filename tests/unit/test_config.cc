#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/config.h"
#include "core/error.h"
#include "core/knobs.h"

using namespace mccl;

TEST(Config, NullMeansDefaults) {
  CommConfig c;
  ASSERT_EQ(parseConfig(nullptr, "test", &c), ncclSuccess);
  EXPECT_TRUE(c.blocking);
  EXPECT_EQ(c.minCTAs, 1);
  EXPECT_EQ(c.maxCTAs, kMaxChannels);
}

TEST(Config, InitializerIsAccepted) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  cfg.minCTAs = 2;
  cfg.maxCTAs = 8;
  cfg.netName = "UCX";
  cfg.commName = "solver";
  CommConfig c;
  ASSERT_EQ(parseConfig(&cfg, "test", &c), ncclSuccess);
  EXPECT_FALSE(c.blocking);
  EXPECT_EQ(c.minCTAs, 2);
  EXPECT_EQ(c.maxCTAs, 8);
  EXPECT_EQ(c.netName, "UCX");
  EXPECT_EQ(c.commName, "solver");
}

struct BadCase {
  const char* field;
  void (*mutate)(ncclConfig_t*);
};

TEST(Config, RejectsBadFieldsWithTheirName) {
  const BadCase cases[] = {
      {"magic", [](ncclConfig_t* c) { c->magic = 0; }},
      {"size", [](ncclConfig_t* c) { c->size = 3; }},
      {"size", [](ncclConfig_t* c) { c->size = 1u << 20; }},
      {"version", [](ncclConfig_t* c) { c->version = 7; }},
      {"blocking", [](ncclConfig_t* c) { c->blocking = 2; }},
      {"cgaClusterSize", [](ncclConfig_t* c) { c->cgaClusterSize = -1; }},
      {"minCTAs", [](ncclConfig_t* c) { c->minCTAs = 0; }},
      {"maxCTAs", [](ncclConfig_t* c) { c->maxCTAs = 0; }},
      {"maxCTAs", [](ncclConfig_t* c) { c->maxCTAs = -4; }},
      {"minCTAs", [](ncclConfig_t* c) { c->minCTAs = 8, c->maxCTAs = 4; }},
      {"netName", [](ncclConfig_t* c) { c->netName = "carrier-pigeon"; }},
      {"splitShare", [](ncclConfig_t* c) { c->splitShare = 3; }},
      {"trafficClass", [](ncclConfig_t* c) { c->trafficClass = -5; }},
      {"collnetEnable", [](ncclConfig_t* c) { c->collnetEnable = 7; }},
      {"CTAPolicy", [](ncclConfig_t* c) { c->CTAPolicy = 9; }},
      {"shrinkShare", [](ncclConfig_t* c) { c->shrinkShare = 2; }},
      {"nvlsCTAs", [](ncclConfig_t* c) { c->nvlsCTAs = 0; }},
      {"nChannelsPerNetPeer", [](ncclConfig_t* c) { c->nChannelsPerNetPeer = -1; }},
      {"nChannelsPerNetPeer", [](ncclConfig_t* c) { c->nChannelsPerNetPeer = 65; }},
      {"nvlinkCentricSched", [](ncclConfig_t* c) { c->nvlinkCentricSched = 5; }},
  };
  for (const BadCase& bc : cases) {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    bc.mutate(&cfg);
    CommConfig c;
    c.minCTAs = 33;  // sentinel: must stay untouched on failure
    EXPECT_EQ(parseConfig(&cfg, "ncclCommInitRankConfig", &c), ncclInvalidArgument) << bc.field;
    EXPECT_NE(std::string(threadLastError()).find(bc.field), std::string::npos)
        << bc.field << ": " << threadLastError();
    EXPECT_EQ(c.minCTAs, 33);
  }
}

// As NCCL: values above what the hardware has are clamped, with a warning.
TEST(Config, LargeCtaAndClusterValuesAreClamped) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.maxCTAs = 1000;
  cfg.minCTAs = 200;
  cfg.cgaClusterSize = 9;
  CommConfig c;
  ASSERT_EQ(parseConfig(&cfg, "test", &c), ncclSuccess);
  EXPECT_EQ(c.maxCTAs, kMaxChannels);
  EXPECT_EQ(c.minCTAs, kMaxChannels);
  EXPECT_EQ(c.cgaClusterSize, 8);
}

TEST(Config, SmallerOlderLayoutIsAccepted) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.size = offsetof(ncclConfig_t, splitShare) + sizeof(int);  // the NCCL 2.17 layout
  cfg.trafficClass = -99;  // beyond the declared size: must be ignored
  CommConfig c;
  EXPECT_EQ(parseConfig(&cfg, "test", &c), ncclSuccess);
}

TEST(Config, Nccl228FieldsAreKept) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  EXPECT_EQ(cfg.version, 22803u);
  cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;
  cfg.shrinkShare = 1;
  cfg.nvlsCTAs = 16;
  cfg.nChannelsPerNetPeer = 2;
  cfg.nvlinkCentricSched = 1;
  CommConfig c;
  ASSERT_EQ(parseConfig(&cfg, "test", &c), ncclSuccess);
  EXPECT_EQ(c.ctaPolicy, NCCL_CTA_POLICY_ZERO);
  EXPECT_TRUE(c.shrinkShare);
  EXPECT_EQ(c.nvlsCTAs, 16);
  EXPECT_EQ(c.nChannelsPerNetPeer, 2);
  EXPECT_TRUE(c.nvlinkCentricSched);
}

TEST(Config, Nccl225LayoutIgnoresLaterFields) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.size = offsetof(ncclConfig_t, CTAPolicy) + sizeof(int);  // the NCCL 2.25 layout
  cfg.version = 22500;
  cfg.shrinkShare = 7;  // beyond the declared size: must be ignored
  cfg.nvlsCTAs = -3;
  CommConfig c;
  ASSERT_EQ(parseConfig(&cfg, "test", &c), ncclSuccess);
  EXPECT_FALSE(c.shrinkShare);
  EXPECT_EQ(c.nvlsCTAs, 0);
}

TEST(Config, BlockingVariableOverrides) {
  setenv("NCCL_COMM_BLOCKING", "0", 1);
  knobsReload();
  CommConfig c;
  ASSERT_EQ(parseConfig(nullptr, "test", &c), ncclSuccess);
  EXPECT_FALSE(c.blocking);
  unsetenv("NCCL_COMM_BLOCKING");
  knobsReload();
}

TEST(Config, SplitInheritsUnsetFields) {
  CommConfig parent;
  parent.blocking = false;
  parent.maxCTAs = 4;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.minCTAs = 2;
  CommConfig c;
  ASSERT_EQ(parseConfigOver(&cfg, parent, "ncclCommSplit", &c), ncclSuccess);
  EXPECT_FALSE(c.blocking);
  EXPECT_EQ(c.maxCTAs, 4);
  EXPECT_EQ(c.minCTAs, 2);
}

TEST(Errors, StringsForEveryCode) {
  for (int r = 0; r < ncclNumResults; ++r) {
    std::string s = resultString(static_cast<ncclResult_t>(r));
    EXPECT_FALSE(s.empty());
    EXPECT_EQ(s.find("unknown"), std::string::npos) << r;
  }
  EXPECT_NE(std::string(resultString(static_cast<ncclResult_t>(99))).find("unknown"), std::string::npos);
}

TEST(Errors, RecordsThreadLastError) {
  clearThreadLastError();
  EXPECT_EQ(MCCL_ERR(ncclInvalidArgument, nullptr, "count = %d is bad", 5), ncclInvalidArgument);
  EXPECT_STREQ(threadLastError(), "count = 5 is bad");
}
