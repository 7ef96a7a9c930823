// Runs one collective on host buffers and checks every output element against a
// reference computed independently, in double precision, from the same inputs.
//
// Inputs are a deterministic function of (seed, rank, index), chosen per operator so the
// exact result is representable: small integers for integer sums and products, values in
// [-1, 1] for float sums, [0.5, 1.5] for products. Integer results must match exactly;
// float results within tolerance(type) * (sum of |terms| + 1) * (nranks + 1), where
// tolerance is the type's unit roundoff (2^-24 float, 2^-53 double, 2^-11 half,
// 2^-8 bfloat16, 2^-4 e4m3, 2^-3 e5m2): every rank's partial sum is rounded once.
// Output elements must all be written; elements outside the output must stay untouched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nccl.h"

namespace mccl_test {

// AlltoAllv: counts per peer derived from count (coll_check.cc, vCount), with gaps between
// the blocks on both sides.
enum class CollKind { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AlltoAll, Gather, Scatter, AlltoAllv };
const char* collKindName(CollKind k);

struct CollCase {
  CollKind kind = CollKind::AllReduce;
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;   // ignored for Broadcast/AllGather
  bool preMulSum = false;     // use a PreMulSum operator instead of op
  bool scalarOnDevice = false;  // PreMulSum with ncclScalarDevice residence
  size_t count = 0;           // API count (AllGather: per rank send; ReduceScatter: per rank recv)
  int root = 0;
  bool inPlace = false;       // Gather/Scatter: at the root only; AlltoAll(v): ignored
  uint64_t seed = 1;
  size_t misalign = 0;        // bytes past an aligned place where both buffers start
  std::string describe() const;
};

// Where a case's buffers live. The checker builds a host image of the buffers (guards,
// poisoned output, inputs), uploads it, runs the collective, downloads it, compares.
class Memory {
 public:
  virtual ~Memory() = default;
  virtual void* alloc(size_t bytes) = 0;
  virtual void release(void* p) = 0;
  virtual void upload(void* dst, const void* src, size_t bytes) = 0;
  virtual void download(void* dst, const void* src, size_t bytes) = 0;
  virtual cudaStream_t stream() = 0;
  virtual void synchronize() = 0;  // after the operation: wait for its completion
};

// Runs c on comm (this rank of nranks) and returns "" when every check passed, otherwise
// the first mismatches. The call's own error (if any) is reported too. mem null: host
// memory.
std::string runCollCase(ncclComm_t comm, int rank, int nranks, const CollCase& c, Memory* mem = nullptr);

// The same in three steps, so that several cases can be launched inside one group:
// construct (buffers, inputs, operator), launch() (the API call only), then, after the
// group ended, check(result of ncclGroupEnd) (waits, compares; "" when all is well).
class PreparedCase {
 public:
  PreparedCase(ncclComm_t comm, int rank, int nranks, const CollCase& c, Memory* mem = nullptr);
  ~PreparedCase();
  PreparedCase(const PreparedCase&) = delete;
  PreparedCase& operator=(const PreparedCase&) = delete;
  ncclResult_t launch();
  std::string check(ncclResult_t groupResult);

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

// Point-to-point patterns of the guide, each in one group: "ring", "alltoall",
// "scatter", "gather", "neighbor"; and "pairs" (ranks 2k and 2k + 1 swap buffers, a last
// odd rank sits out), "pairs-split" (the same, the odd ranks' Recv and Send in two groups).
// Returns "" on success.
std::string runP2pPattern(ncclComm_t comm, int rank, int nranks, const std::string& pattern,
                          size_t count, ncclDataType_t type, int root, uint64_t seed, Memory* mem = nullptr);

// AlltoAll, Gather, Scatter and AlltoAllv cases for n ranks: every root, in place and out
// of place, counts 0, 1, 7 and `large`, every datatype for each collective at least once.
std::vector<CollCase> alltoallFamilyCases(int n, size_t large);

// One group per rank mixing older and newer calls (AllReduce, Broadcast, Send/Recv ring,
// AlltoAll, Gather in place, Scatter, AlltoAllv), each checked. "" on success.
std::string runMixedGroup(ncclComm_t comm, int rank, int n, Memory* mem = nullptr);

// Runs AllReduce, Broadcast, Reduce, AllGather and ReduceScatter (6 elements per rank) with
// Sum, Prod, Max and Min on each of types on both communicators (host memory, the same
// ranks) with small integers (halves for floats) as inputs, so any order of the reduction
// gives the same bits: two paths must agree bit for bit. Returns "" or the first
// differences and errors; *ran counts the operations run on each communicator.
std::string compareCommsBitwise(ncclComm_t a, ncclComm_t b, int rank, int nranks,
                                const std::vector<ncclDataType_t>& types, int* ran);

extern const ncclDataType_t kAllTypes[12];
extern const ncclRedOp_t kBuiltinOps[5];

}  // namespace mccl_test
