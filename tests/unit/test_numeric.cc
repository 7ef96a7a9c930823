// The narrow float types against an independent reference: every code is decoded with
// plain arithmetic and every float is rounded by searching for the nearest code.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/numeric.h"

using namespace mccl;

namespace {

// Value of a code of a format (E exponent bits, M mantissa bits), independent of MiniFloat.
double refDecode(uint32_t code, int E, int M, bool ieee) {
  int bias = (1 << (E - 1)) - 1;
  bool neg = (code >> (E + M)) & 1;
  uint32_t exp = (code >> M) & ((1u << E) - 1);
  uint32_t man = code & ((1u << M) - 1);
  double v;
  if (ieee && exp == (1u << E) - 1) v = man ? NAN : INFINITY;
  else if (!ieee && exp == (1u << E) - 1 && man == (1u << M) - 1) v = NAN;
  else if (exp == 0) v = man * std::pow(2.0, 1 - bias - M);
  else v = (1.0 + man * std::pow(2.0, -M)) * std::pow(2.0, static_cast<int>(exp) - bias);
  return neg ? -v : v;
}

// Round x to the nearest finite code (ties to even mantissa), brute force.
uint32_t refEncode(double x, int E, int M, bool ieee, bool saturate) {
  uint32_t n = 1u << (E + M);
  uint32_t best = 0;
  double bestErr = INFINITY;
  double maxFinite = 0;
  for (uint32_t c = 0; c < n; ++c) {
    double v = refDecode(c, E, M, ieee);
    if (std::isfinite(v)) maxFinite = std::max(maxFinite, v);
  }
  double ax = std::fabs(x);
  uint32_t sign = x < 0 ? n : 0;
  if (ax > maxFinite) {
    // Beyond the largest finite value: IEEE formats round to inf past the midpoint to the
    // next power of two, saturating formats clamp.
    uint32_t maxCode = 0;
    for (uint32_t c = 0; c < n; ++c)
      if (refDecode(c, E, M, ieee) == maxFinite) maxCode = c;
    double ulp = maxFinite - refDecode(maxCode - 1, E, M, ieee);
    if (saturate || !ieee) return sign | maxCode;
    if (ax >= maxFinite + ulp / 2) return sign | (((1u << E) - 1) << M);
    return sign | maxCode;
  }
  for (uint32_t c = 0; c < n; ++c) {
    double v = refDecode(c, E, M, ieee);
    if (!std::isfinite(v)) continue;
    double err = std::fabs(v - ax);
    if (err < bestErr || (err == bestErr && (c & 1) == 0)) {
      best = c;
      bestErr = err;
    }
  }
  return sign | best;
}

template <typename F>
void checkFormat(int E, int M, bool ieee, bool saturate, F encode, uint32_t (*decodeCheck)(uint32_t)) {
  (void)decodeCheck;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  int bias = (1 << (E - 1)) - 1;
  double range = std::pow(2.0, (1 << E) - bias);
  for (int i = 0; i < 20000; ++i) {
    double scale = std::pow(2.0, unit(rng) * (bias + M + 2)) * (i % 3 == 0 ? range : 1.0);
    float x = static_cast<float>(unit(rng) * scale);
    uint32_t got = encode(x);
    if (E + M <= 7) {
      uint32_t want = refEncode(x, E, M, ieee, saturate);
      double gv = refDecode(got, E, M, ieee), wv = refDecode(want, E, M, ieee);
      ASSERT_TRUE(gv == wv || (std::isnan(gv) && std::isnan(wv)))
          << "x=" << x << " got " << got << " want " << want;
      continue;
    }
    // Wide formats: the result must be at least as close as both neighbouring codes
    // (ties to the even code); past the largest finite value it is infinity.
    uint32_t signBit = 1u << (E + M);
    uint32_t mag = got & (signBit - 1);
    double gv = std::fabs(refDecode(mag, E, M, ieee)), ax = std::fabs(static_cast<double>(x));
    ASSERT_EQ((got & signBit) != 0, std::signbit(x)) << x;
    if (std::isinf(gv)) {
      double maxf = refDecode(mag - 1, E, M, ieee), ulp = maxf - refDecode(mag - 2, E, M, ieee);
      ASSERT_GE(ax, maxf + ulp / 2) << x;
      continue;
    }
    double err = std::fabs(gv - ax);
    if (mag > 0) {
      double lo = std::fabs(refDecode(mag - 1, E, M, ieee));
      ASSERT_TRUE(err < ax - lo || (err == ax - lo && (mag & 1) == 0)) << "x=" << x << " code " << got;
    }
    double hi = std::fabs(refDecode(mag + 1, E, M, ieee));
    if (std::isfinite(hi))
      ASSERT_TRUE(err < hi - ax || (err == hi - ax && (mag & 1) == 0)) << "x=" << x << " code " << got;
  }
}

}  // namespace

TEST(Numeric, Fp8E4M3DecodeEveryCode) {
  for (uint32_t c = 0; c < 256; ++c) {
    double want = refDecode(c, 4, 3, false);
    double got = Fp8E4M3::decode(c);
    EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << c;
    if (!std::isnan(want)) EXPECT_EQ(Fp8E4M3::encode(static_cast<float>(want)), c == 0x80 ? 0x80u : c);
  }
  EXPECT_EQ(Fp8E4M3::decode(0x7e), 448.0f);
  EXPECT_EQ(Fp8E4M3::encode(1e9f), 0x7eu);    // saturates
  EXPECT_EQ(Fp8E4M3::encode(-INFINITY), 0xfeu);
  EXPECT_TRUE(std::isnan(Fp8E4M3::decode(Fp8E4M3::encode(NAN))));
}

TEST(Numeric, Fp8E5M2DecodeEveryCode) {
  for (uint32_t c = 0; c < 256; ++c) {
    double want = refDecode(c, 5, 2, true);
    double got = Fp8E5M2::decode(c);
    EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << c;
  }
  EXPECT_EQ(Fp8E5M2::decode(0x7b), 57344.0f);
  EXPECT_EQ(Fp8E5M2::encode(1e9f), 0x7bu);  // saturates (satfinite)
}

TEST(Numeric, RoundingMatchesBruteForce) {
  checkFormat(4, 3, false, true, [](float x) { return Fp8E4M3::encode(x); }, nullptr);
  checkFormat(5, 2, true, true, [](float x) { return Fp8E5M2::encode(x); }, nullptr);
  checkFormat(5, 10, true, false, [](float x) { return static_cast<uint32_t>(floatToHalf(x)); }, nullptr);
  checkFormat(5, 10, true, false, [](float x) { return Half::encode(x); }, nullptr);
}

TEST(Numeric, HalfDecodeEveryCode) {
  for (uint32_t c = 0; c < 65536; ++c) {
    double want = refDecode(c, 5, 10, true);
    float got = halfToFloat(static_cast<uint16_t>(c));
    ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << c;
    if (!std::isnan(want)) ASSERT_EQ(floatToHalf(got), c == 0x8000 ? 0x8000 : c) << c;
  }
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // tie above the largest finite: infinity
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
}

TEST(Numeric, Bf16MatchesGenericRounding) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    float f = bitsFloat(bits);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(f))));
      continue;
    }
    ASSERT_EQ(floatToBf16(f), Bf16Slow::encode(f)) << f;
    ASSERT_EQ(bf16ToFloat(floatToBf16(f)), Bf16Slow::decode(floatToBf16(f)));
  }
}
