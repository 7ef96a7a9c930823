#include "host_engine/reduce.h"

#include <algorithm>
#include <cstring>

#include "core/numeric.h"
#include "core/types.h"

namespace mccl {
namespace {

// Storage type S, arithmetic type A, and the conversions between them.
template <typename S, typename A = S>
struct Plain {
  using Store = S;
  using Acc = A;
  static A load(S v) { return static_cast<A>(v); }
  static S store(A v) { return static_cast<S>(v); }
};
struct HalfT {
  using Store = uint16_t;
  using Acc = float;
  static float load(uint16_t v) { return halfToFloat(v); }
  static uint16_t store(float v) { return floatToHalf(v); }
};
struct Bf16T {
  using Store = uint16_t;
  using Acc = float;
  static float load(uint16_t v) { return bf16ToFloat(v); }
  static uint16_t store(float v) { return floatToBf16(v); }
};
struct E4M3T {
  using Store = uint8_t;
  using Acc = float;
  static float load(uint8_t v) { return Fp8E4M3::decode(v); }
  static uint8_t store(float v) { return static_cast<uint8_t>(Fp8E4M3::encode(v)); }
};
struct E5M2T {
  using Store = uint8_t;
  using Acc = float;
  static float load(uint8_t v) { return Fp8E5M2::decode(v); }
  static uint8_t store(float v) { return static_cast<uint8_t>(Fp8E5M2::encode(v)); }
};

// Integer sums and products wrap (two's complement), computed unsigned to avoid UB.
template <typename T>
using Unsigned = typename std::conditional<std::is_integral<T>::value, std::make_unsigned<T>, std::common_type<T>>::type::type;

struct OpSum {
  template <typename A>
  static A apply(A x, A y) {
    if constexpr (std::is_integral<A>::value) return static_cast<A>(static_cast<Unsigned<A>>(x) + static_cast<Unsigned<A>>(y));
    else return x + y;
  }
};
struct OpProd {
  template <typename A>
  static A apply(A x, A y) {
    if constexpr (std::is_integral<A>::value) return static_cast<A>(static_cast<Unsigned<A>>(x) * static_cast<Unsigned<A>>(y));
    else return x * y;
  }
};
struct OpMax {
  template <typename A>
  static A apply(A x, A y) { return x > y ? x : y; }
};
struct OpMin {
  template <typename A>
  static A apply(A x, A y) { return x < y ? x : y; }
};

template <typename T, typename Op>
void reduceLoop(void* out, const void* a, const void* b, size_t n) {
  using S = typename T::Store;
  S* __restrict o = static_cast<S*>(out);
  const S* __restrict x = static_cast<const S*>(a);
  const S* __restrict y = static_cast<const S*>(b);
  if (out == a || out == b) {  // aliasing: a plain loop (still correct element-wise)
    S* oo = static_cast<S*>(out);
    const S* xx = static_cast<const S*>(a);
    const S* yy = static_cast<const S*>(b);
    for (size_t i = 0; i < n; ++i) oo[i] = T::store(Op::apply(T::load(xx[i]), T::load(yy[i])));
    return;
  }
  for (size_t i = 0; i < n; ++i) o[i] = T::store(Op::apply(T::load(x[i]), T::load(y[i])));
}

// Two outputs in one pass (a reduction whose result is both stored and sent).
template <typename T, typename Op>
void reduceLoop2(void* out0, void* out1, const void* a, const void* b, size_t n) {
  using S = typename T::Store;
  S* o0 = static_cast<S*>(out0);
  S* o1 = static_cast<S*>(out1);
  const S* x = static_cast<const S*>(a);
  const S* y = static_cast<const S*>(b);
  for (size_t i = 0; i < n; ++i) {
    S v = T::store(Op::apply(T::load(x[i]), T::load(y[i])));
    o0[i] = v;
    o1[i] = v;
  }
}

template <typename T>
void scaleLoop(void* out, const void* a, uint64_t scalarBits, size_t n) {
  using S = typename T::Store;
  S sv;
  std::memcpy(&sv, &scalarBits, sizeof sv);
  auto s = T::load(sv);
  S* o = static_cast<S*>(out);
  const S* x = static_cast<const S*>(a);
  for (size_t i = 0; i < n; ++i) o[i] = T::store(OpProd::apply(T::load(x[i]), s));
}

template <typename T>
void divideLoop(void* out, int divisor, size_t n) {
  using S = typename T::Store;
  S* o = static_cast<S*>(out);
  for (size_t i = 0; i < n; ++i) o[i] = static_cast<S>(o[i] / static_cast<S>(divisor));
}

using ReduceFn = void (*)(void*, const void*, const void*, size_t);
using Reduce2Fn = void (*)(void*, void*, const void*, const void*, size_t);
using ScaleFn = void (*)(void*, const void*, uint64_t, size_t);

// The loop F instantiated for the element type t.
template <template <typename, typename> class F, typename Op, typename Fn>
Fn forType(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return F<Plain<int8_t>, Op>::fn;
    case ncclUint8: return F<Plain<uint8_t>, Op>::fn;
    case ncclInt32: return F<Plain<int32_t>, Op>::fn;
    case ncclUint32: return F<Plain<uint32_t>, Op>::fn;
    case ncclInt64: return F<Plain<int64_t>, Op>::fn;
    case ncclUint64: return F<Plain<uint64_t>, Op>::fn;
    case ncclFloat16: return F<HalfT, Op>::fn;
    case ncclFloat32: return F<Plain<float>, Op>::fn;
    case ncclFloat64: return F<Plain<double>, Op>::fn;
    case ncclBfloat16: return F<Bf16T, Op>::fn;
    case ncclFloat8e4m3: return F<E4M3T, Op>::fn;
    case ncclFloat8e5m2: return F<E5M2T, Op>::fn;
    default: return nullptr;
  }
}
template <typename T, typename Op>
struct ReduceOne {
  static constexpr ReduceFn fn = reduceLoop<T, Op>;
};
template <typename T, typename Op>
struct ReduceTwo {
  static constexpr Reduce2Fn fn = reduceLoop2<T, Op>;
};

template <template <typename, typename> class F, typename Fn>
Fn forOp(RedKind op, ncclDataType_t type) {
  switch (op) {
    case RedKind::Sum:
    case RedKind::PreMulSum:
    case RedKind::SumPostDiv: return forType<F, OpSum, Fn>(type);
    case RedKind::Prod: return forType<F, OpProd, Fn>(type);
    case RedKind::Max: return forType<F, OpMax, Fn>(type);
    case RedKind::Min: return forType<F, OpMin, Fn>(type);
  }
  return nullptr;
}

ScaleFn scaleFor(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return scaleLoop<Plain<int8_t>>;
    case ncclUint8: return scaleLoop<Plain<uint8_t>>;
    case ncclInt32: return scaleLoop<Plain<int32_t>>;
    case ncclUint32: return scaleLoop<Plain<uint32_t>>;
    case ncclInt64: return scaleLoop<Plain<int64_t>>;
    case ncclUint64: return scaleLoop<Plain<uint64_t>>;
    case ncclFloat16: return scaleLoop<HalfT>;
    case ncclFloat32: return scaleLoop<Plain<float>>;
    case ncclFloat64: return scaleLoop<Plain<double>>;
    case ncclBfloat16: return scaleLoop<Bf16T>;
    case ncclFloat8e4m3: return scaleLoop<E4M3T>;
    case ncclFloat8e5m2: return scaleLoop<E5M2T>;
    default: return nullptr;
  }
}

}  // namespace

