// Text form of a schedule (MCCL_DUMP_SCHEDULE=1 and golden tests).
#pragma once

#include <string>

#include "algorithms/schedule.h"

namespace mccl {

const char* collName(Coll c);
const char* algoName(Algo a);

// One line per step: "3: recv 0 + in[2:4) -> out[2:4) send 2 final".
std::string formatStep(const Step& st);

// The whole schedule of this rank, at most maxSteps steps per lane.
std::string dumpSchedule(const Schedule& s, int64_t maxSteps = 64);

}  // namespace mccl
