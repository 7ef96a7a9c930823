// The narrow floating-point types of the API on the host: IEEE half, bfloat16, and the
// OCP fp8 formats e4m3 (finite-only, "fn") and e5m2. Conversions from float round to
// nearest even, as the CUDA intrinsics do: half and bfloat16 overflow to infinity, fp8
// saturates to the largest finite value (CUDA's __NV_SATFINITE), NaN stays NaN.
//
// Arithmetic on these types is done in float and rounded once: for sums and products of
// two values float holds the exact result or enough bits (>= 2p+2) that the single
// rounding equals the correctly rounded result.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mccl {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A small float format: E exponent bits, M mantissa bits, bias 2^(E-1)-1.
// Ieee: the top exponent encodes inf/NaN. Otherwise (e4m3fn): only S.1111.111 is NaN and
// the top exponent holds normal numbers.
template <int E, int M, bool Ieee, bool Saturate>
struct MiniFloat {
  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr uint32_t kExpMask = (1u << E) - 1;
  static constexpr uint32_t kSign = 1u << (E + M);
  static constexpr uint32_t kMaxFiniteCode =
      Ieee ? (((kExpMask - 1) << M) | ((1u << M) - 1)) : ((kExpMask << M) | ((1u << M) - 2));
  static constexpr uint32_t kNanCode = Ieee ? ((kExpMask << M) | (1u << (M - 1))) : ((kExpMask << M) | ((1u << M) - 1));
  static constexpr uint32_t kInfCode = kExpMask << M;

  static float decode(uint32_t code) {
    uint32_t sign = code & kSign;
    uint32_t exp = (code >> M) & kExpMask;
    uint32_t man = code & ((1u << M) - 1);
    float v;
    if (Ieee && exp == kExpMask) {
      v = man ? NAN : INFINITY;
    } else if (!Ieee && exp == kExpMask && man == (1u << M) - 1) {
      v = NAN;
    } else if (exp == 0) {
      v = std::ldexp(static_cast<float>(man), 1 - kBias - M);
    } else {
      v = std::ldexp(static_cast<float>(man | (1u << M)), static_cast<int>(exp) - kBias - M);
    }
    return sign ? -v : v;
  }

  static uint32_t encode(float f) {
    uint32_t sign = (floatBits(f) >> 31) ? kSign : 0;
    if (std::isnan(f)) return sign | kNanCode;
    double x = std::fabs(static_cast<double>(f));
    if (std::isinf(x)) return sign | (Saturate || !Ieee ? kMaxFiniteCode : kInfCode);
    if (x == 0) return sign;
    int e2;
    std::frexp(x, &e2);  // x = m * 2^e2, m in [0.5, 1)
    int ex = e2 - 1;     // x = s * 2^ex, s in [1, 2)
    uint32_t code;
    if (ex < 1 - kBias) {
      // Subnormal: multiples of 2^(1-bias-M). A result of 2^M is the smallest normal,
      // whose code is the same integer.
      double n = std::nearbyint(std::ldexp(x, -(1 - kBias - M)));
      code = static_cast<uint32_t>(n);
    } else {
      double n = std::nearbyint(std::ldexp(x, -(ex - M)));  // in [2^M, 2^(M+1)]
      if (n >= static_cast<double>(1u << (M + 1))) {
        n /= 2;
        ++ex;
      }
      int biased = ex + kBias;
      if (Ieee && biased >= static_cast<int>(kExpMask))
        return sign | (Saturate ? kMaxFiniteCode : kInfCode);
      if (biased > static_cast<int>(kExpMask)) return sign | kMaxFiniteCode;
      code = (static_cast<uint32_t>(biased) << M) | (static_cast<uint32_t>(n) - (1u << M));
    }
    if (code > kMaxFiniteCode) code = kMaxFiniteCode;  // saturating formats only get here
    return sign | code;
  }
};

using Half = MiniFloat<5, 10, true, false>;
using Bf16Slow = MiniFloat<8, 7, true, false>;
using Fp8E4M3 = MiniFloat<4, 3, false, true>;
using Fp8E5M2 = MiniFloat<5, 2, true, true>;

// Fast bfloat16: the top half of a float, rounded to nearest even.
inline uint16_t floatToBf16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16ToFloat(uint16_t h) { return bitsFloat(static_cast<uint32_t>(h) << 16); }

// Fast half <-> float (exact decode; encode rounds to nearest even).
inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return bitsFloat(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return bitsFloat(sign);
    float v = static_cast<float>(man) * (1.0f / 16777216.0f);  // man * 2^-24
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t floatToHalf(float f) {
  uint32_t u = floatBits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (a >= 0x38800000u) {  // normal half
    uint32_t r = a - 0x38000000u;  // rebias exponent (127-15)<<23
    r += 0xfffu + ((r >> 13) & 1);
    return static_cast<uint16_t>(sign | (r >> 13));
  }
  // Subnormal or zero: multiples of 2^-24, rounded to nearest even.
  float v = bitsFloat(a) * 16777216.0f;  // exact scaling by 2^24
  uint32_t n = static_cast<uint32_t>(std::nearbyint(v));
  return static_cast<uint16_t>(sign | n);
}

}  // namespace mccl