void hostReduce(RedKind op, ncclDataType_t type, void* out, const void* a, const void* b, size_t n) {
  ReduceFn fn = forOp<ReduceOne, ReduceFn>(op, type);
  if (fn) fn(out, a, b, n);
}

void hostScale(ncclDataType_t type, void* out, const void* a, uint64_t scalarBits, size_t n) {
  ScaleFn fn = scaleFor(type);
  if (fn) fn(out, a, scalarBits, n);
}

void hostDivide(ncclDataType_t type, void* out, int divisor, size_t n) {
  switch (type) {
    case ncclInt8: divideLoop<Plain<int8_t>>(out, divisor, n); break;
    case ncclUint8: divideLoop<Plain<uint8_t>>(out, divisor, n); break;
    case ncclInt32: divideLoop<Plain<int32_t>>(out, divisor, n); break;
    case ncclUint32: divideLoop<Plain<uint32_t>>(out, divisor, n); break;
    case ncclInt64: divideLoop<Plain<int64_t>>(out, divisor, n); break;
    case ncclUint64: divideLoop<Plain<uint64_t>>(out, divisor, n); break;
    default: break;  // float averages pre-multiply instead
  }
}

void hostCombine(const CombineArgs& a) {
  const size_t bytes = a.count * datatypeSize(a.type);
  if (a.count == 0 || a.nout == 0) return;
  void* out = a.out[0];
  // First operand: the (pre-multiplied) local contribution, or the first message.
  const void* first = a.src;
  int next = 0;
  if (first == nullptr) first = a.in[next++];
  if (a.src && a.premulSrc) {
    if (next < a.nin) {
      // out = src * s + in0 without an extra pass over memory when possible: scale into
      // out, then add.
      hostScale(a.type, out, first, a.scalarBits, a.count);
      hostReduce(a.op->kind, a.type, out, out, a.in[next++], a.count);
    } else {
      hostScale(a.type, out, first, a.scalarBits, a.count);
    }
  } else if (next < a.nin && a.nin - next == 1 && a.nout == 2 &&
             !(a.final && a.op->kind == RedKind::SumPostDiv)) {
    // The common ring step "reduce, store and send": both outputs in one pass.
    Reduce2Fn fn = forOp<ReduceTwo, Reduce2Fn>(a.op->kind, a.type);
    if (fn) fn(out, a.out[1], first, a.in[next], a.count);
    return;
  } else if (next < a.nin) {
    hostReduce(a.op->kind, a.type, out, first, a.in[next++], a.count);
  } else if (out != first) {
    std::memmove(out, first, bytes);
  }
  for (; next < a.nin; ++next) hostReduce(a.op->kind, a.type, out, out, a.in[next], a.count);
  if (a.final && a.op->kind == RedKind::SumPostDiv) hostDivide(a.type, out, a.op->postDivisor, a.count);
  for (int k = 1; k < a.nout; ++k)
    if (a.out[k] != out) std::memcpy(a.out[k], out, bytes);
}

}  // namespace mccl
