#include <gtest/gtest.h>

#include <cstring>

#include "bootstrap_mpi/socket.h"
#include "bootstrap_mpi/wire.h"

using namespace mccl;

namespace {
UniqueIdFields sampleId() {
  UniqueIdFields f;
  EXPECT_TRUE(parseHostPort("127.0.0.1:4242", &f.root));
  f.secret = 0x1122334455667788ull;
  f.nonce = 0x99aabbccddeeff00ull;
  return f;
}
}  // namespace

TEST(UniqueId, RoundTrip) {
  UniqueIdFields f = sampleId();
  ncclUniqueId id;
  encodeUniqueId(f, &id);
  UniqueIdFields g;
  ASSERT_EQ(decodeUniqueId(id, &g, "test"), ncclSuccess);
  EXPECT_EQ(g.secret, f.secret);
  EXPECT_EQ(g.nonce, f.nonce);
  EXPECT_EQ(g.root.str(), "127.0.0.1:4242");
}

TEST(UniqueId, RejectsCorruption) {
  UniqueIdFields f = sampleId();
  ncclUniqueId id;
  encodeUniqueId(f, &id);
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    ncclUniqueId bad = id;
    bad.internal[i] ^= 0x5a;
    UniqueIdFields g;
    EXPECT_EQ(decodeUniqueId(bad, &g, "test"), ncclInvalidArgument) << "byte " << i;
  }
  ncclUniqueId zero;
  std::memset(&zero, 0, sizeof zero);
  UniqueIdFields g;
  EXPECT_EQ(decodeUniqueId(zero, &g, "test"), ncclInvalidArgument);
}

TEST(UniqueId, Ipv6RoundTrip) {
  UniqueIdFields f;
  ASSERT_TRUE(parseHostPort("[::1]:9000", &f.root));
  ncclUniqueId id;
  encodeUniqueId(f, &id);
  UniqueIdFields g;
  ASSERT_EQ(decodeUniqueId(id, &g, "test"), ncclSuccess);
  EXPECT_EQ(g.root.str(), "[::1]:9000");
}

TEST(Frames, HeaderValidation) {
  FrameHeader h = makeFrameHeader(FrameType::Data, 7, 100);
  FrameHeader out;
  std::string why;
  EXPECT_TRUE(decodeFrameHeader(&h, sizeof h, &out, &why));
  EXPECT_EQ(out.tag, 7u);
  EXPECT_EQ(out.size, 100u);
  EXPECT_FALSE(decodeFrameHeader(&h, sizeof h - 1, &out, &why));  // short
  FrameHeader bad = h;
  bad.magic ^= 1;
  EXPECT_FALSE(decodeFrameHeader(&bad, sizeof bad, &out, &why));
  bad = h;
  bad.type = 99;
  EXPECT_FALSE(decodeFrameHeader(&bad, sizeof bad, &out, &why));
  bad = h;
  bad.size = kMaxFramePayload + 1;
  EXPECT_FALSE(decodeFrameHeader(&bad, sizeof bad, &out, &why));
  EXPECT_NE(why.find("exceeds"), std::string::npos);
  bad = h;
  bad.reserved = 1;
  EXPECT_FALSE(decodeFrameHeader(&bad, sizeof bad, &out, &why));
}

TEST(Frames, HelloValidation) {
  HelloMsg h{};
  h.role = static_cast<uint32_t>(HelloRole::RankToRoot);
  h.rank = 3;
  h.nranks = 4;
  h.nId = 1;
  h.idIndex = 0;
  SockAddr a;
  ASSERT_TRUE(parseHostPort("127.0.0.1:1234", &a));
  a.toWire(h.listenAddr);
  std::string why;
  EXPECT_TRUE(validateHello(h, &why)) << why;
  HelloMsg b = h;
  b.rank = 4;
  EXPECT_FALSE(validateHello(b, &why));
  b = h;
  b.nranks = 0;
  EXPECT_FALSE(validateHello(b, &why));
  b = h;
  b.nId = 5;
  EXPECT_FALSE(validateHello(b, &why));
  b = h;
  b.role = 9;
  EXPECT_FALSE(validateHello(b, &why));
  b = h;
  std::memset(b.listenAddr, 0, sizeof b.listenAddr);
  EXPECT_FALSE(validateHello(b, &why));
}

TEST(Sockets, HostPortParsing) {
  SockAddr a;
  EXPECT_TRUE(parseHostPort("localhost:80", &a));
  EXPECT_EQ(a.port(), 80);
  EXPECT_FALSE(parseHostPort("localhost", &a));
  EXPECT_FALSE(parseHostPort("localhost:99999", &a));
  EXPECT_FALSE(parseHostPort("[::1:80", &a));
  EXPECT_TRUE(secretsEqual(5, 5));
  EXPECT_FALSE(secretsEqual(5, 6));
}

TEST(Sockets, ChoosesAnAddress) {
  SockAddr a;
  std::string name;
  ASSERT_EQ(chooseBootstrapAddress(&a, &name), ncclSuccess);
  EXPECT_TRUE(a.valid());
  EXPECT_FALSE(name.empty());
}
