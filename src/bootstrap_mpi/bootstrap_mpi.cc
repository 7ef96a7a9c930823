#include "bootstrap_mpi/bootstrap_mpi.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "core/error.h"

namespace mccl {
namespace {

constexpr int kMpiTag = 0x6d63;  // every bootstrap message uses this MPI tag

bool mpiUsable() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

}  // namespace

std::string mpiErrorString(int code) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(s, static_cast<size_t>(len));
}

bool MpiBootstrap::threadMultiple() {
  if (!mpiUsable()) return false;
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return level == MPI_THREAD_MULTIPLE;
}

bool MpiBootstrap::callerMayUseMpi() {
  if (!mpiUsable()) return false;
  int level = MPI_THREAD_SINGLE, isMain = 0;
  MPI_Query_thread(&level);
  if (level == MPI_THREAD_MULTIPLE) return true;
  MPI_Is_thread_main(&isMain);
  return isMain != 0;
}

void MpiBootstrap::progress(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL || !mpiUsable()) return;
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
}

ncclResult_t MpiBootstrap::create(MPI_Comm user, const char* call, std::unique_ptr<Bootstrap>* out) {
  if (!mpiUsable())
    return MCCL_ERR(ncclInvalidUsage, nullptr, "%s: MPI is not initialised (or already finalized)",
                    call);
  if (user == MPI_COMM_NULL)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: mpiComm is MPI_COMM_NULL", call);
  int inter = 0;
  int rc = MPI_Comm_test_inter(user, &inter);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclInvalidArgument, nullptr, "%s: mpiComm is not a valid communicator (%s)",
                    call, mpiErrorString(rc).c_str());
  if (inter)
    return MCCL_ERR(ncclInvalidArgument, nullptr,
                    "%s: mpiComm is an intercommunicator; use an intracommunicator", call);
  int rank, size;
  MPI_Comm_rank(user, &rank);
  MPI_Comm_size(user, &size);
  std::unique_ptr<MpiBootstrap> b(new MpiBootstrap(MPI_COMM_NULL, rank, size));
  rc = MPI_Comm_idup(user, &b->comm_, &b->dupReq_);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, nullptr, "%s: MPI_Comm_idup failed: %s", call,
                    mpiErrorString(rc).c_str());
  *out = std::move(b);
  return ncclSuccess;
}

MpiBootstrap::MpiBootstrap(MPI_Comm comm, int rank, int size) : Bootstrap(rank, size), comm_(comm) {}

