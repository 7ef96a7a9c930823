// The bootstrap that rides on MPI: a duplicate of the user's communicator (so mccl's
// messages never match the user's), collectives for allgather and barrier, MPI_Comm_split
// for ncclCommSplit. Waits are MPI_Test loops: bounded by MCCL_BOOTSTRAP_TIMEOUT, ended by
// abort, and they keep MPI progressing. Only the thread that MPI allows may call it.
#pragma once

#include <mpi.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap_mpi/bootstrap.h"

namespace mccl {

// MPI's own sentence for an error code (MPI_Error_string), for the errors that name an
// MPI call.
std::string mpiErrorString(int code);

class MpiBootstrap : public Bootstrap {
 public:
  // Starts MPI_Comm_idup of user (nonblocking: testReady completes it). user must be an
  // intracommunicator; errors name the call.
  static ncclResult_t create(MPI_Comm user, const char* call, std::unique_ptr<Bootstrap>* out);

  ~MpiBootstrap() override;
  const char* kind() const override { return "mpi"; }
  bool usesMpi() const override { return true; }
  ncclResult_t testReady(bool* ready) override;
  ncclResult_t allGather(void* data, size_t bytes) override;
  ncclResult_t startAllGather(void* data, size_t bytes) override;
  ncclResult_t testAllGather(bool* done) override;
  ncclResult_t send(int peer, uint64_t tag, const void* data, size_t bytes) override;
  ncclResult_t recv(int peer, uint64_t tag, void* data, size_t bytes) override;
  ncclResult_t tryRecv(int peer, uint64_t tag, void* data, size_t bytes, bool* received) override;
  ncclResult_t barrier() override;
  ncclResult_t split(int color, int key, std::unique_ptr<Bootstrap>* child) override;
  ncclResult_t shrink(const std::vector<int>& members, uint64_t index,
                      std::unique_ptr<Bootstrap>* child) override;

  MPI_Comm comm() const { return comm_; }
  // Completes MPI_Comm_idup (waiting, bounded like every wait).
  ncclResult_t waitReady();
  // Waits for req: bounded by MCCL_BOOTSTRAP_TIMEOUT, ended by abort; errors name what.
  ncclResult_t waitRequest(MPI_Request* req, const char* what);

  // True when MPI may be called from a thread other than the one that initialised it.
  static bool threadMultiple();
  // Lets MPI progress (one MPI_Iprobe on comm).
  static void progress(MPI_Comm comm);
  // True when the calling thread may call MPI: MPI_THREAD_MULTIPLE, or the main thread.
  static bool callerMayUseMpi();

 private:
  MpiBootstrap(MPI_Comm comm, int rank, int size);
  void reapSends();
  ncclResult_t drain(int peer);  // probed messages from peer into the mailbox
  ncclResult_t take(int peer, uint64_t tag, void* data, size_t bytes, bool* got);

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Request dupReq_ = MPI_REQUEST_NULL;
  MPI_Request gatherReq_ = MPI_REQUEST_NULL;
  struct PendingSend {
    MPI_Request req;
    std::vector<char> buf;
  };
  std::deque<PendingSend> sends_;
  std::map<std::pair<int, uint64_t>, std::deque<std::vector<char>>> mailbox_;
};

}  // namespace mccl
