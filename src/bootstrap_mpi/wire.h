// Wire formats of the TCP bootstrap: the unique id and the framed messages. Decoders
// validate everything (they are fuzzed): a malformed input is an error, never a crash or
// an allocation of a size the input chose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "bootstrap_mpi/socket.h"
#include "nccl.h"

namespace mccl {

// ---- Unique id ------------------------------------------------------------------------

struct UniqueIdFields {
  SockAddr root;       // where the rendezvous root listens
  uint64_t secret = 0; // proves a connection belongs to this id
  uint64_t nonce = 0;  // random; identifies the communicator in logs (commHash)
};

void encodeUniqueId(const UniqueIdFields& f, ncclUniqueId* id);
// ncclInvalidArgument with a sentence naming call when id is not one mccl made.
ncclResult_t decodeUniqueId(const ncclUniqueId& id, UniqueIdFields* f, const char* call);

// ---- Frames -------------------------------------------------------------------------------

enum class FrameType : uint16_t {
  Hello = 1,      // first frame of every connection: who I am, and the secret
  Welcome = 2,    // root -> rank: your successor in the bootstrap ring
  Successor = 3,  // root k -> root k-1: the first rank of subset k
  Data = 4,       // rank -> rank: a tagged message
};

constexpr uint32_t kFrameMagic = 0x6f42636d;  // "mcBo"
constexpr uint32_t kMaxFramePayload = 1u << 20;

struct FrameHeader {
  uint32_t magic;
  uint16_t type;
  uint16_t flags;
  uint32_t size;  // payload bytes
  uint32_t reserved;
  uint64_t tag;
};
static_assert(sizeof(FrameHeader) == 24, "FrameHeader must have no padding");

// Returns false (and why) when the header is not valid: wrong magic, unknown type,
// payload larger than kMaxFramePayload, or fewer than sizeof(FrameHeader) bytes.
bool decodeFrameHeader(const void* data, size_t n, FrameHeader* out, std::string* why);
FrameHeader makeFrameHeader(FrameType type, uint64_t tag, uint32_t size);

enum class HelloRole : uint32_t { RankToRoot = 1, RankToRank = 2, RootToRoot = 3 };

struct HelloMsg {
  uint64_t secret;
  uint32_t role;
  int32_t rank;
  int32_t nranks;
  int32_t nId;
  int32_t idIndex;
  uint32_t pad;
  uint64_t prevRootSecret;             // RankToRoot: secret of root (idIndex-1) mod nId
  uint8_t listenAddr[SockAddr::kWireSize];  // the sender's listening address
  uint8_t prevRootAddr[SockAddr::kWireSize];
};
static_assert(sizeof(HelloMsg) == 80, "HelloMsg must have no padding");

struct WelcomeMsg {
  int32_t successorRank;
  uint32_t pad;
  uint8_t successorAddr[SockAddr::kWireSize];
  uint32_t pad2;
};
static_assert(sizeof(WelcomeMsg) == 32, "WelcomeMsg must have no padding");

struct SuccessorMsg {
  int32_t firstRank;
  uint32_t pad;
  uint8_t firstRankAddr[SockAddr::kWireSize];
  uint32_t pad2;
};
static_assert(sizeof(SuccessorMsg) == 32, "SuccessorMsg must have no padding");

// Checks a Hello against what the receiver expects (ranks in range, sizes consistent).
bool validateHello(const HelloMsg& h, std::string* why);

}  // namespace mccl
