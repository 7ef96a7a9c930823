// mcclCommInitFromMpi: a communicator whose bootstrap is a duplicate of an MPI_Comm.
#include <cstdint>
#include <vector>

#include "bootstrap_mpi/bootstrap_mpi.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/init.h"
#include "core/peer_info.h"
#include "mccl_mpi.h"


using namespace mccl;

namespace {

// Index of this rank among the ranks of mpiComm on the same host (MCCL_HOST_ID counts).
ncclResult_t nodeLocalRank(MPI_Comm mpiComm, int* localRank) {
  int rank, size;
  MPI_Comm_rank(mpiComm, &rank);
  MPI_Comm_size(mpiComm, &size);
  std::vector<uint64_t> hashes(static_cast<size_t>(size));
  hashes[rank] = localHostHash();
  // PMPI: the library's own traffic never goes through interception (libmccl_mpi, tools).
  int rc = PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, hashes.data(), 8, MPI_BYTE, mpiComm);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, nullptr, "mcclCommInitFromMpi: MPI_Allgather failed (%d)", rc);
  int local = 0;
  for (int r = 0; r < rank; ++r) local += hashes[r] == hashes[rank] ? 1 : 0;
  *localRank = local;
  return ncclSuccess;
}

}  // namespace

NCCL_API ncclResult_t mcclCommInitFromMpi(ncclComm_t* comm, MPI_Comm mpiComm, int cudaDev,
                                          ncclConfig_t* config) {
  MCCL_API_BEGIN
  const char* call = "mcclCommInitFromMpi";
  printVersionOnce();
  if (comm == nullptr) return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: comm is NULL", call);
  if (cudaDev < MCCL_DEVICE_HOST)
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: cudaDev = %d must be a device number, MCCL_DEVICE_AUTO or MCCL_DEVICE_HOST",
                    call, cudaDev);
  InitParams p;
  ScopedPhaseLog profile(&p.prof);
  CommConfig cfg;
  MCCL_CHECK(parseConfig(config, call, &cfg));
  // An explicit device is checked before anything collective happens: every rank of a
  // GPU-less machine fails the same way, none is left waiting in MPI.
  int dev = MCCL_DEVICE_HOST;
  if (cudaDev != MCCL_DEVICE_AUTO) MCCL_CHECK(resolveInitDevice(cudaDev, -1, call, &dev));
  phaseMark("args");
  std::unique_ptr<Bootstrap> boot;
  MCCL_CHECK(MpiBootstrap::create(mpiComm, call, &boot));
  phaseMark("mpi-idup-start");
  int localRank = -1;
  if (cudaDev == MCCL_DEVICE_AUTO) {
    MCCL_CHECK(nodeLocalRank(mpiComm, &localRank));
    MCCL_CHECK(resolveInitDevice(cudaDev, localRank, call, &dev));
  }
  phaseMark("mpi-local-rank");
  p.source = InitParams::Source::Ready;
  p.rank = boot->rank();
  p.nranks = boot->size();
  p.call = call;
  p.cudaDev = dev;
  p.bootstrap = std::move(boot);
  // All ranks need the same hash without another exchange: derive it from the world
  // ranks of the group (the MPI comm is the same set of processes on every rank).
  MPI_Group group, world;
  MPI_Comm_group(mpiComm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int n = p.nranks;
  std::vector<int> ranks(static_cast<size_t>(n)), worldRanks(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ranks[i] = i;
  MPI_Group_translate_ranks(group, n, ranks.data(), world, worldRanks.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  uint64_t h = 0xcbf29ce484222325ull;
  for (int r : worldRanks) h = (h ^ static_cast<uint64_t>(r + 1)) * 0x100000001b3ull;
  static std::atomic<uint64_t> counter{0};  // equal on all ranks if comms are made in order
  p.commHash = h ^ (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
  phaseMark("mpi-group-hash");
  ncclComm* c = createComm(cfg);
  *comm = c;
  return launchInit(c, std::move(p), /*deferToGroup=*/false);
  MCCL_API_END
}
