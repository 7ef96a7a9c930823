// ncclConfig_t validation and the resolved configuration a communicator keeps.
#pragma once

#include <string>

#include "nccl.h"

struct ncclComm;

namespace mccl {

constexpr int kMaxChannels = 64;

struct CommConfig {
  bool blocking = true;
  int cgaClusterSize = 0;
  int minCTAs = 1;
  int maxCTAs = kMaxChannels;
  bool splitShare = false;
  int trafficClass = -1;
  bool collnetEnable = false;
  int ctaPolicy = NCCL_CTA_POLICY_DEFAULT;
  // NCCL 2.28 fields: accepted, validated and kept (mccl has no NVLS; shrink, per-peer
  // network channels and NVLink-centric scheduling are hints its planner may use).
  bool shrinkShare = false;
  int nvlsCTAs = 0;             // 0: unset
  int nChannelsPerNetPeer = 0;  // 0: unset
  bool nvlinkCentricSched = false;
  std::string netName;
  std::string commName;
};

// Checks a user config (NULL allowed: defaults) and fills out. On bad input returns
// ncclInvalidArgument and a sentence naming the field and its value; out is unchanged.
// NCCL_COMM_BLOCKING (0 or 1), when set, overrides the blocking field.
ncclResult_t parseConfig(const ncclConfig_t* user, const char* call, CommConfig* out);

// Like parseConfig, but fields the user left unset take the values of base (for
// ncclCommSplit, whose child inherits the parent's configuration).
ncclResult_t parseConfigOver(const ncclConfig_t* user, const CommConfig& base, const char* call,
                             CommConfig* out);

}  // namespace mccl
