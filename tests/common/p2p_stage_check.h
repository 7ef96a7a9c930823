// Point-to-point calls through libmccl_mpi's host copies (mpi_stage_p2p.cc), on buffers of
// any kind of memory: device buffers on a GPU machine whose MPI cannot take them, host
// buffers where a test has the host staged too (a machine without a GPU). Every rank runs
// it; neighbours on a ring (any rank count from 2), every send and receive form, every
// call that completes requests, persistent requests, cancelled and freed ones; each
// received buffer checked element by element, including what a message must leave alone.
// One rank talks to itself.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

extern "C" void mcclMpiStageCounters(unsigned long long* staged, unsigned long long* live);

namespace p2pstage {

struct Memory {
  void* (*alloc)(size_t bytes);
  void (*release)(void* p);
  void (*put)(void* dst, const void* src, size_t bytes);  // host -> buffer
  void (*get)(void* dst, const void* src, size_t bytes);  // buffer -> host
};

class Buf {
 public:
  Buf(const Memory& m, size_t n) : m_(m), n_(n), p_(static_cast<int*>(m.alloc(n * sizeof(int)))) {}
  ~Buf() { m_.release(p_); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  int* p() const { return p_; }
  void set(const std::vector<int>& v) { m_.put(p_, v.data(), n_ * sizeof(int)); }
  void fill(int x) { set(std::vector<int>(n_, x)); }
  std::vector<int> read() const {
    std::vector<int> v(n_);
    m_.get(v.data(), p_, n_ * sizeof(int));
    return v;
  }

 private:
  const Memory& m_;
  size_t n_;
  int* p_;
};

inline std::vector<int> pattern(int who, int round, size_t n) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = who * 1000000 + round * 10000 + static_cast<int>(i % 9973);
  return v;
}

inline unsigned long long stagedCalls() {
  unsigned long long s = 0, live = 0;
  mcclMpiStageCounters(&s, &live);
  return s;
}
inline unsigned long long liveRequests() {
  unsigned long long s = 0, live = 0;
  mcclMpiStageCounters(&s, &live);
  return live;
}

// Completes requests[1..] (requests[0] is MPI_REQUEST_NULL, which every form must skip)
// with the call form names.
inline void complete(const char* form, std::vector<MPI_Request>& reqs) {
  const int n = static_cast<int>(reqs.size());
  const std::string f = form;
  int done = 0, flag = 0, index = -1, outcount = 0;
  std::vector<int> indices(reqs.size());
  std::vector<MPI_Status> sts(reqs.size());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto pending = [&] {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << form << " never completed";
  };
  if (f == "Waitall") {
    ASSERT_EQ(MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
  } else if (f == "Waitall+statuses") {
    ASSERT_EQ(MPI_Waitall(n, reqs.data(), sts.data()), MPI_SUCCESS);
  } else if (f == "Waitany") {
    for (done = 0; done < n - 1; ++done) {
      ASSERT_EQ(MPI_Waitany(n, reqs.data(), &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
      ASSERT_GE(index, 1);
    }
    ASSERT_EQ(MPI_Waitany(n, reqs.data(), &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(index, MPI_UNDEFINED);
  } else if (f == "Waitsome") {
    while (done < n - 1) {
      ASSERT_EQ(MPI_Waitsome(n, reqs.data(), &outcount, indices.data(), sts.data()), MPI_SUCCESS);
      ASSERT_NE(outcount, MPI_UNDEFINED);
      done += outcount;
    }
  } else if (f == "Testall") {
    for (flag = 0; !flag;) {
      ASSERT_EQ(MPI_Testall(n, reqs.data(), &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
      pending();
    }
  } else if (f == "Testany") {
    while (done < n - 1) {
      ASSERT_EQ(MPI_Testany(n, reqs.data(), &index, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
      if (flag && index != MPI_UNDEFINED) ++done;
      pending();
    }
  } else if (f == "Testsome") {
    while (done < n - 1) {
      ASSERT_EQ(MPI_Testsome(n, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
      done += outcount == MPI_UNDEFINED ? 0 : outcount;
      pending();
    }
  } else if (f == "Test") {
    for (int i = 1; i < n; ++i)
      for (flag = 0; !flag;) {
        ASSERT_EQ(MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        pending();
      }
  } else {  // Request_get_status until each is complete (the data must be there then), then Wait
    for (int i = 1; i < n; ++i) {
      for (flag = 0; !flag;) {
        ASSERT_EQ(MPI_Request_get_status(reqs[i], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        pending();
      }
    }
    return;  // the caller reads the buffers, then waits
  }
  for (int i = 0; i < n; ++i) EXPECT_EQ(reqs[i], MPI_REQUEST_NULL) << form;
}

inline void checkPointToPoint(const Memory& m) {
  int r = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  const unsigned long long staged0 = stagedCalls();
  const size_t N = 4096;

  // Blocking Send and Recv, a small and a large message (eager and rendezvous in MPI).
  for (size_t count : {N, size_t{1} << 20}) {
    Buf s(m, count), d(m, count);
    s.set(pattern(r, 0, count));
    d.fill(-1);
    MPI_Status st;
    if (n == 1) {  // to itself: a blocking send would wait for the receive after it
      ASSERT_EQ(MPI_Sendrecv(s.p(), static_cast<int>(count), MPI_INT, next, 1, d.p(), static_cast<int>(count), MPI_INT,
                             prev, 1, comm, &st),
                MPI_SUCCESS);
    } else if (r % 2 == 0) {
      ASSERT_EQ(MPI_Send(s.p(), static_cast<int>(count), MPI_INT, next, 1, comm), MPI_SUCCESS);
      ASSERT_EQ(MPI_Recv(d.p(), static_cast<int>(count), MPI_INT, prev, 1, comm, &st), MPI_SUCCESS);
    } else {
      ASSERT_EQ(MPI_Recv(d.p(), static_cast<int>(count), MPI_INT, prev, 1, comm, &st), MPI_SUCCESS);
      ASSERT_EQ(MPI_Send(s.p(), static_cast<int>(count), MPI_INT, next, 1, comm), MPI_SUCCESS);
    }
    EXPECT_EQ(st.MPI_SOURCE, prev);
    int got = 0;
    MPI_Get_count(&st, MPI_INT, &got);
    EXPECT_EQ(got, static_cast<int>(count));
    ASSERT_EQ(d.read(), pattern(prev, 0, count)) << count << " ints";
  }

  // A short message into a strided receive: the gaps and the part past the message keep
  // their values (512 ints sent, room for 600 at every other element).
  {
    Buf s(m, 512), d(m, 1200);
    s.set(pattern(r, 1, 512));
    d.fill(-1);
    MPI_Datatype every2;
    MPI_Type_vector(600, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    MPI_Status st;
    ASSERT_EQ(MPI_Sendrecv(s.p(), 512, MPI_INT, next, 2, d.p(), 1, every2, prev, 2, comm, &st), MPI_SUCCESS);
    MPI_Type_free(&every2);
    int elements = 0;
    MPI_Get_elements(&st, MPI_INT, &elements);
    EXPECT_EQ(elements, 512);
    const std::vector<int> want = pattern(prev, 1, 512);
    const std::vector<int> got = d.read();
    for (size_t i = 0; i < 1200; ++i) {
      const int expect = (i % 2 == 0 && i / 2 < 512) ? want[i / 2] : -1;
      ASSERT_EQ(got[i], expect) << "element " << i;
    }
  }

  // Short messages into receives of a predefined type (staged without a copy in, only the
  // bytes that came copied back): in every receive form the part past the message keeps
  // its values, a persistent receive's second, shorter message included; a padded pair
  // type (MPI_DOUBLE_INT: 12 bytes in 16) keeps its padding.
  unsigned long long shortCalls = 0;
  {
    const int room = 1000;
    Buf s(m, 600), d(m, room);
    auto check = [&](int len, int round, const char* what) {
      const std::vector<int> want = pattern(prev, round, 600), got = d.read();
      for (int i = 0; i < room; ++i)
        ASSERT_EQ(got[static_cast<size_t>(i)], i < len ? want[static_cast<size_t>(i)] : -6) << what << ", element " << i;
    };
    MPI_Request sq, rq;
    MPI_Status st;
    // Recv, status ignored.
    s.set(pattern(r, 80, 600));
    d.fill(-6);
    ASSERT_EQ(MPI_Isend(s.p(), 300, MPI_INT, next, 80, comm, &sq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Recv(d.p(), room, MPI_INT, prev, 80, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&sq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    check(300, 80, "Recv");
    // Irecv completed by Waitall, statuses ignored.
    d.fill(-6);
    MPI_Request two[2];
    ASSERT_EQ(MPI_Irecv(d.p(), room, MPI_INT, prev, 81, comm, &two[0]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(s.p(), 301, MPI_INT, next, 81, comm, &two[1]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Waitall(2, two, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    check(301, 80, "Irecv");
    // A persistent receive: 500 ints, then 200 (what the first left in the host copy past
    // 200 must not come back).
    ASSERT_EQ(MPI_Recv_init(d.p(), room, MPI_INT, prev, 82, comm, &rq), MPI_SUCCESS);
    for (int len : {500, 200}) {
      d.fill(-6);
      ASSERT_EQ(MPI_Start(&rq), MPI_SUCCESS);
      ASSERT_EQ(MPI_Isend(s.p(), len, MPI_INT, next, 82, comm, &sq), MPI_SUCCESS);
      MPI_Request both[2] = {rq, sq};
      ASSERT_EQ(MPI_Waitall(2, both, MPI_STATUSES_IGNORE), MPI_SUCCESS);
      check(len, 80, len == 500 ? "Recv_init, first start" : "Recv_init, second start");
    }
    ASSERT_EQ(MPI_Request_free(&rq), MPI_SUCCESS);
    // Sendrecv, status ignored.
    d.fill(-6);
    ASSERT_EQ(MPI_Sendrecv(s.p(), 302, MPI_INT, next, 83, d.p(), room, MPI_INT, prev, 83, comm, MPI_STATUS_IGNORE),
              MPI_SUCCESS);
    check(302, 80, "Sendrecv");
    // A matched probe's Imrecv.
    d.fill(-6);
    MPI_Message msg;
    ASSERT_EQ(MPI_Isend(s.p(), 303, MPI_INT, next, 84, comm, &sq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Mprobe(prev, 84, comm, &msg, &st), MPI_SUCCESS);
    ASSERT_EQ(MPI_Imrecv(d.p(), room, MPI_INT, &msg, &rq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&sq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    check(303, 80, "Imrecv");
    // Request_get_status says complete: the bytes are there before any Wait.
    d.fill(-6);
    ASSERT_EQ(MPI_Irecv(d.p(), room, MPI_INT, prev, 85, comm, &two[0]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(s.p(), 304, MPI_INT, next, 85, comm, &two[1]), MPI_SUCCESS);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int flag = 0; !flag;) {
      ASSERT_EQ(MPI_Request_get_status(two[0], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
      ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    }
    check(304, 80, "Request_get_status");
    ASSERT_EQ(MPI_Waitall(2, two, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    // MPI_DOUBLE_INT, 5 pairs into room for 10: each pair's 4 padding bytes and the 5 pairs
    // past the message keep their values.
    d.fill(-6);
    ASSERT_EQ(MPI_Isend(s.p(), 5, MPI_DOUBLE_INT, next, 86, comm, &sq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Recv(d.p(), 10, MPI_DOUBLE_INT, prev, 86, comm, &st), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&sq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    int pairsIn = 0;
    MPI_Get_count(&st, MPI_DOUBLE_INT, &pairsIn);
    EXPECT_EQ(pairsIn, 5);
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent);
    const size_t per = static_cast<size_t>(extent) / sizeof(int);  // 4 ints a pair
    const std::vector<int> want = pattern(prev, 80, 600), got = d.read();
    for (size_t i = 0; i < static_cast<size_t>(room); ++i) {
      const bool data = i < 5 * per && i % per < 3;  // a double and an int of each pair
      ASSERT_EQ(got[i], data ? want[i] : -6) << "MPI_DOUBLE_INT, element " << i;
    }
    shortCalls = 2 + 2 + 3 + 1 + 2 + 2 + 2;
  }

  // A receive posted first: the buffer is left alone until the request completes, then
  // holds the message.
  {
    Buf s(m, N), d(m, N);
    s.set(pattern(r, 2, N));
    d.fill(-1);
    MPI_Request rq;
    ASSERT_EQ(MPI_Irecv(d.p(), static_cast<int>(N), MPI_INT, prev, 3, comm, &rq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Send(s.p(), static_cast<int>(N), MPI_INT, next, 3, comm), MPI_SUCCESS);
    MPI_Barrier(comm);
    EXPECT_EQ(d.read(), std::vector<int>(N, -1)) << "the host copy, not the buffer, receives";
    MPI_Status st;
    ASSERT_EQ(MPI_Wait(&rq, &st), MPI_SUCCESS);
    EXPECT_EQ(rq, MPI_REQUEST_NULL);
    EXPECT_EQ(st.MPI_SOURCE, prev);
    EXPECT_EQ(st.MPI_TAG, 3);
    ASSERT_EQ(d.read(), pattern(prev, 2, N));
  }

  // Both neighbours at once, completed by every form (a null request first in each array).
  const char* forms[] = {"Waitall", "Waitall+statuses", "Waitany", "Waitsome", "Testall",
                         "Testany", "Testsome", "Test",  "Request_get_status"};
  int round = 10;
  for (const char* form : forms) {
    SCOPED_TRACE(form);
    ++round;
    Buf toNext(m, N), toPrev(m, N), fromPrev(m, N), fromNext(m, N);
    toNext.set(pattern(r, round, N));
    toPrev.set(pattern(r + 50, round, N));
    fromPrev.fill(-1);
    fromNext.fill(-1);
    std::vector<MPI_Request> reqs(5, MPI_REQUEST_NULL);
    ASSERT_EQ(MPI_Irecv(fromPrev.p(), static_cast<int>(N), MPI_INT, prev, 2 * round, comm, &reqs[1]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Irecv(fromNext.p(), static_cast<int>(N), MPI_INT, next, 2 * round + 1, comm, &reqs[2]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(toNext.p(), static_cast<int>(N), MPI_INT, next, 2 * round, comm, &reqs[3]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(toPrev.p(), static_cast<int>(N), MPI_INT, prev, 2 * round + 1, comm, &reqs[4]), MPI_SUCCESS);
    complete(form, reqs);
    ASSERT_FALSE(testing::Test::HasFatalFailure());
    EXPECT_EQ(fromPrev.read(), pattern(prev, round, N));
    EXPECT_EQ(fromNext.read(), pattern(next + 50, round, N));
    if (std::string(form) == "Request_get_status")
      ASSERT_EQ(MPI_Waitall(5, reqs.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
  }

  // Persistent requests, started three times with new data each time.
  {
    Buf s(m, N), d(m, N);
    MPI_Request reqs[2];
    ASSERT_EQ(MPI_Send_init(s.p(), static_cast<int>(N), MPI_INT, next, 40, comm, &reqs[0]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Recv_init(d.p(), static_cast<int>(N), MPI_INT, prev, 40, comm, &reqs[1]), MPI_SUCCESS);
    for (int k = 0; k < 3; ++k) {
      s.set(pattern(r, 40 + k, N));
      d.fill(-1);
      if (k == 1) {
        ASSERT_EQ(MPI_Start(&reqs[1]), MPI_SUCCESS);
        ASSERT_EQ(MPI_Start(&reqs[0]), MPI_SUCCESS);
      } else {
        ASSERT_EQ(MPI_Startall(2, reqs), MPI_SUCCESS);
      }
      ASSERT_EQ(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
      ASSERT_NE(reqs[0], MPI_REQUEST_NULL);  // persistent: inactive, not freed
      ASSERT_EQ(d.read(), pattern(prev, 40 + k, N)) << "start " << k;
    }
    d.fill(-2);  // an inactive request waited on again copies nothing back
    ASSERT_EQ(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(d.read(), std::vector<int>(N, -2));
    ASSERT_EQ(MPI_Request_free(&reqs[0]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Request_free(&reqs[1]), MPI_SUCCESS);
    MPI_Barrier(comm);
  }

  // The send modes, a matched probe and Sendrecv_replace.
  {
    Buf s(m, N), d(m, N);
    s.set(pattern(r, 50, N));
    MPI_Request rq;
    // Synchronous, blocking and not.
    d.fill(-1);
    ASSERT_EQ(MPI_Irecv(d.p(), static_cast<int>(N), MPI_INT, prev, 50, comm, &rq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Ssend(s.p(), static_cast<int>(N), MPI_INT, next, 50, comm), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(d.read(), pattern(prev, 50, N));
    MPI_Request sq;
    d.fill(-1);
    ASSERT_EQ(MPI_Issend(s.p(), static_cast<int>(N), MPI_INT, next, 51, comm, &sq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Recv(d.p(), static_cast<int>(N), MPI_INT, prev, 51, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&sq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(d.read(), pattern(prev, 50, N));
    // Buffered: MPI copies the host copy into the attached buffer.
    std::vector<char> attached(N * sizeof(int) * 2 + 2 * MPI_BSEND_OVERHEAD);
    ASSERT_EQ(MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size())), MPI_SUCCESS);
    d.fill(-1);
    ASSERT_EQ(MPI_Bsend(s.p(), static_cast<int>(N), MPI_INT, next, 52, comm), MPI_SUCCESS);
    ASSERT_EQ(MPI_Ibsend(s.p(), static_cast<int>(N), MPI_INT, next, 53, comm, &sq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Recv(d.p(), static_cast<int>(N), MPI_INT, prev, 52, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(d.read(), pattern(prev, 50, N));
    d.fill(-1);
    ASSERT_EQ(MPI_Recv(d.p(), static_cast<int>(N), MPI_INT, prev, 53, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&sq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(d.read(), pattern(prev, 50, N));
    void* detachedBuf = nullptr;
    int detachedSize = 0;
    ASSERT_EQ(MPI_Buffer_detach(&detachedBuf, &detachedSize), MPI_SUCCESS);
    // Ready: the receive is posted before the peer's Rsend (the barrier says so).
    d.fill(-1);
    ASSERT_EQ(MPI_Irecv(d.p(), static_cast<int>(N), MPI_INT, prev, 54, comm, &rq), MPI_SUCCESS);
    MPI_Barrier(comm);
    ASSERT_EQ(MPI_Rsend(s.p(), static_cast<int>(N), MPI_INT, next, 54, comm), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(d.read(), pattern(prev, 50, N));
    // Matched probes: MPI_Mprobe + MPI_Mrecv, MPI_Improbe + MPI_Imrecv.
    ASSERT_EQ(MPI_Isend(s.p(), static_cast<int>(N), MPI_INT, next, 55, comm, &sq), MPI_SUCCESS);
    MPI_Message msg;
    MPI_Status st;
    d.fill(-1);
    ASSERT_EQ(MPI_Mprobe(prev, 55, comm, &msg, &st), MPI_SUCCESS);
    ASSERT_EQ(MPI_Mrecv(d.p(), static_cast<int>(N), MPI_INT, &msg, &st), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&sq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(d.read(), pattern(prev, 50, N));
    ASSERT_EQ(MPI_Isend(s.p(), static_cast<int>(N), MPI_INT, next, 56, comm, &sq), MPI_SUCCESS);
    int found = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!found) {
      ASSERT_EQ(MPI_Improbe(prev, 56, comm, &found, &msg, &st), MPI_SUCCESS);
      ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    }
    d.fill(-1);
    ASSERT_EQ(MPI_Imrecv(d.p(), static_cast<int>(N), MPI_INT, &msg, &rq), MPI_SUCCESS);
    MPI_Request both[2] = {rq, sq};
    ASSERT_EQ(MPI_Waitall(2, both, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(d.read(), pattern(prev, 50, N));
    // Sendrecv_replace: the buffer sent is the one received into.
    d.set(pattern(r, 57, N));
    ASSERT_EQ(MPI_Sendrecv_replace(d.p(), static_cast<int>(N), MPI_INT, next, 57, prev, 57, comm, MPI_STATUS_IGNORE),
              MPI_SUCCESS);
    ASSERT_EQ(d.read(), pattern(prev, 57, N));
    // MPI_PROC_NULL: nothing moves, the buffer keeps its values.
    d.fill(-3);
    ASSERT_EQ(MPI_Send(s.p(), static_cast<int>(N), MPI_INT, MPI_PROC_NULL, 58, comm), MPI_SUCCESS);
    ASSERT_EQ(MPI_Recv(d.p(), static_cast<int>(N), MPI_INT, MPI_PROC_NULL, 58, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(d.read(), std::vector<int>(N, -3));
  }

  // A cancelled receive completes without touching its buffer.
  {
    Buf d(m, N);
    d.fill(-4);
    MPI_Request rq;
    ASSERT_EQ(MPI_Irecv(d.p(), static_cast<int>(N), MPI_INT, prev, 12345, comm, &rq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Cancel(&rq), MPI_SUCCESS);
    MPI_Status st;
    ASSERT_EQ(MPI_Wait(&rq, &st), MPI_SUCCESS);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    EXPECT_TRUE(cancelled);
    EXPECT_EQ(d.read(), std::vector<int>(N, -4));
  }

  // A send freed while it runs still delivers; its host copy is released once it is done.
  {
    Buf s(m, N), d(m, N);
    s.set(pattern(r, 60, N));
    d.fill(-1);
    MPI_Request rq;
    ASSERT_EQ(MPI_Isend(s.p(), static_cast<int>(N), MPI_INT, next, 60, comm, &rq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Request_free(&rq), MPI_SUCCESS);
    EXPECT_EQ(rq, MPI_REQUEST_NULL);
    ASSERT_EQ(MPI_Recv(d.p(), static_cast<int>(N), MPI_INT, prev, 60, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(d.read(), pattern(prev, 60, N));
    MPI_Barrier(comm);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (liveRequests() != 0 && std::chrono::steady_clock::now() < deadline) {
    MPI_Request none = MPI_REQUEST_NULL;
    int flag = 0;
    MPI_Test(&none, &flag, MPI_STATUS_IGNORE);  // completes the freed send's transfer
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(liveRequests(), 0u);

  // Misuse while a staged request is alive: MPI's error, nothing else touched.
  {
    Buf d(m, N);
    d.fill(-5);
    MPI_Request rq;
    ASSERT_EQ(MPI_Irecv(d.p(), static_cast<int>(N), MPI_INT, prev, 70, comm, &rq), MPI_SUCCESS);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int index = 0, flag = 0, outcount = 0;
    EXPECT_NE(MPI_Waitall(2, nullptr, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    EXPECT_NE(MPI_Testall(2, nullptr, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    EXPECT_NE(MPI_Waitany(2, nullptr, &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_NE(MPI_Testsome(2, nullptr, &outcount, &index, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    EXPECT_NE(MPI_Waitall(-1, &rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    EXPECT_NE(MPI_Isend(d.p(), -1, MPI_INT, next, 70, comm, &rq), MPI_SUCCESS);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    EXPECT_EQ(liveRequests(), 1u);
    ASSERT_EQ(MPI_Cancel(&rq), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(d.read(), std::vector<int>(N, -5));
    EXPECT_EQ(liveRequests(), 0u);
  }
  // Every call above went through host copies: 4 blocking (2 Sendrecv on one rank), 1
  // Sendrecv, 14 short messages, 2 for the receive posted first, 4 a form, 2 persistent, 17 of the modes, 1
  // cancelled, 2 freed, 1 receive among the misuse.
  EXPECT_EQ(stagedCalls() - staged0,
            (n == 1 ? 2u : 4u) + 1 + shortCalls + 2 + 4 * (sizeof(forms) / sizeof(forms[0])) + 2 + 17 + 1 + 2 + 1);
}

// The neighbourhood collectives on two topologies: a distributed graph ring (each rank
// receives from the one before, sends to the one after) and a non-periodic Cartesian line
// (two neighbours, MPI_PROC_NULL past the ends, whose blocks a receive leaves alone). Every
// form, blocking and nonblocking; received blocks with gaps between them; each buffer
// checked element by element. Returns the calls made (20).
inline unsigned checkNeighbourCollectives(const Memory& m) {
  int r = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  struct Topo {
    const char* name;
    MPI_Comm comm;
    std::vector<int> srcs, dsts;  // ranks (MPI_PROC_NULL past a line's ends)
    std::vector<int> theirIndex;  // for source k: the index of this rank among its destinations
  };
  std::vector<Topo> topos(2);
  const int prev = (r + n - 1) % n, next = (r + 1) % n;
  topos[0] = {"distributed graph ring", MPI_COMM_NULL, {prev}, {next}, {0}};
  EXPECT_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, MPI_UNWEIGHTED, 1, &next, MPI_UNWEIGHTED,
                                           MPI_INFO_NULL, 0, &topos[0].comm),
            MPI_SUCCESS);
  const int left = r > 0 ? r - 1 : MPI_PROC_NULL, right = r < n - 1 ? r + 1 : MPI_PROC_NULL;
  topos[1] = {"Cartesian line", MPI_COMM_NULL, {left, right}, {left, right}, {1, 0}};
  const int dims[1] = {n}, periods[1] = {0};
  EXPECT_EQ(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &topos[1].comm), MPI_SUCCESS);
  unsigned calls = 0;
  static const char* const names[] = {"Neighbor_allgather", "Neighbor_allgatherv", "Neighbor_alltoall",
                                      "Neighbor_alltoallv", "Neighbor_alltoallw"};
  for (Topo& t : topos) {
    SCOPED_TRACE(t.name);
    const int in = static_cast<int>(t.srcs.size()), out = static_cast<int>(t.dsts.size());
    // Rank q's block j: 1000 q + 100 j + i (the gathers send block 0 to every neighbour).
    auto sent = [](int q, int j, int i) { return 1000 * q + 100 * j + i; };
    for (int form = 0; form < 5; ++form) {
      SCOPED_TRACE(names[form]);
      const bool toall = form >= 2, vform = form == 1 || form >= 3;
      // Blocks of 3 ints packed (allgather, alltoall), or 6 apart with gaps (the v- and w-forms;
      // alltoallv/w send j + 2 ints to destination j).
      auto sendCount = [&](int j) { return form >= 3 ? j + 2 : 3; };
      auto sendAt = [&](int j) { return form >= 3 ? 6 * j : 3 * j; };
      auto blockOf = [&](int k) { return toall ? t.theirIndex[static_cast<size_t>(k)] : 0; };
      auto recvCount = [&](int k) { return sendCount(blockOf(k)) * (form >= 3) + 3 * (form < 3); };
      auto recvAt = [&](int k) { return vform ? 6 * k : 3 * k; };
      std::vector<int> src(static_cast<size_t>(6 * out + 1), -7);
      for (int j = 0; j < (toall ? out : 1); ++j)
        for (int i = 0; i < sendCount(j); ++i) src[static_cast<size_t>(sendAt(j) + i)] = sent(r, j, i);
      std::vector<int> rcounts, rdispls, scounts, sdispls;
      std::vector<MPI_Aint> sbytes, rbytes;
      for (int k = 0; k < in; ++k) {
        rcounts.push_back(recvCount(k));
        rdispls.push_back(recvAt(k));
        rbytes.push_back(static_cast<MPI_Aint>(recvAt(k)) * static_cast<MPI_Aint>(sizeof(int)));
      }
      for (int j = 0; j < out; ++j) {
        scounts.push_back(sendCount(j));
        sdispls.push_back(sendAt(j));
        sbytes.push_back(static_cast<MPI_Aint>(sendAt(j)) * static_cast<MPI_Aint>(sizeof(int)));
      }
      std::vector<MPI_Datatype> stypes(static_cast<size_t>(out), MPI_INT), rtypes(static_cast<size_t>(in), MPI_INT);
      std::vector<int> want(static_cast<size_t>(6 * in + 1), -1);
      for (int k = 0; k < in; ++k) {
        const int q = t.srcs[static_cast<size_t>(k)];
        if (q == MPI_PROC_NULL) continue;  // nothing comes: the block keeps its values
        for (int i = 0; i < recvCount(k); ++i) want[static_cast<size_t>(recvAt(k) + i)] = sent(q, blockOf(k), i);
      }
      for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
        SCOPED_TRACE(nonblocking ? "nonblocking" : "blocking");
        MPI_Request rq = MPI_REQUEST_NULL;
        MPI_Request* req = nonblocking ? &rq : nullptr;
        Buf sb(m, src.size()), d(m, want.size());
        sb.set(src);
        d.fill(-1);
        int rc = MPI_ERR_OTHER;
        switch (form) {
          case 0:
            rc = req ? MPI_Ineighbor_allgather(sb.p(), 3, MPI_INT, d.p(), 3, MPI_INT, t.comm, req)
                     : MPI_Neighbor_allgather(sb.p(), 3, MPI_INT, d.p(), 3, MPI_INT, t.comm);
            break;
          case 1:
            rc = req ? MPI_Ineighbor_allgatherv(sb.p(), 3, MPI_INT, d.p(), rcounts.data(), rdispls.data(), MPI_INT,
                                                t.comm, req)
                     : MPI_Neighbor_allgatherv(sb.p(), 3, MPI_INT, d.p(), rcounts.data(), rdispls.data(), MPI_INT,
                                               t.comm);
            break;
          case 2:
            rc = req ? MPI_Ineighbor_alltoall(sb.p(), 3, MPI_INT, d.p(), 3, MPI_INT, t.comm, req)
                     : MPI_Neighbor_alltoall(sb.p(), 3, MPI_INT, d.p(), 3, MPI_INT, t.comm);
            break;
          case 3:
            rc = req ? MPI_Ineighbor_alltoallv(sb.p(), scounts.data(), sdispls.data(), MPI_INT, d.p(), rcounts.data(),
                                               rdispls.data(), MPI_INT, t.comm, req)
                     : MPI_Neighbor_alltoallv(sb.p(), scounts.data(), sdispls.data(), MPI_INT, d.p(), rcounts.data(),
                                              rdispls.data(), MPI_INT, t.comm);
            break;
          default:
            rc = req ? MPI_Ineighbor_alltoallw(sb.p(), scounts.data(), sbytes.data(), stypes.data(), d.p(),
                                               rcounts.data(), rbytes.data(), rtypes.data(), t.comm, req)
                     : MPI_Neighbor_alltoallw(sb.p(), scounts.data(), sbytes.data(), stypes.data(), d.p(),
                                              rcounts.data(), rbytes.data(), rtypes.data(), t.comm);
        }
        EXPECT_EQ(rc, MPI_SUCCESS);
        if (rc != MPI_SUCCESS) continue;
        if (req) EXPECT_EQ(MPI_Wait(req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        ++calls;
        EXPECT_EQ(d.read(), want);
        EXPECT_EQ(sb.read(), src) << "the send buffer changed";
      }
    }
    MPI_Comm_free(&t.comm);
  }
  return calls;
}

// The collectives the route does not take (Gatherv, Scatterv, Scan, Exscan, Alltoallw,
// Reduce_local), blocking and nonblocking, through the same host copies; results against
// the values computed here.
inline void checkOtherCollectives(const Memory& m) {
  int r = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int root = n - 1;
  const unsigned long long staged0 = stagedCalls();
  // Rank q contributes q + 1 ints of value 100 q + i; the v-forms place them one after another.
  std::vector<int> counts(n), displs(n);
  int total = 0;
  for (int q = 0; q < n; ++q) {
    counts[q] = q + 1;
    displs[q] = total;
    total += q + 1;
  }
  auto block = [](int q) {
    std::vector<int> v(static_cast<size_t>(q + 1));
    for (int i = 0; i <= q; ++i) v[static_cast<size_t>(i)] = 100 * q + i;
    return v;
  };
  std::vector<int> all;
  for (int q = 0; q < n; ++q) {
    const std::vector<int> b = block(q);
    all.insert(all.end(), b.begin(), b.end());
  }
  for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
    SCOPED_TRACE(nonblocking ? "nonblocking" : "blocking");
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Request* req = nonblocking ? &rq : nullptr;
    auto done = [&] {
      if (nonblocking) ASSERT_EQ(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    };
    {  // Gatherv to the last rank
      Buf s(m, static_cast<size_t>(r + 1)), d(m, static_cast<size_t>(total));
      s.set(block(r));
      d.fill(-1);
      const int rc = req ? MPI_Igatherv(s.p(), r + 1, MPI_INT, d.p(), counts.data(), displs.data(), MPI_INT, root,
                                        comm, req)
                         : MPI_Gatherv(s.p(), r + 1, MPI_INT, d.p(), counts.data(), displs.data(), MPI_INT, root, comm);
      ASSERT_EQ(rc, MPI_SUCCESS);
      done();
      if (r == root) EXPECT_EQ(d.read(), all) << "Gatherv";
      else EXPECT_EQ(d.read(), std::vector<int>(static_cast<size_t>(total), -1)) << "Gatherv's receive buffer off the root";
    }
    {  // Scatterv from the last rank
      Buf s(m, static_cast<size_t>(total)), d(m, static_cast<size_t>(r + 1));
      s.set(all);
      d.fill(-1);
      const int rc = req ? MPI_Iscatterv(s.p(), counts.data(), displs.data(), MPI_INT, d.p(), r + 1, MPI_INT, root,
                                         comm, req)
                         : MPI_Scatterv(s.p(), counts.data(), displs.data(), MPI_INT, d.p(), r + 1, MPI_INT, root, comm);
      ASSERT_EQ(rc, MPI_SUCCESS);
      done();
      EXPECT_EQ(d.read(), block(r)) << "Scatterv";
    }
    for (int exclusive = 0; exclusive < 2; ++exclusive) {  // Scan and Exscan of 1000 ints
      Buf s(m, 1000), d(m, 1000);
      std::vector<int> mine(1000), want(1000, 0);
      for (int i = 0; i < 1000; ++i) mine[static_cast<size_t>(i)] = (r + 1) * (i % 13);
      for (int q = 0; q < r + (exclusive ? 0 : 1); ++q)
        for (int i = 0; i < 1000; ++i) want[static_cast<size_t>(i)] += (q + 1) * (i % 13);
      s.set(mine);
      d.fill(-1);
      int rc;
      if (exclusive) rc = req ? MPI_Iexscan(s.p(), d.p(), 1000, MPI_INT, MPI_SUM, comm, req)
                              : MPI_Exscan(s.p(), d.p(), 1000, MPI_INT, MPI_SUM, comm);
      else rc = req ? MPI_Iscan(s.p(), d.p(), 1000, MPI_INT, MPI_SUM, comm, req)
                    : MPI_Scan(s.p(), d.p(), 1000, MPI_INT, MPI_SUM, comm);
      ASSERT_EQ(rc, MPI_SUCCESS);
      done();
      if (!exclusive || r > 0) EXPECT_EQ(d.read(), want) << (exclusive ? "Exscan" : "Scan");
    }
    {  // Alltoallw: q + 1 ints to rank q (byte displacements), r + 1 from each
      std::vector<int> sc(n), sd(n), rcnt(n, r + 1), rd(n);
      std::vector<MPI_Datatype> types(n, MPI_INT);
      int sTotal = 0;
      for (int q = 0; q < n; ++q) {
        sc[q] = q + 1;
        sd[q] = sTotal * static_cast<int>(sizeof(int));
        sTotal += q + 1;
        rd[q] = q * (r + 1) * static_cast<int>(sizeof(int));
      }
      std::vector<int> out(static_cast<size_t>(sTotal));
      for (int i = 0; i < sTotal; ++i) out[static_cast<size_t>(i)] = 1000 * r + i;
      Buf s(m, static_cast<size_t>(sTotal)), d(m, static_cast<size_t>(n * (r + 1)));
      s.set(out);
      d.fill(-1);
      const int rc = req ? MPI_Ialltoallw(s.p(), sc.data(), sd.data(), types.data(), d.p(), rcnt.data(), rd.data(),
                                          types.data(), comm, req)
                         : MPI_Alltoallw(s.p(), sc.data(), sd.data(), types.data(), d.p(), rcnt.data(), rd.data(),
                                         types.data(), comm);
      ASSERT_EQ(rc, MPI_SUCCESS);
      done();
      std::vector<int> want;
      for (int q = 0; q < n; ++q)  // rank q's block for r starts at sum_{j<r}(j + 1) = r (r + 1) / 2
        for (int i = 0; i <= r; ++i) want.push_back(1000 * q + r * (r + 1) / 2 + i);
      EXPECT_EQ(d.read(), want) << "Alltoallw";
    }
  }
  {  // Reduce_local: inoutbuf = inbuf op inoutbuf
    Buf a(m, 1000), b(m, 1000);
    std::vector<int> x(1000), y(1000), want(1000);
    for (int i = 0; i < 1000; ++i) {
      x[static_cast<size_t>(i)] = i;
      y[static_cast<size_t>(i)] = 1000 - 2 * i;
      want[static_cast<size_t>(i)] = std::max(i, 1000 - 2 * i);
    }
    a.set(x);
    b.set(y);
    ASSERT_EQ(MPI_Reduce_local(a.p(), b.p(), 1000, MPI_INT, MPI_MAX), MPI_SUCCESS);
    EXPECT_EQ(b.read(), want) << "Reduce_local";
    EXPECT_EQ(a.read(), x);
  }
  const unsigned neighbourCalls = checkNeighbourCollectives(m);
  EXPECT_EQ(liveRequests(), 0u);
  EXPECT_EQ(stagedCalls() - staged0, 2u * 5 + 1 + neighbourCalls);  // 5 calls each way, Reduce_local
}

}  // namespace p2pstage
