#include "core/idle.h"

#include <unistd.h>

#include <algorithm>
#include <string>

#include "core/debug.h"
#include "core/knobs.h"

namespace mccl {

bool idleYieldsSoon(int nodeRanks) {
  const std::string mode = knobStr(Knob::IdleYield);
  bool value = false;
  if (mode != "auto" && parseKnobBool(mode.c_str(), &value)) return value;
  if (mode != "auto") WARN("MCCL_IDLE_YIELD=%s is not auto, 0 or 1: taken as auto", mode.c_str());
  const std::string ompi = knobStr(Knob::OmpiOversubscribe);
  if (!ompi.empty() && parseKnobBool(ompi.c_str(), &value)) return value;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const int64_t ranks = std::max<int64_t>({static_cast<int64_t>(nodeRanks), knobInt(Knob::OmpiLocalSize),
                                           knobInt(Knob::MpichLocalSize)});
  return cpus <= 0 || ranks > cpus;
}

}  // namespace mccl
