/* libmccl binds its own symbols: linked after a library that defines the same nccl*
 * functions (foreign_nccl.c, standing in for NVIDIA's libnccl), mccl's MPI entry points
 * still reach mccl's own ncclAllReduce, ncclBroadcast, ncclGroupStart/End, ncclSend/Recv.
 * The program's own call to ncclAllReduce reaches the foreign library: the test would see
 * a leak. Run under mpirun with any number of ranks. */
#include <mpi.h>
#include <stdio.h>

#include "mccl_mpi.h"

extern int foreignNcclCalls;

#define CHECK(cond, ...)                              \
  do {                                                \
    if (!(cond)) {                                    \
      fprintf(stderr, "FAIL line %d: ", __LINE__);   \
      fprintf(stderr, __VA_ARGS__);                   \
      fprintf(stderr, "\n");                          \
      MPI_Abort(MPI_COMM_WORLD, 1);                   \
    }                                                 \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  enum { kCount = 1000 };
  static double in[kCount], out[kCount];
  static int a2aIn[64], a2aOut[64];
  for (int i = 0; i < kCount; ++i) in[i] = rank + i;
  ncclResult_t r = mcclMpiAllreduce(in, out, kCount, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, NULL);
  CHECK(r == ncclSuccess, "mcclMpiAllreduce returned %d", (int)r);
  for (int i = 0; i < kCount; ++i) CHECK(out[i] == n * (n - 1) / 2.0 + (double)n * i, "element %d is %g", i, out[i]);
  int b = rank == 0 ? 42 : -1;
  r = mcclMpiBcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, NULL);
  CHECK(r == ncclSuccess && b == 42, "mcclMpiBcast returned %d, value %d", (int)r, b);
  for (int q = 0; q < n && q < 64; ++q) a2aIn[q] = 100 * rank + q;
  r = mcclMpiAlltoall(a2aIn, a2aOut, 1, MPI_INT, MPI_COMM_WORLD, NULL);  /* group + Send/Recv */
  CHECK(r == ncclSuccess, "mcclMpiAlltoall returned %d", (int)r);
  for (int q = 0; q < n && q < 64; ++q) CHECK(a2aOut[q] == 100 * q + rank, "alltoall from %d is %d", q, a2aOut[q]);
  CHECK(foreignNcclCalls == 0, "libmccl called the foreign library %d times", foreignNcclCalls);
  /* The program's own call goes to the first definition: the foreign one. */
  ncclAllReduce(in, out, 1, ncclDouble, ncclSum, NULL, NULL);
  CHECK(foreignNcclCalls == 1, "the foreign library is not ahead of libmccl (%d calls)", foreignNcclCalls);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("libmccl reached only its own symbols (%d ranks)\n", n);
  MPI_Finalize();
  return 0;
}
