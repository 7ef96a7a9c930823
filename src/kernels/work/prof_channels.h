// MCCL_PROFILE, Simple kernels: when each channel's block of the last launch started and
// ended (globaltimer ns) and on which SM, plus every block's run time (sum, sum of squares,
// most), after the shared counters of dev_work.h (ProfWord). The whole launch lasts as
// long as its slowest block: averages per step cannot show a straggler, these can.
#pragma once

#include "kernels/work/dev_work.h"

namespace mccl {

constexpr int kProfChannels = 64;
enum ProfChannelWord : int {
  kProfBlockRun = kProfWords,  // ns from a block's start to its end, summed over blocks
  kProfBlockRunSq,             // the same in us, squared (the spread)
  kProfBlockRunMax,            // the longest
  kProfChanEntry,              // [channel]: the last launch's block start (ns)
  kProfChanEnd = kProfChanEntry + kProfChannels,  // [channel]: its end
  kProfChanSm = kProfChanEnd + kProfChannels,     // [channel]: the SM it ran on
  kProfAllWords = kProfChanSm + kProfChannels
};

}  // namespace mccl
