#include "core/numeric.h"

#include "core/redop.h"

namespace mccl {

uint64_t scalarBitsFromDouble(ncclDataType_t type, double v) {
  uint64_t bits = 0;
  auto put = [&](auto x) { std::memcpy(&bits, &x, sizeof x); };
  switch (type) {
    case ncclInt8: put(static_cast<int8_t>(v)); break;
    case ncclUint8: put(static_cast<uint8_t>(v)); break;
    case ncclInt32: put(static_cast<int32_t>(v)); break;
    case ncclUint32: put(static_cast<uint32_t>(v)); break;
    case ncclInt64: put(static_cast<int64_t>(v)); break;
    case ncclUint64: put(static_cast<uint64_t>(v)); break;
    case ncclFloat16: put(floatToHalf(static_cast<float>(v))); break;
    case ncclFloat32: put(static_cast<float>(v)); break;
    case ncclFloat64: put(v); break;
    case ncclBfloat16: put(floatToBf16(static_cast<float>(v))); break;
    case ncclFloat8e4m3: put(static_cast<uint8_t>(Fp8E4M3::encode(static_cast<float>(v)))); break;
    case ncclFloat8e5m2: put(static_cast<uint8_t>(Fp8E5M2::encode(static_cast<float>(v)))); break;
    default: break;
  }
  return bits;
}

double scalarToDouble(ncclDataType_t type, const void* p) {
  auto get = [p](auto x) {
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (type) {
    case ncclInt8: return get(int8_t{});
    case ncclUint8: return get(uint8_t{});
    case ncclInt32: return get(int32_t{});
    case ncclUint32: return get(uint32_t{});
    case ncclInt64: return static_cast<double>(get(int64_t{}));
    case ncclUint64: return static_cast<double>(get(uint64_t{}));
    case ncclFloat16: return halfToFloat(get(uint16_t{}));
    case ncclFloat32: return get(float{});
    case ncclFloat64: return get(double{});
    case ncclBfloat16: return bf16ToFloat(get(uint16_t{}));
    case ncclFloat8e4m3: return Fp8E4M3::decode(get(uint8_t{}));
    case ncclFloat8e5m2: return Fp8E5M2::decode(get(uint8_t{}));
    default: return 0;
  }
}

}  // namespace mccl