MpiBootstrap::~MpiBootstrap() {
  if (!mpiUsable()) return;
  // Requests that can never complete (an aborted exchange) are left to MPI; completed
  // ones are released.
  reapSends();
  bool pending = dupReq_ != MPI_REQUEST_NULL || gatherReq_ != MPI_REQUEST_NULL || !sends_.empty();
  if (!pending && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

ncclResult_t MpiBootstrap::testReady(bool* ready) {
  *ready = true;
  if (dupReq_ == MPI_REQUEST_NULL) return ncclSuccess;
  int flag = 0;
  int rc = MPI_Test(&dupReq_, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, owner_, "MPI_Comm_idup failed: %s", mpiErrorString(rc).c_str());
  *ready = flag != 0;
  if (flag) MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  return ncclSuccess;
}

ncclResult_t MpiBootstrap::waitReady() {
  bool ready;
  MCCL_CHECK(testReady(&ready));
  if (!ready) MCCL_CHECK(waitRequest(&dupReq_, "MPI_Comm_idup"));
  return ncclSuccess;
}

ncclResult_t MpiBootstrap::waitRequest(MPI_Request* req, const char* what) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(bootstrapTimeoutSeconds());
  int spins = 0;
  for (;;) {
    int flag = 0;
    int rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return MCCL_ERR(ncclSystemError, owner_, "bootstrap %s: MPI failed: %s", what,
                      mpiErrorString(rc).c_str());
    if (flag) return ncclSuccess;
    if (aborted()) return MCCL_ERR(ncclRemoteError, owner_, "bootstrap %s: aborted", what);
    if (std::chrono::steady_clock::now() > deadline)
      return MCCL_ERR(ncclRemoteError, owner_,
                      "bootstrap %s: rank %d waited %.0f s for the other ranks of the MPI "
                      "communicator (MCCL_BOOTSTRAP_TIMEOUT)",
                      what, rank_, bootstrapTimeoutSeconds());
    if (++spins > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

ncclResult_t MpiBootstrap::startAllGather(void* data, size_t bytes) {
  bool ready;
  MCCL_CHECK(testReady(&ready));
  if (!ready) MCCL_CHECK(waitRequest(&dupReq_, "MPI_Comm_idup"));
  if (bytes > static_cast<size_t>(INT32_MAX))
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap allgather of %zu bytes", bytes);
  int rc = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, static_cast<int>(bytes), MPI_BYTE,
                          comm_, &gatherReq_);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, owner_, "MPI_Iallgather failed: %s", mpiErrorString(rc).c_str());
  return ncclSuccess;
}

ncclResult_t MpiBootstrap::testAllGather(bool* done) {
  int flag = 0;
  int rc = MPI_Test(&gatherReq_, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, owner_, "MPI_Iallgather failed: %s", mpiErrorString(rc).c_str());
  *done = flag != 0;
  return ncclSuccess;
}

ncclResult_t MpiBootstrap::allGather(void* data, size_t bytes) {
  MCCL_CHECK(startAllGather(data, bytes));
  return waitRequest(&gatherReq_, "allgather");
}

ncclResult_t MpiBootstrap::barrier() {
  bool ready;
  MCCL_CHECK(testReady(&ready));
  if (!ready) MCCL_CHECK(waitRequest(&dupReq_, "MPI_Comm_idup"));
  MPI_Request req;
  int rc = MPI_Ibarrier(comm_, &req);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, owner_, "MPI_Ibarrier failed: %s", mpiErrorString(rc).c_str());
  return waitRequest(&req, "barrier");
}

void MpiBootstrap::reapSends() {
  while (!sends_.empty()) {
    int flag = 0;
    MPI_Test(&sends_.front().req, &flag, MPI_STATUS_IGNORE);
    if (!flag) break;
    sends_.pop_front();
  }
}

ncclResult_t MpiBootstrap::send(int peer, uint64_t tag, const void* data, size_t bytes) {
  bool ready;
  MCCL_CHECK(testReady(&ready));
  if (!ready) MCCL_CHECK(waitRequest(&dupReq_, "MPI_Comm_idup"));
  reapSends();
  // Message: 8-byte tag, then the payload.
  if (bytes > static_cast<size_t>(INT32_MAX) - sizeof tag)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap send of %zu bytes", bytes);
  PendingSend s;
  s.buf.resize(sizeof tag + bytes);
  std::memcpy(s.buf.data(), &tag, sizeof tag);
  if (bytes) std::memcpy(s.buf.data() + sizeof tag, data, bytes);
  sends_.push_back(std::move(s));
  PendingSend& p = sends_.back();
  int rc = MPI_Isend(p.buf.data(), static_cast<int>(p.buf.size()), MPI_BYTE, peer, kMpiTag, comm_, &p.req);
  if (rc != MPI_SUCCESS) {
    sends_.pop_back();
    return MCCL_ERR(ncclSystemError, owner_, "MPI_Isend to rank %d failed: %s", peer,
                    mpiErrorString(rc).c_str());
  }
  return ncclSuccess;
}

ncclResult_t MpiBootstrap::drain(int peer) {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    int rc = MPI_Iprobe(peer, kMpiTag, comm_, &flag, &st);
    if (rc != MPI_SUCCESS)
      return MCCL_ERR(ncclSystemError, owner_, "MPI_Iprobe failed: %s", mpiErrorString(rc).c_str());
    if (!flag) return ncclSuccess;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (count < static_cast<int>(sizeof(uint64_t)))
      return MCCL_ERR(ncclInternalError, owner_, "bootstrap: short message from rank %d", peer);
    std::vector<char> buf(static_cast<size_t>(count));
    rc = MPI_Recv(buf.data(), count, MPI_BYTE, peer, kMpiTag, comm_, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return MCCL_ERR(ncclSystemError, owner_, "MPI_Recv failed: %s", mpiErrorString(rc).c_str());
    uint64_t t;
    std::memcpy(&t, buf.data(), sizeof t);
    buf.erase(buf.begin(), buf.begin() + sizeof t);
    mailbox_[{peer, t}].push_back(std::move(buf));
  }
}

ncclResult_t MpiBootstrap::take(int peer, uint64_t tag, void* data, size_t bytes, bool* got) {
  *got = false;
  auto it = mailbox_.find({peer, tag});
  if (it == mailbox_.end() || it->second.empty()) return ncclSuccess;
  std::vector<char> msg = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) mailbox_.erase(it);
  if (msg.size() != bytes)
    return MCCL_ERR(ncclInternalError, owner_, "bootstrap recv from rank %d: expected %zu bytes, got %zu",
                    peer, bytes, msg.size());
  if (bytes) std::memcpy(data, msg.data(), bytes);
  *got = true;
  return ncclSuccess;
}

