// Datatypes and reduction operators of the API: sizes, names, validity.
#pragma once

#include <cstddef>

#include "nccl.h"

namespace mccl {

inline bool validDatatype(int t) { return t >= 0 && t < ncclNumTypes; }

inline size_t datatypeSize(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
  }
}

inline bool isFloatType(ncclDataType_t t) {
  return t == ncclFloat16 || t == ncclFloat32 || t == ncclFloat64 || t == ncclBfloat16 ||
         t == ncclFloat8e4m3 || t == ncclFloat8e5m2;
}

const char* datatypeName(int t);  // "ncclFloat32", or "unknown"
const char* redOpName(int op);    // "ncclSum", "PreMulSum", or "unknown"

}  // namespace mccl
