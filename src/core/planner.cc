#include "core/planner.h"

#include "core/comm.h"

namespace mccl {

double estimateOpTimeUs(const ncclComm* comm, const OpDesc& op) {
  // Latency and bandwidth per link: host transports vs NVLink-class GPU links.
  const double alphaUs = comm->isHost() ? 4.0 : 2.0;
  const double gbps = comm->isHost() ? 5.0 : 300.0;
  const double n = comm->nranks;
  const double bytes = static_cast<double>(op.bytes());
  double steps = 0, factor = 0;
  switch (op.kind) {
    case OpKind::AllReduce: steps = 2 * (n - 1); factor = 2 * (n - 1) / n; break;
    case OpKind::AllGather:
    case OpKind::ReduceScatter: steps = n - 1; factor = n - 1; break;  // count is per rank
    case OpKind::Broadcast:
    case OpKind::Reduce: steps = n - 1; factor = 1; break;
    case OpKind::Send:
    case OpKind::Recv: steps = 1; factor = 1; break;
  }
  if (n <= 1) return alphaUs;
  return steps * alphaUs + factor * bytes / (gbps * 1e3);
}

}  // namespace mccl
