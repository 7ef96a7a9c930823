// libFuzzer target: the knob parsers (integers, sizes, booleans), filter lists,
// NCCL_DEBUG_SUBSYS masks and NCCL_COMM_ID host:port. The first byte picks the parser;
// the rest is the value, NUL-terminated as getenv returns it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bootstrap_mpi/socket.h"
#include "core/debug.h"
#include "core/knobs.h"

using namespace mccl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  const char* s = value.c_str();
  int64_t i = 0;
  bool b = false;
  switch (data[0] % 6) {
    case 0:
      if (parseKnobInt(s, &i)) {  // what parses prints back to the same number
        int64_t j = 0;
        if (!parseKnobInt(std::to_string(i).c_str(), &j) || j != i) __builtin_trap();
      }
      break;
    case 1:
      if (parseKnobSize(s, &i) && i < 0) __builtin_trap();  // sizes are never negative
      break;
    case 2: (void)parseKnobBool(s, &b); break;
    case 3: (void)knobListAllows(value, "ring"); break;
    case 4: (void)parseSubsysMask(s); break;
    case 5: {
      SockAddr a;
      if (parseHostPort(value, &a)) (void)a.str();
      break;
    }
  }
  return 0;
}
