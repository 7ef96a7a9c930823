#include "bootstrap_mpi/bootstrap.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/knobs.h"

namespace mccl {

double bootstrapTimeoutSeconds() {
  // Unset: MCCL_TIMEOUT, so a rank that never arrives is reported as late as a dead peer.
  int64_t s = knobInt(Knob::BootstrapTimeout);
  if (s > 0) return static_cast<double>(s);
  int64_t t = knobInt(Knob::Timeout);
  return t > 0 ? static_cast<double>(t) : 1e9;
}

ncclResult_t Bootstrap::barrier() {
  std::vector<char> bytes(static_cast<size_t>(size_), 0);
  return allGather(bytes.data(), 1);
}

ncclResult_t Bootstrap::newChildSeed(int, std::string*) {
  return MCCL_ERR(ncclInternalError, owner_, "bootstrap %s cannot create a child", kind());
}

ncclResult_t Bootstrap::joinChild(const std::string&, int, int, std::unique_ptr<Bootstrap>*) {
  return MCCL_ERR(ncclInternalError, owner_, "bootstrap %s cannot join a child", kind());
}

// Generic split: exchange (color, key); the first member of each color creates a seed
// and hands it to the other members; everyone joins the child with it.
ncclResult_t Bootstrap::split(int color, int key, std::unique_ptr<Bootstrap>* child) {
  struct Entry {
    int32_t color;
    int32_t key;
  };
  std::vector<Entry> all(static_cast<size_t>(size_));
  all[rank_] = Entry{color, key};
  MCCL_CHECK(allGather(all.data(), sizeof(Entry)));

  child->reset();
  if (color < 0) return ncclSuccess;
  std::vector<int> members;
  for (int r = 0; r < size_; ++r)
    if (all[r].color == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return all[a].key < all[b].key; });
  int childSize = static_cast<int>(members.size());
  int childRank = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());

  std::string seed;
  MCCL_CHECK(shareChildSeed(members, childRank, kTagSplit | static_cast<uint32_t>(color), &seed));
  return joinChild(seed, childRank, childSize, child);
}

ncclResult_t Bootstrap::shareChildSeed(const std::vector<int>& members, int childRank, uint64_t tag,
                                       std::string* seed) {
  constexpr size_t kSeedMax = 512;
  char seedBuf[kSeedMax] = {0};
  const int childSize = static_cast<int>(members.size());
  if (childRank == 0) {
    MCCL_CHECK(newChildSeed(childSize, seed));
    if (seed->size() >= kSeedMax)
      return MCCL_ERR(ncclInternalError, owner_, "child seed of %zu bytes is too long", seed->size());
    std::memcpy(seedBuf, seed->data(), seed->size());
    for (int i = 1; i < childSize; ++i) MCCL_CHECK(send(members[i], tag, seedBuf, kSeedMax));
  } else {
    MCCL_CHECK(recv(members[0], tag, seedBuf, kSeedMax));
    seedBuf[kSeedMax - 1] = '\0';
    seed->assign(seedBuf, strnlen(seedBuf, kSeedMax));
  }
  return ncclSuccess;
}

// Generic shrink: the first member makes the child's seed and sends it to the other
// members; nobody else is involved (no allgather over the parent, which would wait for
// excluded or dead ranks).
ncclResult_t Bootstrap::shrink(const std::vector<int>& members, uint64_t index,
                               std::unique_ptr<Bootstrap>* child) {
  child->reset();
  int childRank = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
  int childSize = static_cast<int>(members.size());
  if (childRank == childSize)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap shrink: rank %d is not a member", rank_);
  std::string seed;
  MCCL_CHECK(shareChildSeed(members, childRank, kTagShrink | static_cast<uint32_t>(index), &seed));
  return joinChild(seed, childRank, childSize, child);
}

}  // namespace mccl
