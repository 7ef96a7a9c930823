#include "coll_check.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "core/numeric.h"
#include "core/redop.h"
#include "core/types.h"
#include "mccl.h"

namespace mccl_test {

const ncclDataType_t kAllTypes[12] = {ncclInt8,    ncclUint8,   ncclInt32,   ncclUint32,
                                      ncclInt64,   ncclUint64,  ncclFloat16, ncclFloat32,
                                      ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
const ncclRedOp_t kBuiltinOps[5] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};

const char* collKindName(CollKind k) {
  switch (k) {
    case CollKind::AllReduce: return "AllReduce";
    case CollKind::Broadcast: return "Broadcast";
    case CollKind::Reduce: return "Reduce";
    case CollKind::AllGather: return "AllGather";
    case CollKind::ReduceScatter: return "ReduceScatter";
    case CollKind::AlltoAll: return "AlltoAll";
    case CollKind::Gather: return "Gather";
    case CollKind::Scatter: return "Scatter";
    case CollKind::AlltoAllv: return "AlltoAllv";
  }
  return "?";
}

std::string CollCase::describe() const {
  std::ostringstream os;
  os << collKindName(kind) << " " << mccl::datatypeName(type) << " "
     << (preMulSum ? (scalarOnDevice ? "PreMulSum(device)" : "PreMulSum(host)") : mccl::redOpName(op))
     << " count " << count << " root " << root << (inPlace ? " in-place" : " out-of-place") << " seed "
     << seed;
  if (misalign) os << " misaligned by " << misalign;
  return os.str();
}

namespace {

using mccl::datatypeSize;
using mccl::isFloatType;

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A uniform double in [0, 1) from (seed, rank, index).
double unit(uint64_t seed, int rank, size_t i) {
  uint64_t h = mix(seed ^ mix(static_cast<uint64_t>(rank) * 1000003ull ^ mix(i)));
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

bool isSigned(ncclDataType_t t) {
  return t == ncclInt8 || t == ncclInt32 || t == ncclInt64 || isFloatType(t);
}

// Stores v (already representable) as type t.
void store(ncclDataType_t t, void* base, size_t i, double v) {
  char* p = static_cast<char*>(base) + i * datatypeSize(t);
  switch (t) {
    case ncclInt8: { int8_t x = static_cast<int8_t>(v); std::memcpy(p, &x, 1); break; }
    case ncclUint8: { uint8_t x = static_cast<uint8_t>(v); std::memcpy(p, &x, 1); break; }
    case ncclInt32: { int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
    case ncclUint32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
    case ncclInt64: { int64_t x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
    case ncclUint64: { uint64_t x = static_cast<uint64_t>(v); std::memcpy(p, &x, 8); break; }
    case ncclFloat16: { uint16_t x = mccl::floatToHalf(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
    case ncclFloat32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    case ncclFloat64: std::memcpy(p, &v, 8); break;
    case ncclBfloat16: { uint16_t x = mccl::floatToBf16(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
    case ncclFloat8e4m3: { uint8_t x = static_cast<uint8_t>(mccl::Fp8E4M3::encode(static_cast<float>(v))); std::memcpy(p, &x, 1); break; }
    case ncclFloat8e5m2: { uint8_t x = static_cast<uint8_t>(mccl::Fp8E5M2::encode(static_cast<float>(v))); std::memcpy(p, &x, 1); break; }
    default: break;
  }
}

double load(ncclDataType_t t, const void* base, size_t i) {
  return mccl::scalarToDouble(t, static_cast<const char*>(base) + i * datatypeSize(t));
}

double roundoff(ncclDataType_t t) {
  switch (t) {
    case ncclFloat16: return std::ldexp(1.0, -11);
    case ncclFloat32: return std::ldexp(1.0, -24);
    case ncclFloat64: return std::ldexp(1.0, -53);
    case ncclBfloat16: return std::ldexp(1.0, -8);
    case ncclFloat8e4m3: return std::ldexp(1.0, -4);
    case ncclFloat8e5m2: return std::ldexp(1.0, -3);
    default: return 0;
  }
}

// Rounds v to the nearest value of type t (what storing it keeps).
double quantize(ncclDataType_t t, double v) {
  char tmp[8];
  store(t, tmp, 0, v);
  return load(t, tmp, 0);
}

// The input value of element i at rank r, chosen so results are representable.
double inputValue(const CollCase& c, int rank, size_t i) {
  double u = unit(c.seed, rank, i);
  ncclDataType_t t = c.type;
  bool prod = !c.preMulSum && c.op == ncclProd;
  bool reduce = c.kind == CollKind::AllReduce || c.kind == CollKind::Reduce || c.kind == CollKind::ReduceScatter;
  if (!reduce) {
    // Data movement: any representable value, distinct per rank and index.
    if (isFloatType(t)) return quantize(t, (u - 0.5) * 8);
    return std::floor(u * (isSigned(t) ? 200 : 250)) - (isSigned(t) ? 100 : 0);
  }
  if (prod) {
    if (isFloatType(t)) return quantize(t, 0.8 + 0.45 * u);
    // Products of up to 16 ranks stay within int8 when factors are -1, 1 or 2 at most
    // once per element: use 1 almost always and 2 for one rank.
    if (static_cast<size_t>(rank) == (i % 7)) return 2;
    return isSigned(t) && u < 0.3 ? -1 : 1;
  }
  if (isFloatType(t)) return quantize(t, 2 * u - 1);
  // Sums of 16 ranks (doubled by a PreMulSum scalar of 2) stay inside int8 / uint8.
  return isSigned(t) ? std::floor(u * 7) - 3 : std::floor(u * 8);
}

struct Reference {
  double value;
  double magnitude;  // sum of |terms|, for the tolerance
};

class HostMemory : public Memory {
 public:
  void* alloc(size_t bytes) override { return std::malloc(bytes); }
  void release(void* p) override { std::free(p); }
  void upload(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  cudaStream_t stream() override { return nullptr; }
  void synchronize() override {}
};

}  // namespace

namespace {

// AlltoAllv layout of a case: rank `from` sends vCount(from, to) elements to `to`. The send
// blocks lie in reverse peer order with one element between them, the receive blocks in
// peer order with two between them (gaps must stay untouched).
size_t vCount(const CollCase& c, int from, int to) {
  return c.count == 0 ? 0 : (c.count + 3 * static_cast<size_t>(from) + 5 * static_cast<size_t>(to)) % (2 * c.count + 1);
}
struct VLayout {
  std::vector<size_t> scount, sdispl, rcount, rdispl;
  size_t sendEnd = 0, recvEnd = 0;
};
VLayout vLayout(const CollCase& c, int rank, int n) {
  VLayout v;
  v.scount.resize(n), v.sdispl.resize(n), v.rcount.resize(n), v.rdispl.resize(n);
  for (int q = n - 1; q >= 0; --q) {
    v.scount[q] = vCount(c, rank, q);
    v.sdispl[q] = v.sendEnd;
    v.sendEnd += v.scount[q] + 1;
  }
  for (int q = 0; q < n; ++q) {
    v.rcount[q] = vCount(c, q, rank);
    v.rdispl[q] = v.recvEnd;
    v.recvEnd += v.rcount[q] + 2;
  }
  return v;
}

}  // namespace

struct PreparedCase::Impl {
  ncclComm_t comm;
  int rank, n;
  CollCase c;
  HostMemory hostMem;
  Memory* mo;
  size_t es, inCount, outCount;
  std::vector<unsigned char> mem, before;
  unsigned char* base;
  void* sendbuf;
  void* recvbuf;
  unsigned char* dev = nullptr;
  void* dSend;
  void* dRecv;
  ncclRedOp_t op;
  double scalar = 1;
  std::vector<unsigned char> scalarMem = std::vector<unsigned char>(8);
  void* dScalar = nullptr;
  bool opCreated = false;
  VLayout v;
  ncclResult_t result = ncclSuccess;
  std::string setupError;
};

PreparedCase::PreparedCase(ncclComm_t comm, int rank, int n, const CollCase& c, Memory* memOps)
    : d_(new Impl) {
  Impl& d = *d_;
  d.comm = comm, d.rank = rank, d.n = n, d.c = c;
  d.mo = memOps ? memOps : &d.hostMem;
  d.es = datatypeSize(c.type);
  const bool isRoot = rank == c.root;
  switch (c.kind) {
    case CollKind::ReduceScatter: d.inCount = c.count * n, d.outCount = c.count; break;
    case CollKind::AllGather: d.inCount = c.count, d.outCount = c.count * n; break;
    case CollKind::AlltoAll: d.inCount = d.outCount = c.count * n; break;
    case CollKind::Gather: d.inCount = c.count, d.outCount = c.count * n; break;
    case CollKind::Scatter: d.inCount = c.count * n, d.outCount = c.count; break;
    case CollKind::AlltoAllv:
      d.v = vLayout(c, rank, n);
      d.inCount = d.v.sendEnd, d.outCount = d.v.recvEnd;
      break;
    default: d.inCount = d.outCount = c.count; break;
  }
  // Gather and Scatter are in place only at the root; AlltoAll with sendbuff == recvbuff;
  // AlltoAllv never. An in-place Gather's other ranks lay out their buffers as the root does
  // (sendbuff = recvbuff + rank * count, nccl-tests' form): NCCL reads a non-root's recvbuff
  // nowhere, but on symmetric windows its offset is where the block lands at the root (the
  // same on every rank).
  bool inPlace = c.inPlace;
  if (c.kind == CollKind::Scatter && !isRoot) inPlace = false;
  if (c.kind == CollKind::AlltoAllv) inPlace = false;
  // Room for both buffers plus guard bytes on each side.
  const size_t guard = 64;
  size_t total = inPlace ? std::max(d.inCount, d.outCount) : d.inCount + d.outCount;
  d.mem.assign((total * d.es) + 2 * guard + 64 + c.misalign, 0xCD);
  d.base = d.mem.data() + guard + c.misalign;
  const size_t es = d.es;
  if (!inPlace) {
    d.sendbuf = d.base;
    d.recvbuf = d.base + d.inCount * es;
  } else if (c.kind == CollKind::AllGather || c.kind == CollKind::Gather) {
    d.recvbuf = d.base;
    d.sendbuf = d.base + static_cast<size_t>(rank) * c.count * es;
  } else if (c.kind == CollKind::ReduceScatter || c.kind == CollKind::Scatter) {
    size_t at = c.kind == CollKind::Scatter ? static_cast<size_t>(c.root) : static_cast<size_t>(rank);
    d.sendbuf = d.base;
    d.recvbuf = d.base + at * c.count * es;
  } else {
    d.sendbuf = d.recvbuf = d.base;
  }
  // Poison the output, then write the input (in place, the input wins where they overlap).
  std::memset(d.recvbuf, 0xAB, d.outCount * es);
  bool hasInput = !((c.kind == CollKind::Broadcast || c.kind == CollKind::Scatter) && !isRoot);
  if (hasInput)
    for (size_t i = 0; i < d.inCount; ++i) store(c.type, d.sendbuf, i, inputValue(c, rank, i));
  d.before = d.mem;
  // The image goes where the operation runs; pointers are translated to that copy.
  d.dev = static_cast<unsigned char*>(d.mo->alloc(d.mem.size()));
  d.mo->upload(d.dev, d.mem.data(), d.mem.size());
  auto onDev = [&](void* p) { return static_cast<void*>(d.dev + (static_cast<unsigned char*>(p) - d.mem.data())); };
  d.dSend = onDev(d.sendbuf);
  d.dRecv = onDev(d.recvbuf);
  // The operator.
  d.op = c.op;
  if (c.preMulSum) {
    d.scalar = isFloatType(c.type) ? 0.5 : 2;
    store(c.type, d.scalarMem.data(), 0, d.scalar);
    void* where = d.scalarMem.data();
    if (c.scalarOnDevice) {  // read when the operation runs: must live where it runs
      d.dScalar = d.mo->alloc(8);
      d.mo->upload(d.dScalar, d.scalarMem.data(), 8);
      where = d.dScalar;
    }
    ncclResult_t r = ncclRedOpCreatePreMulSum(&d.op, where, c.type,
                                              c.scalarOnDevice ? ncclScalarDevice : ncclScalarHostImmediate, comm);
    if (r != ncclSuccess) d.setupError = "ncclRedOpCreatePreMulSum failed: " + std::string(ncclGetLastError(comm));
    else d.opCreated = true;
  }
}

PreparedCase::~PreparedCase() {
  Impl& d = *d_;
  if (d.opCreated) ncclRedOpDestroy(d.op, d.comm);
  if (d.dScalar) d.mo->release(d.dScalar);
  if (d.dev) d.mo->release(d.dev);
}

ncclResult_t PreparedCase::launch() {
  Impl& d = *d_;
  const CollCase& c = d.c;
  if (!d.setupError.empty()) return d.result = ncclInvalidUsage;
  ncclResult_t r = ncclSuccess;
  cudaStream_t st = d.mo->stream();
  void* s = d.dSend;
  void* o = d.dRecv;
  switch (c.kind) {
    case CollKind::AllReduce: r = ncclAllReduce(s, o, c.count, c.type, d.op, d.comm, st); break;
    case CollKind::Broadcast: r = ncclBroadcast(s, o, c.count, c.type, c.root, d.comm, st); break;
    case CollKind::Reduce: r = ncclReduce(s, o, c.count, c.type, d.op, c.root, d.comm, st); break;
    case CollKind::AllGather: r = ncclAllGather(s, o, c.count, c.type, d.comm, st); break;
    case CollKind::ReduceScatter: r = ncclReduceScatter(s, o, c.count, c.type, d.op, d.comm, st); break;
    case CollKind::AlltoAll: r = ncclAlltoAll(s, o, c.count, c.type, d.comm, st); break;
    case CollKind::Gather: r = ncclGather(s, o, c.count, c.type, c.root, d.comm, st); break;
    case CollKind::Scatter: r = ncclScatter(s, o, c.count, c.type, c.root, d.comm, st); break;
    case CollKind::AlltoAllv:
      r = mcclAlltoAllv(s, d.v.scount.data(), d.v.sdispl.data(), o, d.v.rcount.data(), d.v.rdispl.data(), c.type,
                        d.comm, st);
      break;
  }
  return d.result = r;
}

std::string PreparedCase::check(ncclResult_t groupResult) {
  Impl& d = *d_;
  const CollCase& c = d.c;
  const int n = d.n, rank = d.rank;
  std::ostringstream err;
  if (!d.setupError.empty()) return c.describe() + ": " + d.setupError;
  ncclResult_t r = d.result != ncclSuccess ? d.result : groupResult;
  if (r == ncclSuccess) d.mo->synchronize();
  d.mo->download(d.mem.data(), d.dev, d.mem.size());
  if (r != ncclSuccess) {
    err << c.describe() << ": returned " << ncclGetErrorString(r) << ": " << ncclGetLastError(d.comm);
    return err.str();
  }
  const size_t es = d.es;
  // Where output element i comes from: (rank, input index), or false for a gap that must
  // keep its poison.
  auto sourceOf = [&](size_t i, int* from, size_t* idx) -> bool {
    switch (c.kind) {
      case CollKind::AllGather:
      case CollKind::Gather: *from = static_cast<int>(i / c.count), *idx = i % c.count; return true;
      case CollKind::AlltoAll:
        *from = static_cast<int>(i / c.count), *idx = static_cast<size_t>(rank) * c.count + i % c.count;
        return true;
      case CollKind::Scatter: *from = c.root, *idx = static_cast<size_t>(rank) * c.count + i; return true;
      case CollKind::AlltoAllv:
        for (int q = 0; q < n; ++q)
          if (i >= d.v.rdispl[q] && i < d.v.rdispl[q] + d.v.rcount[q]) {
            VLayout theirs = vLayout(c, q, n);
            *from = q, *idx = theirs.sdispl[rank] + (i - d.v.rdispl[q]);
            return true;
          }
        return false;
      default: *from = c.root, *idx = i; return true;  // Broadcast
    }
  };
  // Reference for output element i of a reduction.
  auto reduction = [&](size_t i) -> Reference {
    size_t src = c.kind == CollKind::ReduceScatter ? static_cast<size_t>(rank) * c.count + i : i;
    double acc = 0, mag = 0;
    bool first = true;
    for (int q = 0; q < n; ++q) {
      double v = inputValue(c, q, src);
      if (c.preMulSum) v *= d.scalar;
      else if (c.op == ncclAvg && isFloatType(c.type)) v *= quantize(c.type, 1.0 / n);
      mag += std::fabs(v);
      if (first) {
        acc = v;
        first = false;
        continue;
      }
      if (c.preMulSum || c.op == ncclSum || c.op == ncclAvg) acc += v;
      else if (c.op == ncclProd) acc *= v;
      else if (c.op == ncclMax) acc = std::max(acc, v);
      else if (c.op == ncclMin) acc = std::min(acc, v);
    }
    if (!c.preMulSum && c.op == ncclAvg && !isFloatType(c.type)) acc = std::trunc(acc / n);
    if (!c.preMulSum && c.op == ncclProd) mag = std::fabs(acc) * n;  // relative error of a product
    return {acc, mag};
  };
  const bool reduces = c.kind == CollKind::AllReduce || c.kind == CollKind::Reduce || c.kind == CollKind::ReduceScatter;

  int bad = 0;
  bool writes = !((c.kind == CollKind::Reduce || c.kind == CollKind::Gather) && rank != c.root);
  if (writes) {
    for (size_t i = 0; i < d.outCount && bad < 5; ++i) {
      Reference ref{0, 0};
      if (reduces) {
        ref = reduction(i);
      } else {
        int from;
        size_t idx;
        if (!sourceOf(i, &from, &idx)) {
          size_t off = static_cast<size_t>(static_cast<unsigned char*>(d.recvbuf) - d.mem.data()) + i * es;
          if (std::memcmp(&d.mem[off], &d.before[off], es) != 0) {
            err << c.describe() << " rank " << rank << ": gap element " << i << " was written\n";
            ++bad;
          }
          continue;
        }
        ref = {inputValue(c, from, idx), 0};
      }
      double got = load(c.type, d.recvbuf, i);
      double tol = isFloatType(c.type) ? roundoff(c.type) * (ref.magnitude + 1) * (n + 1) : 0;
      // fp8 results beyond the format saturate; inputs keep sums in range.
      bool ok = std::isfinite(got) && std::fabs(got - ref.value) <= tol;
      if (!ok) {
        err << c.describe() << " rank " << rank << ": element " << i << " is " << got << ", expected "
            << ref.value << " (tolerance " << tol << ")\n";
        ++bad;
      }
    }
  }
  // Nothing outside the output may change (Reduce/Gather at a non-root: nothing at all,
  // except the input in place, which must also be intact).
  const unsigned char* outBegin = static_cast<unsigned char*>(d.recvbuf);
  const unsigned char* outEnd = outBegin + (writes ? d.outCount * es : 0);
  for (size_t b = 0; b < d.mem.size() && bad < 5; ++b) {
    const unsigned char* p = d.mem.data() + b;
    if (p >= outBegin && p < outEnd) continue;
    if (d.mem[b] != d.before[b]) {
      err << c.describe() << " rank " << rank << ": byte " << static_cast<long>(p - d.base)
          << " outside the output changed\n";
      ++bad;
    }
  }
  return err.str();
}

std::string runCollCase(ncclComm_t comm, int rank, int n, const CollCase& c, Memory* memOps) {
  PreparedCase pc(comm, rank, n, c, memOps);
  pc.launch();
  return pc.check(ncclSuccess);
}

std::string runP2pPattern(ncclComm_t comm, int rank, int n, const std::string& pattern, size_t count,
                          ncclDataType_t type, int root, uint64_t seed, Memory* memOps) {
  HostMemory hostMem;
  Memory* mo = memOps ? memOps : &hostMem;
  const size_t es = datatypeSize(type);
  // Value that rank `from` sends to rank `to` at index i.
  auto value = [&](int from, int to, size_t i) {
    double u = unit(seed, from * 131 + to, i);
    return isFloatType(type) ? quantize(type, (u - 0.5) * 8)
                             : std::floor(u * (isSigned(type) ? 200 : 250)) - (isSigned(type) ? 100 : 0);
  };
  std::vector<int> sendTo, recvFrom;
  if (pattern == "ring") {
    sendTo = {(rank + 1) % n};
    recvFrom = {(rank + n - 1) % n};
  } else if (pattern == "pairs" || pattern == "pairs-split") {
    if ((rank ^ 1) < n) sendTo = recvFrom = {rank ^ 1};
  } else if (pattern == "neighbor") {
    sendTo = {(rank + 1) % n, (rank + n - 1) % n};
    recvFrom = {(rank + n - 1) % n, (rank + 1) % n};
  } else if (pattern == "alltoall") {
    for (int q = 0; q < n; ++q) sendTo.push_back(q), recvFrom.push_back(q);
  } else if (pattern == "scatter") {
    if (rank == root)
      for (int q = 0; q < n; ++q) sendTo.push_back(q);
    recvFrom = {root};
  } else if (pattern == "gather") {
    sendTo = {root};
    if (rank == root)
      for (int q = 0; q < n; ++q) recvFrom.push_back(q);
  } else {
      return "unknown pattern " + pattern;
  }
  std::vector<std::vector<unsigned char>> sbuf(sendTo.size()), rbuf(recvFrom.size());
  for (size_t k = 0; k < sendTo.size(); ++k) {
    sbuf[k].resize(count * es + 1);
    for (size_t i = 0; i < count; ++i) store(type, sbuf[k].data(), i, value(rank, sendTo[k], i));
  }
  for (size_t k = 0; k < recvFrom.size(); ++k) rbuf[k].assign(count * es + 1, 0xAB);
  std::vector<void*> dsend(sendTo.size()), drecv(recvFrom.size());
  for (size_t k = 0; k < sendTo.size(); ++k) {
    dsend[k] = mo->alloc(sbuf[k].size());
    mo->upload(dsend[k], sbuf[k].data(), sbuf[k].size());
  }
  for (size_t k = 0; k < recvFrom.size(); ++k) {
    drecv[k] = mo->alloc(rbuf[k].size());
    mo->upload(drecv[k], rbuf[k].data(), rbuf[k].size());
  }
  // Calls in an order that would deadlock without the group: receives first. pairs-split:
  // the odd ranks receive in one group and send in the next (their peers' one group goes
  // both ways, theirs do not).
  ncclResult_t r = ncclGroupStart();
  for (size_t k = 0; k < recvFrom.size() && r == ncclSuccess; ++k)
    r = ncclRecv(drecv[k], count, type, recvFrom[k], comm, mo->stream());
  if (pattern == "pairs-split" && rank % 2 == 1 && r == ncclSuccess) {
    r = ncclGroupEnd();
    if (r == ncclSuccess) r = ncclGroupStart();
  }
  for (size_t k = 0; k < sendTo.size() && r == ncclSuccess; ++k)
    r = ncclSend(dsend[k], count, type, sendTo[k], comm, mo->stream());
  ncclResult_t e = ncclGroupEnd();
  if (r == ncclSuccess) r = e;
  if (r == ncclSuccess) mo->synchronize();
  for (size_t k = 0; k < recvFrom.size(); ++k) {
    mo->download(rbuf[k].data(), drecv[k], rbuf[k].size());
    mo->release(drecv[k]);
  }
  for (size_t k = 0; k < sendTo.size(); ++k) mo->release(dsend[k]);
  std::ostringstream err;
  if (r != ncclSuccess) {
    err << pattern << ": " << ncclGetErrorString(r) << ": " << ncclGetLastError(comm);
    return err.str();
  }
  int bad = 0;
  for (size_t k = 0; k < recvFrom.size(); ++k) {
    for (size_t i = 0; i < count && bad < 5; ++i) {
      double got = load(type, rbuf[k].data(), i), want = value(recvFrom[k], rank, i);
      if (got != want) {
        err << pattern << " rank " << rank << " from " << recvFrom[k] << " element " << i << ": " << got
            << " != " << want << "\n";
        ++bad;
      }
    }
    if (rbuf[k][count * es] != 0xAB) err << pattern << ": wrote past the receive buffer\n";
  }
  return err.str();
}

std::vector<CollCase> alltoallFamilyCases(int n, size_t large) {
  std::vector<CollCase> cases;
  uint64_t seed = 7000;
  size_t ti = 0;
  auto nextType = [&] { return kAllTypes[ti++ % 12]; };
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, large}) {
    for (bool inPlace : {false, true})
      for (int root = 0; root < n; ++root) {
        if (count == large && root != n - 1) continue;
        cases.push_back(CollCase{CollKind::Gather, nextType(), ncclSum, false, false, count, root, inPlace, seed++});
        cases.push_back(CollCase{CollKind::Scatter, nextType(), ncclSum, false, false, count, root, inPlace, seed++});
      }
    for (bool inPlace : {false, true})
      cases.push_back(CollCase{CollKind::AlltoAll, nextType(), ncclSum, false, false, count, 0, inPlace, seed++});
    cases.push_back(CollCase{CollKind::AlltoAllv, nextType(), ncclSum, false, false, count, 0, false, seed++});
  }
  for (ncclDataType_t t : kAllTypes)
    for (CollKind k : {CollKind::AlltoAll, CollKind::AlltoAllv, CollKind::Gather, CollKind::Scatter})
      cases.push_back(CollCase{k, t, ncclSum, false, false, 3, static_cast<int>(t) % n, (t % 2) == 1, seed++});
  return cases;
}

std::string runMixedGroup(ncclComm_t comm, int rank, int n, Memory* mem) {
  std::vector<CollCase> cases = {
      {CollKind::AllReduce, ncclFloat32, ncclSum, false, false, 100, 0, false, 11},
      {CollKind::AlltoAll, ncclInt32, ncclSum, false, false, 33, 0, false, 12},
      {CollKind::AlltoAll, ncclFloat32, ncclSum, false, false, 21, 0, true, 19},
      {CollKind::Gather, ncclFloat64, ncclSum, false, false, 5, n - 1, true, 13},
      {CollKind::Broadcast, ncclUint8, ncclSum, false, false, 17, n / 2, false, 14},
      {CollKind::Scatter, ncclBfloat16, ncclSum, false, false, 9, 0, false, 15},
      {CollKind::AlltoAllv, ncclInt64, ncclSum, false, false, 6, 0, false, 16},
      {CollKind::ReduceScatter, ncclInt8, ncclMax, false, false, 4, 0, true, 17},
  };
  std::vector<std::unique_ptr<PreparedCase>> prepared;
  for (const CollCase& c : cases) prepared.emplace_back(new PreparedCase(comm, rank, n, c, mem));
  ncclResult_t r = ncclGroupStart();
  for (auto& p : prepared)
    if (r == ncclSuccess) r = p->launch();
  ncclResult_t e = ncclGroupEnd();
  if (r == ncclSuccess) r = e;
  std::string err;
  for (auto& p : prepared) err += p->check(r);
  // A Send/Recv ring in a group of its own right after: nothing of the group is left over.
  err += runP2pPattern(comm, rank, n, "ring", 10, ncclFloat16, 0, 18, mem);
  return err;
}

std::string compareCommsBitwise(ncclComm_t a, ncclComm_t b, int rank, int nranks,
                                const std::vector<ncclDataType_t>& types, int* ran) {
  const size_t count = 6;
  const int n = nranks, r = rank;
  std::ostringstream errs;
  *ran = 0;
  for (ncclDataType_t t : types)
    for (ncclRedOp_t op : {ncclSum, ncclProd, ncclMax, ncclMin})
      for (int kind = 0; kind < 5; ++kind) {
        if ((t == ncclFloat16 || t == ncclBfloat16) && op == ncclProd && n > 4) continue;  // 5^5: not exact
        const size_t es = mccl::datatypeSize(t), total = count * n * es;
        std::vector<char> in(total), out[2];
        for (size_t i = 0; i < count * n; ++i) {
          int v = static_cast<int>((i * 7 + r * 3) % 5) + (op == ncclProd ? 1 : 0) - (op == ncclMax ? 2 : 0);
          if (t == ncclUint8 || t == ncclUint32 || t == ncclUint64) v = v < 0 ? -v : v;
          const double d = t == ncclFloat32 || t == ncclFloat64 ? v * 0.5 : v;
          switch (t) {
            case ncclInt8: case ncclUint8: in[i] = static_cast<char>(v); break;
            case ncclInt32: case ncclUint32: { int32_t x = v; std::memcpy(&in[i * 4], &x, 4); break; }
            case ncclInt64: case ncclUint64: { int64_t x = v; std::memcpy(&in[i * 8], &x, 8); break; }
            case ncclFloat32: { float x = static_cast<float>(d); std::memcpy(&in[i * 4], &x, 4); break; }
            case ncclFloat64: std::memcpy(&in[i * 8], &d, 8); break;
            default: {
              uint64_t bits = mccl::scalarBitsFromDouble(t, d);  // exact: small integers
              std::memcpy(&in[i * es], &bits, es);
              break;
            }
          }
        }
        bool ok = true;
        for (int path = 0; path < 2 && ok; ++path) {
          ncclComm_t c = path == 0 ? a : b;
          out[path].assign(total, static_cast<char>(0x5a));
          void* o = out[path].data();
          ncclResult_t res = ncclSuccess;
          switch (kind) {
            case 0: res = ncclAllReduce(in.data(), o, count, t, op, c, nullptr); break;
            case 1: res = ncclBroadcast(in.data(), o, count, t, n - 1, c, nullptr); break;
            case 2: res = ncclReduce(in.data(), o, count, t, op, 0, c, nullptr); break;
            case 3: res = ncclAllGather(in.data(), o, count, t, c, nullptr); break;
            default: res = ncclReduceScatter(in.data(), o, count, t, op, c, nullptr); break;
          }
          if (res != ncclSuccess) {
            errs << "kind " << kind << " type " << t << " op " << op << ": " << ncclGetLastError(c) << "\n";
            ok = false;
          }
        }
        if (!ok) continue;
        ++*ran;
        if (std::memcmp(out[0].data(), out[1].data(), total) != 0)
          errs << "kind " << kind << " type " << t << " op " << op << " differs on rank " << r << "\n";
      }
  return errs.str();
}

}  // namespace mccl_test
