// Writes the seed corpus of the fuzz targets (valid inputs each target starts from):
// a real unique id, a bootstrap conversation (Hello, Welcome, Successor, Data), knob values.
//   make_seeds <fuzz/corpus>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap_mpi/wire.h"

using namespace mccl;

namespace {
void put(const std::string& path, const void* data, size_t n) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return;
  std::fwrite(data, 1, n, f);
  std::fclose(f);
}
template <class T>
void append(std::vector<uint8_t>& v, const T& x) {
  const auto* p = reinterpret_cast<const uint8_t*>(&x);
  v.insert(v.end(), p, p + sizeof x);
}
}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "fuzz/corpus";
  SockAddr a4, a6;
  parseHostPort("10.1.2.3:41000", &a4);
  parseHostPort("[fe80::1]:41001", &a6);

  UniqueIdFields f;
  f.root = a4;
  f.secret = 0x0123456789abcdefull;
  f.nonce = 42;
  ncclUniqueId id;
  encodeUniqueId(f, &id);
  put(dir + "/unique_id/v4", &id, sizeof id);
  f.root = a6;
  encodeUniqueId(f, &id);
  put(dir + "/unique_id/v6", &id, sizeof id);

  std::vector<uint8_t> s;
  HelloMsg h{};
  h.secret = f.secret;
  h.role = static_cast<uint32_t>(HelloRole::RankToRoot);
  h.rank = 1;
  h.nranks = 4;
  h.nId = 1;
  a4.toWire(h.listenAddr);
  append(s, makeFrameHeader(FrameType::Hello, 0, sizeof h));
  append(s, h);
  WelcomeMsg w{};
  w.successorRank = 2;
  a6.toWire(w.successorAddr);
  append(s, makeFrameHeader(FrameType::Welcome, 0, sizeof w));
  append(s, w);
  SuccessorMsg sm{};
  sm.firstRank = 3;
  a4.toWire(sm.firstRankAddr);
  append(s, makeFrameHeader(FrameType::Successor, 0, sizeof sm));
  append(s, sm);
  uint8_t table[4 * SockAddr::kWireSize];
  for (int r = 0; r < 4; ++r) (r % 2 ? a6 : a4).toWire(table + r * SockAddr::kWireSize);
  append(s, makeFrameHeader(FrameType::Data, 7, sizeof table));
  append(s, table);
  put(dir + "/frames/conversation", s.data(), s.size());

  const char* knobs[] = {"\x00" "4096", "\x01" "4M", "\x01" "0x10", "\x02" "yes", "\x03" "^tree,ring",
                         "\x04" "INIT,NET", "\x05" "[::1]:5000", "\x05" "127.0.0.1:29500"};
  int k = 0;
  for (const char* v : knobs) {
    size_t n = 1 + std::strlen(v + 1);
    put(dir + "/knobs/seed" + std::to_string(k++), v, n);
  }
  return 0;
}
