// Reduction operators: the built-in ones and the PreMulSum handles a communicator makes.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "nccl.h"

namespace mccl {

// What the data path needs to know about an operator.
enum class RedKind : uint8_t { Sum, Prod, Max, Min, PreMulSum, SumPostDiv };

struct RedOpInfo {
  RedKind kind = RedKind::Sum;
  // PreMulSum: the scalar, already in the element type's representation (up to 8 bytes),
  // or, for ncclScalarDevice, a pointer read when the operation runs.
  uint64_t scalarBits = 0;
  const void* scalarPtr = nullptr;  // non-null: read at run time (ncclScalarDevice)
  int postDivisor = 1;              // SumPostDiv (integer ncclAvg)
  bool uniformScalar = false;       // PreMulSum: the same scalar on every rank (float ncclAvg)
};

class RedOpTable {
 public:
  // Each communicator stamps its handles so a handle used on another one is detected.
  void setStamp(uint32_t stamp) { stamp_ = stamp & 0xffff; }

  ncclResult_t create(ncclRedOp_t* op, const void* scalar, ncclDataType_t type,
                      ncclScalarResidence_t residence, bool hostComm, const char* call);
  ncclResult_t destroy(ncclRedOp_t op, const char* call);

  // Resolves op for an operation on datatype type with nranks ranks. Errors name the call.
  ncclResult_t resolve(ncclRedOp_t op, ncclDataType_t type, int nranks, const char* call,
                       RedOpInfo* out) const;

 private:
  struct Entry {
    bool live = false;
    ncclDataType_t type = ncclFloat32;
    RedOpInfo info;
  };
  static constexpr int kIndexBits = 12;
  bool decode(ncclRedOp_t op, int* index) const;

  mutable std::mutex mu_;
  uint32_t stamp_ = 1;
  std::vector<Entry> entries_;
};

// Converts a double to the bit pattern of type (for PreMulSum scalars and the ncclAvg
// factor of float types). Defined with the host reduction code.
uint64_t scalarBitsFromDouble(ncclDataType_t type, double v);
// Reads a scalar of type from memory as a double.
double scalarToDouble(ncclDataType_t type, const void* p);

}  // namespace mccl
