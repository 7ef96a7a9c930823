#include "core/connect.h"

#include <vector>

#include "core/comm.h"
#include "core/error.h"

namespace mccl {

uint64_t ConnectExchange::tagOf(const ConnKey& key, bool fromSender) const {
  return kTagConnect | (static_cast<uint64_t>(key.cls) << 24) | (static_cast<uint64_t>(key.channel) << 1) |
         (fromSender ? 1 : 0);
}

ncclResult_t ConnectExchange::post(const ConnKey& key, const void* record) {
  MCCL_CHECK(comm_->bootstrap->send(key.peer, tagOf(key, key.send), record, bytes_));
  pending_.push_back(key);
  return ncclSuccess;
}

ncclResult_t ConnectExchange::poll(
    const std::function<ncclResult_t(const ConnKey&, const void* peerRecord)>& done) {
  std::vector<char> rec(bytes_);
  size_t keep = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const ConnKey key = pending_[i];
    bool got = false;
    MCCL_CHECK(comm_->bootstrap->tryRecv(key.peer, tagOf(key, !key.send), rec.data(), bytes_, &got));
    if (got) MCCL_CHECK(done(key, rec.data()));
    else pending_[keep++] = key;
  }
  pending_.resize(keep);
  return ncclSuccess;
}

}  // namespace mccl
