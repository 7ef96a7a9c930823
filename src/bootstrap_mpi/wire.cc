#include "bootstrap_mpi/wire.h"

#include <cstring>

#include "core/error.h"

namespace mccl {
namespace {

constexpr char kIdMagic[8] = {'m', 'c', 'c', 'l', 'U', 'I', 'D', '1'};
constexpr size_t kIdAddrOff = 12, kIdSecretOff = 32, kIdNonceOff = 40, kIdSumOff = 48,
                 kIdUsed = 52;

uint32_t checksum(const char* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 16777619u;
  }
  return h;
}

}  // namespace

void encodeUniqueId(const UniqueIdFields& f, ncclUniqueId* id) {
  std::memset(id->internal, 0, sizeof id->internal);
  char* p = id->internal;
  std::memcpy(p, kIdMagic, 8);
  uint32_t version = 1;
  std::memcpy(p + 8, &version, 4);
  f.root.toWire(reinterpret_cast<uint8_t*>(p + kIdAddrOff));
  std::memcpy(p + kIdSecretOff, &f.secret, 8);
  std::memcpy(p + kIdNonceOff, &f.nonce, 8);
  uint32_t sum = checksum(p, kIdSumOff);
  std::memcpy(p + kIdSumOff, &sum, 4);
}

ncclResult_t decodeUniqueId(const ncclUniqueId& id, UniqueIdFields* f, const char* call) {
  const char* p = id.internal;
  if (std::memcmp(p, kIdMagic, 8) != 0)
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: the ncclUniqueId was not made by ncclGetUniqueId (bad magic)", call);
  uint32_t version, sum;
  std::memcpy(&version, p + 8, 4);
  std::memcpy(&sum, p + kIdSumOff, 4);
  if (version != 1)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: ncclUniqueId version %u is unknown", call,
                    version);
  if (sum != checksum(p, kIdSumOff))
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: the ncclUniqueId is corrupted (checksum)",
                    call);
  for (size_t i = kIdUsed; i < sizeof id.internal; ++i)
    if (p[i] != 0)
      return MCCL_ERR(ncclInvalidArgument, nullptr,
                      "%s: the ncclUniqueId is corrupted (byte %zu of its padding is not zero)",
                      call, i);
  UniqueIdFields out;
  if (!SockAddr::fromWire(reinterpret_cast<const uint8_t*>(p + kIdAddrOff), &out.root))
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: the ncclUniqueId holds no valid address",
                    call);
  std::memcpy(&out.secret, p + kIdSecretOff, 8);
  std::memcpy(&out.nonce, p + kIdNonceOff, 8);
  *f = out;
  return ncclSuccess;
}

FrameHeader makeFrameHeader(FrameType type, uint64_t tag, uint32_t size) {
  FrameHeader h{};
  h.magic = kFrameMagic;
  h.type = static_cast<uint16_t>(type);
  h.size = size;
  h.tag = tag;
  return h;
}

bool decodeFrameHeader(const void* data, size_t n, FrameHeader* out, std::string* why) {
  if (n < sizeof(FrameHeader)) {
    if (why) *why = "short header";
    return false;
  }
  FrameHeader h;
  std::memcpy(&h, data, sizeof h);
  if (h.magic != kFrameMagic) {
    if (why) *why = "bad magic";
    return false;
  }
  if (h.type < static_cast<uint16_t>(FrameType::Hello) ||
      h.type > static_cast<uint16_t>(FrameType::Data)) {
    if (why) *why = "unknown frame type " + std::to_string(h.type);
    return false;
  }
  if (h.size > kMaxFramePayload) {
    if (why) *why = "payload of " + std::to_string(h.size) + " bytes exceeds the limit";
    return false;
  }
  if (h.flags != 0 || h.reserved != 0) {
    if (why) *why = "reserved fields are not zero";
    return false;
  }
  *out = h;
  return true;
}

bool validateHello(const HelloMsg& h, std::string* why) {
  auto fail = [&](const char* w) {
    if (why) *why = w;
    return false;
  };
  if (h.role < static_cast<uint32_t>(HelloRole::RankToRoot) ||
      h.role > static_cast<uint32_t>(HelloRole::RootToRoot))
    return fail("unknown role");
  if (h.nranks < 1 || h.nranks > (1 << 24)) return fail("nranks out of range");
  if (h.role == static_cast<uint32_t>(HelloRole::RootToRoot)) return true;
  if (h.rank < 0 || h.rank >= h.nranks) return fail("rank out of range");
  if (h.role == static_cast<uint32_t>(HelloRole::RankToRoot)) {
    if (h.nId < 1 || h.nId > h.nranks) return fail("nId out of range");
    if (h.idIndex < 0 || h.idIndex >= h.nId) return fail("idIndex out of range");
    SockAddr a;
    if (!SockAddr::fromWire(h.listenAddr, &a)) return fail("bad listen address");
  }
  return true;
}

}  // namespace mccl
