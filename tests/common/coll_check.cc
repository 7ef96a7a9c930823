#include "coll_check.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "core/numeric.h"
#include "core/redop.h"
#include "core/types.h"

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
  }
  return "?";
}

std::string CollCase::describe() const {
  std::ostringstream os;
  os << collKindName(kind) << " " << mccl::datatypeName(type) << " "
     << (preMulSum ? (scalarOnDevice ? "PreMulSum(device)" : "PreMulSum(host)") : mccl::redOpName(op))
     << " count " << count << " root " << root << (inPlace ? " in-place" : " out-of-place") << " seed "
     << seed;
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

std::string runCollCase(ncclComm_t comm, int rank, int n, const CollCase& c, Memory* memOps) {
  HostMemory hostMem;
  Memory* mo = memOps ? memOps : &hostMem;
  const size_t es = datatypeSize(c.type);
  const size_t inCount = c.kind == CollKind::ReduceScatter ? c.count * n : c.count;
  const size_t outCount = c.kind == CollKind::AllGather ? c.count * n : c.count;
  // Room for both buffers plus guard bytes on each side.
  const size_t guard = 64;
  size_t total = c.inPlace ? std::max(inCount, outCount) : inCount + outCount;
  std::vector<unsigned char> mem((total * es) + 2 * guard + 64, 0xCD);
  unsigned char* base = mem.data() + guard;
  void* sendbuf;
  void* recvbuf;
  if (!c.inPlace) {
    sendbuf = base;
    recvbuf = base + inCount * es;
  } else if (c.kind == CollKind::AllGather) {
    recvbuf = base;
    sendbuf = base + static_cast<size_t>(rank) * c.count * es;
  } else if (c.kind == CollKind::ReduceScatter) {
    sendbuf = base;
    recvbuf = base + static_cast<size_t>(rank) * c.count * es;
  } else {
    sendbuf = recvbuf = base;
  }
  // Poison the output, then write the input (in place, the input wins where they overlap).
  std::memset(recvbuf, 0xAB, outCount * es);
  bool hasInput = !(c.kind == CollKind::Broadcast && rank != c.root);
  if (hasInput)
    for (size_t i = 0; i < inCount; ++i) store(c.type, sendbuf, i, inputValue(c, rank, i));
  std::vector<unsigned char> before(mem);
  // The image goes where the operation runs; pointers are translated to that copy.
  unsigned char* dev = static_cast<unsigned char*>(mo->alloc(mem.size()));
  mo->upload(dev, mem.data(), mem.size());
  auto onDev = [&](void* p) { return static_cast<void*>(dev + (static_cast<unsigned char*>(p) - mem.data())); };
  void* dSend = onDev(sendbuf);
  void* dRecv = onDev(recvbuf);

  // The operator.
  ncclRedOp_t op = c.op;
  double scalar = 1;
  std::vector<unsigned char> scalarMem(8);
  if (c.preMulSum) {
    scalar = isFloatType(c.type) ? 0.5 : 2;
    store(c.type, scalarMem.data(), 0, scalar);
  }
  void* dScalar = nullptr;
  if (c.preMulSum) {
    void* where = scalarMem.data();
    if (c.scalarOnDevice) {  // read when the operation runs: must live where it runs
      dScalar = mo->alloc(8);
      mo->upload(dScalar, scalarMem.data(), 8);
      where = dScalar;
    }
    ncclResult_t r = ncclRedOpCreatePreMulSum(&op, where, c.type,
                                              c.scalarOnDevice ? ncclScalarDevice : ncclScalarHostImmediate, comm);
    if (r != ncclSuccess) {
      mo->release(dev);
      if (dScalar) mo->release(dScalar);
      return "ncclRedOpCreatePreMulSum failed: " + std::string(ncclGetLastError(comm));
    }
  }
  ncclResult_t r = ncclSuccess;
  cudaStream_t st = mo->stream();
  switch (c.kind) {
    case CollKind::AllReduce: r = ncclAllReduce(dSend, dRecv, c.count, c.type, op, comm, st); break;
    case CollKind::Broadcast: r = ncclBroadcast(dSend, dRecv, c.count, c.type, c.root, comm, st); break;
    case CollKind::Reduce: r = ncclReduce(dSend, dRecv, c.count, c.type, op, c.root, comm, st); break;
    case CollKind::AllGather: r = ncclAllGather(dSend, dRecv, c.count, c.type, comm, st); break;
    case CollKind::ReduceScatter: r = ncclReduceScatter(dSend, dRecv, c.count, c.type, op, comm, st); break;
  }
  if (r == ncclSuccess) mo->synchronize();
  if (c.preMulSum) ncclRedOpDestroy(op, comm);
  if (dScalar) mo->release(dScalar);
  mo->download(mem.data(), dev, mem.size());
  mo->release(dev);
  std::ostringstream err;
  if (r != ncclSuccess) {
    err << c.describe() << ": returned " << ncclGetErrorString(r) << ": " << ncclGetLastError(comm);
    return err.str();
  }

  // Reference for output element i.
  auto reference = [&](size_t i) -> Reference {
    switch (c.kind) {
      case CollKind::Broadcast: return {inputValue(c, c.root, i), 0};
      case CollKind::AllGather: return {inputValue(c, static_cast<int>(i / c.count), i % c.count), 0};
      default: break;
    }
    size_t src = c.kind == CollKind::ReduceScatter ? static_cast<size_t>(rank) * c.count + i : i;
    double acc = 0, mag = 0;
    bool first = true;
    for (int q = 0; q < n; ++q) {
      double v = inputValue(c, q, src);
      if (c.preMulSum) v *= scalar;
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

  int bad = 0;
  bool writes = !(c.kind == CollKind::Reduce && rank != c.root);
  if (writes) {
    for (size_t i = 0; i < outCount && bad < 5; ++i) {
      Reference ref = reference(i);
      double got = load(c.type, recvbuf, i);
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
  // Nothing outside the output may change (Reduce at a non-root: nothing at all, except
  // the input in place, which must also be intact).
  const unsigned char* outBegin = static_cast<unsigned char*>(recvbuf);
  const unsigned char* outEnd = outBegin + (writes ? outCount * es : 0);
  for (size_t b = 0; b < mem.size() && bad < 5; ++b) {
    const unsigned char* p = mem.data() + b;
    if (p >= outBegin && p < outEnd) continue;
    if (mem[b] != before[b]) {
      err << c.describe() << " rank " << rank << ": byte " << static_cast<long>(p - base)
          << " outside the output changed\n";
      ++bad;
    }
  }
  return err.str();
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
  // Calls in an order that would deadlock without the group: receives first.
  ncclResult_t r = ncclGroupStart();
  for (size_t k = 0; k < recvFrom.size() && r == ncclSuccess; ++k)
    r = ncclRecv(drecv[k], count, type, recvFrom[k], comm, mo->stream());
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

}  // namespace mccl_test
