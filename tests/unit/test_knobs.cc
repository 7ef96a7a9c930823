#include <gtest/gtest.h>
#include <stdlib.h>

#include <utility>
#include <vector>

#include "core/debug.h"
#include "core/knobs.h"

using namespace mccl;

TEST(Knobs, ParseInt) {
  int64_t v;
  EXPECT_TRUE(parseKnobInt("42", &v));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(parseKnobInt("  -7 ", &v));
  EXPECT_EQ(v, -7);
  EXPECT_TRUE(parseKnobInt("0x10", &v));
  EXPECT_EQ(v, 16);
  EXPECT_FALSE(parseKnobInt("", &v));
  EXPECT_FALSE(parseKnobInt("12abc", &v));
  EXPECT_FALSE(parseKnobInt("99999999999999999999999", &v));
  EXPECT_FALSE(parseKnobInt(nullptr, &v));
}

TEST(Knobs, ParseSize) {
  int64_t v;
  EXPECT_TRUE(parseKnobSize("4194304", &v));
  EXPECT_EQ(v, 4194304);
  EXPECT_TRUE(parseKnobSize("4M", &v));
  EXPECT_EQ(v, 4 << 20);
  EXPECT_TRUE(parseKnobSize("512k", &v));
  EXPECT_EQ(v, 512 << 10);
  EXPECT_TRUE(parseKnobSize("1GB", &v));
  EXPECT_EQ(v, 1 << 30);
  EXPECT_FALSE(parseKnobSize("-1", &v));
  EXPECT_FALSE(parseKnobSize("1X", &v));
  EXPECT_FALSE(parseKnobSize("9999999999999T", &v));  // overflow
}

TEST(Knobs, ParseBool) {
  bool b;
  for (const char* t : {"1", "true", "TRUE", "yes", "on", " y "}) {
    EXPECT_TRUE(parseKnobBool(t, &b)) << t;
    EXPECT_TRUE(b) << t;
  }
  for (const char* f : {"0", "false", "No", "off"}) {
    EXPECT_TRUE(parseKnobBool(f, &b)) << f;
    EXPECT_FALSE(b) << f;
  }
  EXPECT_FALSE(parseKnobBool("maybe", &b));
  EXPECT_FALSE(parseKnobBool("1 2", &b));
}

TEST(Knobs, ListFilter) {
  EXPECT_TRUE(knobListAllows("", "ring"));
  EXPECT_TRUE(knobListAllows("ring,tree", "Tree"));
  EXPECT_FALSE(knobListAllows("ring", "tree"));
  EXPECT_FALSE(knobListAllows("^tree", "tree"));
  EXPECT_TRUE(knobListAllows("^tree", "ring"));
  EXPECT_TRUE(knobListAllows(" ring , tree ", "tree"));
}

TEST(Knobs, TableReadsEnvironmentAndFallsBack) {
  setenv("NCCL_BUFFSIZE", "1M", 1);
  setenv("MCCL_TIMEOUT", "not-a-number", 1);
  knobsReload();
  EXPECT_EQ(knobInt(Knob::BuffSize), 1 << 20);
  EXPECT_TRUE(knobIsSet(Knob::BuffSize));
  EXPECT_EQ(knobInt(Knob::Timeout), 30);  // default after a bad value
  unsetenv("NCCL_BUFFSIZE");
  unsetenv("MCCL_TIMEOUT");
  knobsReload();
  EXPECT_EQ(knobInt(Knob::BuffSize), 4 << 20);
  EXPECT_FALSE(knobIsSet(Knob::BuffSize));
}

// An integer knob takes the boolean words too: MCCL_PDL was a boolean before its mode 2.
TEST(Knobs, IntegerKnobTakesBooleanWords) {
  const std::vector<std::pair<const char*, int64_t>> cases = {{"off", 0}, {"no", 0}, {"on", 1}, {"true", 1}, {"2", 2}};
  for (const auto& c : cases) {
    setenv("MCCL_PDL", c.first, 1);
    knobsReload();
    EXPECT_EQ(knobInt(Knob::Pdl), c.second) << c.first;
  }
  setenv("MCCL_PDL", "sometimes", 1);
  knobsReload();
  EXPECT_EQ(knobInt(Knob::Pdl), 1);  // the default after a bad value
  unsetenv("MCCL_PDL");
  knobsReload();
}

TEST(Knobs, HelpListsEveryKnob) {
  std::string help = knobsHelp();
  for (int i = 0; i < static_cast<int>(Knob::Count); ++i)
    EXPECT_NE(help.find(knobDef(static_cast<Knob>(i)).name), std::string::npos);
}

TEST(Logging, SubsysMask) {
  EXPECT_EQ(parseSubsysMask("INIT"), static_cast<uint32_t>(kLogInit));
  EXPECT_EQ(parseSubsysMask("init,coll"), static_cast<uint32_t>(kLogInit | kLogColl));
  EXPECT_EQ(parseSubsysMask("^NET"), ~static_cast<uint32_t>(kLogNet));
  EXPECT_EQ(parseSubsysMask("ALL"), static_cast<uint32_t>(kLogAll));
}
