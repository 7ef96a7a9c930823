// The order of a group's Sends and Recvs on the FIFOs, where a pair's transfers match in
// the order each end posts them.
#pragma once

#include <algorithm>
#include <vector>

#include "core/op.h"

namespace mccl {

// Puts the Sends and Recvs a collective made (an AlltoAll's, Gather's or Scatter's, a cut
// AllGather's or Broadcast's) before the user's own, each kind in its order: ranks may call
// a collective and their Sends and Recvs in different orders in one group, and NCCL matches
// a user's Send only with the peer's Recv (the copy engines' meetings keep the two kinds
// apart by lane). A group of one kind is left as it is.
inline void madeTransfersFirst(std::vector<OpDesc>* ops) {
  auto user = [](const OpDesc& op) { return op.isP2p() && op.call == P2pCall::User; };
  auto made = [](const OpDesc& op) { return op.isP2p() && op.call != P2pCall::User; };
  if (std::any_of(ops->begin(), ops->end(), user) && std::any_of(ops->begin(), ops->end(), made))
    std::stable_partition(ops->begin(), ops->end(), [&](const OpDesc& op) { return !user(op); });
}

}  // namespace mccl
