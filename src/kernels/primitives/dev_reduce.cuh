// Device arithmetic for every datatype of the API: storage type, the type computed in,
// and the operators. Narrow floats compute in float and round once (like the host
// engine); fp8 conversions saturate (__NV_SATFINITE); integer sums wrap.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "nccl.h"

namespace mccl {

struct Fp8E4M3 { uint8_t v; };
struct Fp8E5M2 { uint8_t v; };

// The storage type of an ncclDataType_t, as a tag: withType(type, f) returns
// f(TypeTag<T>{}), for host code that picks a kernel instantiated per type.
template <typename T>
struct TypeTag {
  using type = T;
};
template <typename F>
auto withType(int type, F f) {
  switch (type) {
    case ncclInt8: return f(TypeTag<int8_t>{});
    case ncclUint8: return f(TypeTag<uint8_t>{});
    case ncclInt32: return f(TypeTag<int32_t>{});
    case ncclUint32: return f(TypeTag<uint32_t>{});
    case ncclInt64: return f(TypeTag<int64_t>{});
    case ncclUint64: return f(TypeTag<uint64_t>{});
    case ncclFloat16: return f(TypeTag<__half>{});
    case ncclFloat32: return f(TypeTag<float>{});
    case ncclFloat64: return f(TypeTag<double>{});
    case ncclBfloat16: return f(TypeTag<__nv_bfloat16>{});
    case ncclFloat8e4m3: return f(TypeTag<Fp8E4M3>{});
    default: return f(TypeTag<Fp8E5M2>{});
  }
}

template <typename S>
struct DevT {
  using A = S;
  static __device__ __forceinline__ A load(S x) { return x; }
  static __device__ __forceinline__ S store(A a) { return a; }
};
template <>
struct DevT<__half> {
  using A = float;
  static __device__ __forceinline__ float load(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half store(float a) { return __float2half_rn(a); }
};
template <>
struct DevT<__nv_bfloat16> {
  using A = float;
  static __device__ __forceinline__ float load(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ __nv_bfloat16 store(float a) { return __float2bfloat16_rn(a); }
};
template <>
struct DevT<Fp8E4M3> {
  using A = float;
  static __device__ __forceinline__ float load(Fp8E4M3 x) {
    return __half2float(__half(__nv_cvt_fp8_to_halfraw(x.v, __NV_E4M3)));
  }
  static __device__ __forceinline__ Fp8E4M3 store(float a) {
    return Fp8E4M3{__nv_cvt_float_to_fp8(a, __NV_SATFINITE, __NV_E4M3)};
  }
};
template <>
struct DevT<Fp8E5M2> {
  using A = float;
  static __device__ __forceinline__ float load(Fp8E5M2 x) {
    return __half2float(__half(__nv_cvt_fp8_to_halfraw(x.v, __NV_E5M2)));
  }
  static __device__ __forceinline__ Fp8E5M2 store(float a) {
    return Fp8E5M2{__nv_cvt_float_to_fp8(a, __NV_SATFINITE, __NV_E5M2)};
  }
};

// Integer sums and products wrap: compute unsigned.
template <typename A>
struct Wrap {
  using U = A;
};
template <> struct Wrap<int8_t> { using U = uint8_t; };
template <> struct Wrap<int32_t> { using U = uint32_t; };
template <> struct Wrap<int64_t> { using U = uint64_t; };

struct OpSum {
  template <typename A>
  static __device__ __forceinline__ A f(A a, A b) {
    using U = typename Wrap<A>::U;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  }
};
struct OpProd {
  template <typename A>
  static __device__ __forceinline__ A f(A a, A b) {
    using U = typename Wrap<A>::U;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  }
};
struct OpMax {
  template <typename A>
  static __device__ __forceinline__ A f(A a, A b) { return a > b ? a : b; }
};
struct OpMin {
  template <typename A>
  static __device__ __forceinline__ A f(A a, A b) { return a < b ? a : b; }
};

// Float sums of the float types must not be contracted into FMAs with a pre-multiply:
// the host engine rounds the product first.
template <>
__device__ __forceinline__ float OpSum::f<float>(float a, float b) { return __fadd_rn(a, b); }
template <>
__device__ __forceinline__ double OpSum::f<double>(double a, double b) { return __dadd_rn(a, b); }
template <>
__device__ __forceinline__ float OpProd::f<float>(float a, float b) { return __fmul_rn(a, b); }
template <>
__device__ __forceinline__ double OpProd::f<double>(double a, double b) { return __dmul_rn(a, b); }

template <typename A>
__device__ __forceinline__ A divideBy(A a, int d) { return static_cast<A>(a / static_cast<A>(d)); }

// The 16-byte vector a times s, element by element, rounded to the type (PreMulSum).
template <typename S>
__device__ __forceinline__ uint4 vecScale(uint4 a, typename DevT<S>::A s) {
  using T = DevT<S>;
  constexpr int E = 16 / sizeof(S);
  S x[E];
  memcpy(x, &a, 16);
#pragma unroll
  for (int j = 0; j < E; ++j) x[j] = T::store(OpProd::f(T::load(x[j]), s));
  uint4 r;
  memcpy(&r, x, 16);
  return r;
}

// The 16-byte vector a op b, element by element, in the type's arithmetic type.
template <typename S, typename Op>
__device__ __forceinline__ uint4 vecOp(uint4 a, uint4 b) {
  using T = DevT<S>;
  constexpr int E = 16 / sizeof(S);
  S x[E], y[E];
  memcpy(x, &a, 16);
  memcpy(y, &b, 16);
#pragma unroll
  for (int j = 0; j < E; ++j) x[j] = T::store(Op::f(T::load(x[j]), T::load(y[j])));
  uint4 r;
  memcpy(&r, x, 16);
  return r;
}

}  // namespace mccl
