#include "algorithms/schedule_dump.h"

#include <cstdio>

namespace mccl {

const char* collName(Coll c) {
  switch (c) {
    case Coll::AllReduce: return "AllReduce";
    case Coll::AllGather: return "AllGather";
    case Coll::ReduceScatter: return "ReduceScatter";
    case Coll::Broadcast: return "Broadcast";
    case Coll::Reduce: return "Reduce";
    case Coll::Send: return "Send";
    case Coll::Recv: return "Recv";
  }
  return "?";
}

const char* algoName(Algo a) {
  switch (a) {
    case Algo::Ring: return "ring";
    case Algo::Tree: return "tree";
    case Algo::Chain: return "chain";
    case Algo::Binomial: return "binomial";
    case Algo::P2p: return "p2p";
  }
  return "?";
}

namespace {
const char* bufName(Buf b) {
  switch (b) {
    case Buf::Input: return "in";
    case Buf::Output: return "out";
    case Buf::Scratch: return "scratch";
    default: return "";
  }
}
}  // namespace

std::string formatStep(const Step& st) {
  std::string out;
  char tmp[96];
  for (int k = 0; k < st.nrecv; ++k) {
    std::snprintf(tmp, sizeof tmp, "%srecv %d", k ? " + " : "", st.recvPeer[k]);
    out += tmp;
  }
  if (st.src != Buf::None) {
    std::snprintf(tmp, sizeof tmp, "%s%s[%lld:%lld)", st.nrecv ? " + " : "", bufName(st.src),
                  static_cast<long long>(st.srcOffset), static_cast<long long>(st.srcOffset + st.count));
    out += tmp;
  }
  out += " ->";
  if (st.dst != Buf::None) {
    std::snprintf(tmp, sizeof tmp, " %s[%lld:%lld)", bufName(st.dst), static_cast<long long>(st.dstOffset),
                  static_cast<long long>(st.dstOffset + st.count));
    out += tmp;
  }
  for (int k = 0; k < st.nsend; ++k) {
    std::snprintf(tmp, sizeof tmp, " send %d", st.sendPeer[k]);
    out += tmp;
  }
  if (st.final) out += " final";
  return out;
}

std::string dumpSchedule(const Schedule& s, int64_t maxSteps) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%s/%s rank %d/%d root %d count %lld chunk %lld channels %d\n",
                collName(s.coll), algoName(s.algo), s.rank, s.nranks, s.root,
                static_cast<long long>(s.count), static_cast<long long>(s.chunk), s.nchannels);
  out += line;
  for (int c = 0; c < s.nchannels; ++c) {
    for (int lane = 0; lane < numLanes(s); ++lane) {
      int64_t n = numSteps(s, c, lane);
      std::snprintf(line, sizeof line, "  ch%d lane%d: %lld steps\n", c, lane, static_cast<long long>(n));
      out += line;
      for (int64_t i = 0; i < n && i < maxSteps; ++i) {
        std::snprintf(line, sizeof line, "    %lld: ", static_cast<long long>(i));
        out += line + formatStep(stepAt(s, c, lane, i)) + "\n";
      }
      if (n > maxSteps) out += "    ...\n";
    }
  }
  return out;
}

}  // namespace mccl
