// Copy and reduce on host memory for every datatype and operator of the API. Loops are
// simple element-wise passes over contiguous arrays so the compiler vectorises them;
// half, bfloat16 and fp8 compute in float and round once (see core/numeric.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/redop.h"
#include "nccl.h"

namespace mccl {

// out[i] = a[i] (op) b[i] for Sum, Prod, Max, Min (PreMulSum and SumPostDiv reduce as Sum).
void hostReduce(RedKind op, ncclDataType_t type, void* out, const void* a, const void* b, size_t n);

// out[i] = a[i] * scalar (scalar as the bit pattern of type).
void hostScale(ncclDataType_t type, void* out, const void* a, uint64_t scalarBits, size_t n);

// out[i] /= divisor (integer types; the final step of an integer ncclAvg).
void hostDivide(ncclDataType_t type, void* out, int divisor, size_t n);

// One step's arithmetic: out = premul?(src) (op) in[0] (op) in[1], post-divided when final,
// written to out0 and copied to out1 when given. src may be null (received data only).
struct CombineArgs {
  const RedOpInfo* op;
  ncclDataType_t type;
  const void* src;        // local contribution or null
  bool premulSrc;         // PreMulSum: multiply src by the scalar
  uint64_t scalarBits;    // the PreMulSum scalar, resolved (device residence read already)
  const void* in[2];      // received data
  int nin;
  bool final;
  void* out[3];           // first is computed into; the others receive copies
  int nout;
  size_t count;
};
void hostCombine(const CombineArgs& a);

}  // namespace mccl
