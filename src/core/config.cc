#include "core/config.h"

#include <strings.h>

#include <cstddef>
#include <cstring>

#include "core/error.h"
#include "core/knobs.h"

namespace mccl {
namespace {

constexpr unsigned kConfigMagic = 0xcafebeef;
// The smallest layout ever published (NCCL 2.17: up to splitShare).
constexpr size_t kMinConfigSize = offsetof(ncclConfig_t, splitShare) + sizeof(int);
constexpr size_t kMaxConfigSize = 4096;

bool has(const ncclConfig_t* c, size_t offset, size_t bytes) { return c->size >= offset + bytes; }
#define HAS_FIELD(c, f) has(c, offsetof(ncclConfig_t, f), sizeof((c)->f))

ncclResult_t bad(const char* call, const char* field, long value, const char* why) {
  return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: config->%s = %ld is invalid: %s", call,
                  field, value, why);
}

}  // namespace

ncclResult_t parseConfigOver(const ncclConfig_t* user, const CommConfig& base, const char* call,
                             CommConfig* out) {
  CommConfig c = base;
  if (user == nullptr) {
    *out = c;
    return ncclSuccess;
  }
  if (user->magic != kConfigMagic)
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: config->magic = 0x%x; initialise the config with NCCL_CONFIG_INITIALIZER",
                    call, user->magic);
  if (user->size < kMinConfigSize || user->size > kMaxConfigSize)
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: config->size = %zu is not the size of any ncclConfig_t layout "
                    "(%zu..%zu); initialise the config with NCCL_CONFIG_INITIALIZER",
                    call, user->size, kMinConfigSize, kMaxConfigSize);
  if (user->version < 21400 || user->version > 99999)
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: config->version = %u is not an NCCL version code", call, user->version);

  const int U = NCCL_CONFIG_UNDEF_INT;
  if (user->blocking != U) {
    if (user->blocking != 0 && user->blocking != 1)
      return bad(call, "blocking", user->blocking, "must be 0 or 1");
    c.blocking = user->blocking == 1;
  }
  if (user->cgaClusterSize != U) {
    // As NCCL: negative is an error, above the hardware's 8 is clamped with a warning.
    if (user->cgaClusterSize < 0) return bad(call, "cgaClusterSize", user->cgaClusterSize, "must be 0..8");
    c.cgaClusterSize = user->cgaClusterSize;
    if (c.cgaClusterSize > 8) {
      WARN("%s: config->cgaClusterSize = %d is larger than 8; using 8", call, c.cgaClusterSize);
      c.cgaClusterSize = 8;
    }
  }
  if (user->minCTAs != U) {
    if (user->minCTAs < 1) return bad(call, "minCTAs", user->minCTAs, "must be positive");
    c.minCTAs = user->minCTAs;
  }
  if (user->maxCTAs != U) {
    if (user->maxCTAs < 1) return bad(call, "maxCTAs", user->maxCTAs, "must be positive");
    c.maxCTAs = user->maxCTAs;
  }
  // As NCCL: more CTAs than channels exist is clamped with a warning, not an error.
  if (c.maxCTAs > kMaxChannels) {
    WARN("%s: config->maxCTAs = %d is larger than %d; using %d", call, c.maxCTAs, kMaxChannels, kMaxChannels);
    c.maxCTAs = kMaxChannels;
  }
  if (c.minCTAs > kMaxChannels) {
    WARN("%s: config->minCTAs = %d is larger than %d; using %d", call, c.minCTAs, kMaxChannels, kMaxChannels);
    c.minCTAs = kMaxChannels;
  }
  if (c.minCTAs > c.maxCTAs)
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: config->minCTAs = %d is larger than config->maxCTAs = %d", call,
                    c.minCTAs, c.maxCTAs);
  if (user->netName != nullptr) {
    const char* n = user->netName;
    if (strcasecmp(n, "UCX") != 0 && strcasecmp(n, "Socket") != 0 && strcasecmp(n, "IB") != 0)
      return MCCL_ERR(ncclInvalidArgument, nullptr,
                      "%s: config->netName = \"%.64s\" is not a network mccl has (UCX, IB, Socket)",
                      call, n);
    c.netName = n;
  }
  if (user->splitShare != U) {
    if (user->splitShare != 0 && user->splitShare != 1)
      return bad(call, "splitShare", user->splitShare, "must be 0 or 1");
    c.splitShare = user->splitShare == 1;
  }
  if (HAS_FIELD(user, trafficClass) && user->trafficClass != U) {
    if (user->trafficClass < 0) return bad(call, "trafficClass", user->trafficClass, "must be >= 0");
    c.trafficClass = user->trafficClass;
  }
  if (HAS_FIELD(user, commName) && user->commName != nullptr) c.commName = user->commName;
  if (HAS_FIELD(user, collnetEnable) && user->collnetEnable != U) {
    if (user->collnetEnable != 0 && user->collnetEnable != 1)
      return bad(call, "collnetEnable", user->collnetEnable, "must be 0 or 1");
    c.collnetEnable = user->collnetEnable == 1;
  }
  if (HAS_FIELD(user, CTAPolicy) && user->CTAPolicy != U) {
    if (user->CTAPolicy != NCCL_CTA_POLICY_DEFAULT && user->CTAPolicy != NCCL_CTA_POLICY_EFFICIENCY &&
        user->CTAPolicy != NCCL_CTA_POLICY_ZERO)
      return bad(call, "CTAPolicy", user->CTAPolicy,
                 "must be NCCL_CTA_POLICY_DEFAULT, _EFFICIENCY or _ZERO");
    c.ctaPolicy = user->CTAPolicy;
  }
  // The fields NCCL 2.28 added (a config from an older header is shorter and has none).
  if (HAS_FIELD(user, shrinkShare) && user->shrinkShare != U) {
    if (user->shrinkShare != 0 && user->shrinkShare != 1)
      return bad(call, "shrinkShare", user->shrinkShare, "must be 0 or 1");
    c.shrinkShare = user->shrinkShare == 1;
  }
  if (HAS_FIELD(user, nvlsCTAs) && user->nvlsCTAs != U) {
    if (user->nvlsCTAs < 1) return bad(call, "nvlsCTAs", user->nvlsCTAs, "must be positive");
    c.nvlsCTAs = user->nvlsCTAs;
  }
  if (HAS_FIELD(user, nChannelsPerNetPeer) && user->nChannelsPerNetPeer != U) {
    if (user->nChannelsPerNetPeer < 1 || user->nChannelsPerNetPeer > kMaxChannels)
      return bad(call, "nChannelsPerNetPeer", user->nChannelsPerNetPeer, "must be 1..64");
    c.nChannelsPerNetPeer = user->nChannelsPerNetPeer;
  }
  if (HAS_FIELD(user, nvlinkCentricSched) && user->nvlinkCentricSched != U) {
    if (user->nvlinkCentricSched != 0 && user->nvlinkCentricSched != 1)
      return bad(call, "nvlinkCentricSched", user->nvlinkCentricSched, "must be 0 or 1");
    c.nvlinkCentricSched = user->nvlinkCentricSched == 1;
  }
  *out = c;
  return ncclSuccess;
}

ncclResult_t parseConfig(const ncclConfig_t* user, const char* call, CommConfig* out) {
  CommConfig c;
  MCCL_CHECK(parseConfigOver(user, CommConfig{}, call, &c));
  // As in NCCL, the variable overrides the configuration of every communicator.
  int64_t envBlocking = knobInt(Knob::CommBlocking);
  if (envBlocking == 0 || envBlocking == 1) c.blocking = envBlocking == 1;
  const int64_t envPolicy = knobInt(Knob::CtaPolicy);
  if (envPolicy == NCCL_CTA_POLICY_DEFAULT || envPolicy == NCCL_CTA_POLICY_EFFICIENCY ||
      envPolicy == NCCL_CTA_POLICY_ZERO)
    c.ctaPolicy = static_cast<int>(envPolicy);
  else if (envPolicy != -1)
    WARN("%s: NCCL_CTA_POLICY=%lld is not 0, 1 or 2; ignored", call, static_cast<long long>(envPolicy));
  *out = c;
  return ncclSuccess;
}

}  // namespace mccl