ncclResult_t MpiBootstrap::tryRecv(int peer, uint64_t tag, void* data, size_t bytes, bool* received) {
  bool ready;
  MCCL_CHECK(testReady(&ready));
  *received = false;
  if (!ready) return ncclSuccess;
  MCCL_CHECK(take(peer, tag, data, bytes, received));
  if (*received) return ncclSuccess;
  MCCL_CHECK(drain(peer));
  reapSends();
  return take(peer, tag, data, bytes, received);
}

ncclResult_t MpiBootstrap::recv(int peer, uint64_t tag, void* data, size_t bytes) {
  bool ready;
  MCCL_CHECK(testReady(&ready));
  if (!ready) MCCL_CHECK(waitRequest(&dupReq_, "MPI_Comm_idup"));
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(bootstrapTimeoutSeconds());
  int spins = 0;
  for (;;) {
    bool got = false;
    MCCL_CHECK(tryRecv(peer, tag, data, bytes, &got));
    if (got) return ncclSuccess;
    if (aborted()) return MCCL_ERR(ncclRemoteError, owner_, "bootstrap recv: aborted");
    if (std::chrono::steady_clock::now() > deadline)
      return MCCL_ERR(ncclRemoteError, owner_,
                      "bootstrap: rank %d waited %.0f s for a message from rank %d "
                      "(MCCL_BOOTSTRAP_TIMEOUT)",
                      rank_, bootstrapTimeoutSeconds(), peer);
    if (++spins > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

ncclResult_t MpiBootstrap::split(int color, int key, std::unique_ptr<Bootstrap>* child) {
  bool ready;
  MCCL_CHECK(testReady(&ready));
  if (!ready) MCCL_CHECK(waitRequest(&dupReq_, "MPI_Comm_idup"));
  MPI_Comm newComm = MPI_COMM_NULL;
  int rc = MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &newComm);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, owner_, "MPI_Comm_split failed: %s", mpiErrorString(rc).c_str());
  child->reset();
  if (newComm == MPI_COMM_NULL) return ncclSuccess;
  MPI_Comm_set_errhandler(newComm, MPI_ERRORS_RETURN);
  int r, s;
  MPI_Comm_rank(newComm, &r);
  MPI_Comm_size(newComm, &s);
  child->reset(new MpiBootstrap(newComm, r, s));
  return ncclSuccess;
}

// ncclCommShrink on an MPI-backed communicator: MPI_Comm_create_group over the members.
// Unlike MPI_Comm_split it is collective over the new group only, so excluded ranks never
// take part, and neither do dead ones: Open MPI 4.1 (no ULFM) builds the group's context id
// with point-to-point messages among the members. Checked with one rank SIGKILLed under
// mpirun --enable-recovery (without it mpirun ends the whole job when a rank dies): the
// survivors got a working communicator. The call blocks until every member has joined and
// is not bounded by MCCL_BOOTSTRAP_TIMEOUT (MPI has no nonblocking form of it).
ncclResult_t MpiBootstrap::shrink(const std::vector<int>& members, uint64_t index,
                                  std::unique_ptr<Bootstrap>* child) {
  bool ready;
  MCCL_CHECK(testReady(&ready));
  if (!ready) MCCL_CHECK(waitRequest(&dupReq_, "MPI_Comm_idup"));
  MPI_Group all = MPI_GROUP_NULL, sub = MPI_GROUP_NULL;
  MPI_Comm newComm = MPI_COMM_NULL;
  int rc = MPI_Comm_group(comm_, &all);
  if (rc == MPI_SUCCESS) rc = MPI_Group_incl(all, static_cast<int>(members.size()), members.data(), &sub);
  // Tags below 32768 (the least MPI_TAG_UB allowed); equal on every member.
  if (rc == MPI_SUCCESS) rc = MPI_Comm_create_group(comm_, sub, 0x4000 + static_cast<int>(index % 0x4000), &newComm);
  if (sub != MPI_GROUP_NULL) MPI_Group_free(&sub);
  if (all != MPI_GROUP_NULL) MPI_Group_free(&all);
  if (rc != MPI_SUCCESS)
    return MCCL_ERR(ncclSystemError, owner_, "MPI_Comm_create_group failed: %s", mpiErrorString(rc).c_str());
  child->reset();
  if (newComm == MPI_COMM_NULL)
    return MCCL_ERR(ncclInternalError, owner_, "MPI_Comm_create_group: rank %d is not a member", rank_);
  MPI_Comm_set_errhandler(newComm, MPI_ERRORS_RETURN);
  int r, s;
  MPI_Comm_rank(newComm, &r);
  MPI_Comm_size(newComm, &s);
  child->reset(new MpiBootstrap(newComm, r, s));
  return ncclSuccess;
}

}  // namespace mccl
