#include "core/redop.h"

#include <cstring>

#include "core/error.h"
#include "core/types.h"

namespace mccl {

bool RedOpTable::decode(ncclRedOp_t op, int* index) const {
  int64_t v = static_cast<int64_t>(op) - ncclNumOps;
  if (v < 0) return false;
  if (static_cast<uint32_t>(v >> kIndexBits) != stamp_) return false;
  *index = static_cast<int>(v & ((1 << kIndexBits) - 1));
  return *index < static_cast<int>(entries_.size());
}

ncclResult_t RedOpTable::create(ncclRedOp_t* op, const void* scalar, ncclDataType_t type,
                                ncclScalarResidence_t residence, bool hostComm, const char* call) {
  (void)hostComm;
  std::lock_guard<std::mutex> lock(mu_);
  int index = -1;
  for (size_t i = 0; i < entries_.size(); ++i)
    if (!entries_[i].live) {
      index = static_cast<int>(i);
      break;
    }
  if (index < 0) {
    if (entries_.size() >= (1u << kIndexBits))
      return MCCL_ERR(ncclInvalidUsage, nullptr,
                      "%s: this communicator already has %u live reduction operators", call,
                      1u << kIndexBits);
    entries_.emplace_back();
    index = static_cast<int>(entries_.size() - 1);
  }
  Entry e;
  e.live = true;
  e.type = type;
  e.info.kind = RedKind::PreMulSum;
  if (residence == ncclScalarHostImmediate) {
    std::memcpy(&e.info.scalarBits, scalar, datatypeSize(type));
  } else {
    e.info.scalarPtr = scalar;
  }
  entries_[index] = e;
  *op = static_cast<ncclRedOp_t>(ncclNumOps + (static_cast<int64_t>(stamp_) << kIndexBits) + index);
  return ncclSuccess;
}

ncclResult_t RedOpTable::destroy(ncclRedOp_t op, const char* call) {
  if (static_cast<int>(op) >= 0 && op < ncclNumOps)
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: op = %d (%s) is a built-in operator and cannot be destroyed", call,
                    static_cast<int>(op), redOpName(op));
  std::lock_guard<std::mutex> lock(mu_);
  int index;
  if (!decode(op, &index) || !entries_[index].live)
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: op = %d was not created by ncclRedOpCreatePreMulSum on this communicator "
                    "(or was already destroyed)",
                    call, static_cast<int>(op));
  entries_[index].live = false;
  return ncclSuccess;
}

ncclResult_t RedOpTable::resolve(ncclRedOp_t op, ncclDataType_t type, int nranks, const char* call,
                                 RedOpInfo* out) const {
  RedOpInfo info;
  switch (static_cast<int>(op)) {
    case ncclSum: info.kind = RedKind::Sum; break;
    case ncclProd: info.kind = RedKind::Prod; break;
    case ncclMax: info.kind = RedKind::Max; break;
    case ncclMin: info.kind = RedKind::Min; break;
    case ncclAvg:
      // Floats: multiply every input by 1/nranks, then sum (as NCCL does). Integers: sum,
      // then divide the result.
      if (isFloatType(type)) {
        info.kind = RedKind::PreMulSum;
        info.scalarBits = scalarBitsFromDouble(type, 1.0 / nranks);
        info.uniformScalar = true;
      } else {
        info.kind = RedKind::SumPostDiv;
        info.postDivisor = nranks;
      }
      break;
    default: {
      std::lock_guard<std::mutex> lock(mu_);
      int index;
      if (static_cast<int>(op) < 0 || !decode(op, &index) || !entries_[index].live) {
        if (static_cast<int>(op) >= ncclNumOps && static_cast<int64_t>(op) - ncclNumOps >= 0 &&
            ((static_cast<int64_t>(op) - ncclNumOps) >> kIndexBits) != stamp_)
          return MCCL_ERR(ncclInvalidArgument, nullptr,
                          "%s: op = %d belongs to another communicator (a PreMulSum "
                          "operator is valid only on the communicator that created it)",
                          call, static_cast<int>(op));
        return MCCL_ERR(ncclInvalidArgument, nullptr,
                        "%s: op = %d is not a reduction operator (built-in ops are 0..4; "
                        "others come from ncclRedOpCreatePreMulSum and must not be destroyed)",
                        call, static_cast<int>(op));
      }
      const Entry& e = entries_[index];
      if (e.type != type)
        return MCCL_ERR(ncclInvalidArgument, nullptr,
                        "%s: op = %d was created for %s but the operation uses %s", call,
                        static_cast<int>(op), datatypeName(e.type), datatypeName(type));
      info = e.info;
    }
  }
  *out = info;
  return ncclSuccess;
}

}  // namespace mccl
