#include "core/idle.h"

#include <unistd.h>

#include <algorithm>
#include <string>

#include "core/knobs.h"

namespace mccl {

bool idleYieldsSoon(int nodeRanks) {
  bool value = false;
  if (knobForced(Knob::IdleYield, &value)) return value;
  const std::string ompi = knobStr(Knob::OmpiOversubscribe);
  if (!ompi.empty() && parseKnobBool(ompi.c_str(), &value)) return value;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const int64_t ranks = std::max<int64_t>({static_cast<int64_t>(nodeRanks), knobInt(Knob::OmpiLocalSize),
                                           knobInt(Knob::MpichLocalSize)});
  return cpus <= 0 || ranks > cpus;
}

}  // namespace mccl
