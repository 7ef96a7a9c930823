// libFuzzer target: decodeUniqueId on any 128 bytes (shorter inputs are zero-padded).
// A decoded id must encode back to the same fields.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "bootstrap_mpi/wire.h"

using namespace mccl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  std::memcpy(id.internal, data, size < sizeof id ? size : sizeof id);
  UniqueIdFields f;
  if (decodeUniqueId(id, &f, "fuzz") != ncclSuccess) return 0;
  ncclUniqueId again;
  encodeUniqueId(f, &again);
  UniqueIdFields g;
  if (decodeUniqueId(again, &g, "fuzz") != ncclSuccess) __builtin_trap();
  if (g.secret != f.secret || g.nonce != f.nonce || g.root.str() != f.root.str()) __builtin_trap();
  return 0;
}
