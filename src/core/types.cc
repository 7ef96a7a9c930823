#include "core/types.h"

namespace mccl {

const char* datatypeName(int t) {
  static const char* const names[] = {"ncclInt8",    "ncclUint8",     "ncclInt32",
                                      "ncclUint32",  "ncclInt64",     "ncclUint64",
                                      "ncclFloat16", "ncclFloat32",   "ncclFloat64",
                                      "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
  return validDatatype(t) ? names[t] : "unknown";
}

const char* redOpName(int op) {
  static const char* const names[] = {"ncclSum", "ncclProd", "ncclMax", "ncclMin", "ncclAvg"};
  if (op >= 0 && op < ncclNumOps) return names[op];
  return op >= ncclNumOps ? "PreMulSum" : "unknown";
}

}  // namespace mccl
