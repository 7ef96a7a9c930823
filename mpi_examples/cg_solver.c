/*
 * A conjugate-gradient solver for the 1-D Poisson problem -u'' = f on (0, 1), u(0) = u(1) = 0,
 * on a grid distributed in blocks over the ranks. Its dot products use mcclMpiAllreduce and
 * its halo exchange uses ncclSend/ncclRecv in a group; the same solver with MPI_Allreduce
 * and MPI_Sendrecv runs next to it, and the residual histories must agree.
 *
 *   mpirun -np 4 cg_solver [grid points] [iterations]
 */
#include <math.h>

#include "example_util.h"
#include "mccl_mpi.h"

typedef struct {
  int useMccl;
  ncclComm_t comm;
  int isHost;
  cudaStream_t stream;
  double* dScalar;  /* one double on the communicator's memory (for the dot products) */
  double* dHalo;    /* 4 doubles: send left, send right, recv left, recv right */
} Net;

/* Global dot product of two local vectors. */
static double dot(Net* net, const double* a, const double* b, int n) {
  double local = 0;
  for (int i = 0; i < n; ++i) local += a[i] * b[i];
  if (!net->useMccl) {
    double global;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return global;
  }
  exCopy(net->dScalar, &local, sizeof local, net->isHost, 1);
  CHECK_NCCL(mcclMpiAllreduce(MPI_IN_PLACE, net->dScalar, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, net->stream));
  CHECK_NCCL(mcclStreamSynchronize(net->stream, MPI_COMM_WORLD));
  exCopy(&local, net->dScalar, sizeof local, net->isHost, 0);
  return local;
}

/* Fills ghost[0] (left neighbour's last value) and ghost[1] (right neighbour's first). */
static void halo(Net* net, const double* p, int n, int rank, int size, double ghost[2]) {
  int left = rank - 1, right = rank + 1;
  ghost[0] = ghost[1] = 0; /* boundary condition at the ends of the domain */
  if (!net->useMccl) {
    MPI_Sendrecv(&p[0], 1, MPI_DOUBLE, left >= 0 ? left : MPI_PROC_NULL, 0, &ghost[1], 1, MPI_DOUBLE,
                 right < size ? right : MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&p[n - 1], 1, MPI_DOUBLE, right < size ? right : MPI_PROC_NULL, 1, &ghost[0], 1, MPI_DOUBLE,
                 left >= 0 ? left : MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return;
  }
  double out[2] = {p[0], p[n - 1]};
  exCopy(net->dHalo, out, sizeof out, net->isHost, 1);
  CHECK_NCCL(ncclGroupStart());
  if (left >= 0) {
    CHECK_NCCL(ncclSend(net->dHalo + 0, 1, ncclDouble, left, net->comm, net->stream));
    CHECK_NCCL(ncclRecv(net->dHalo + 2, 1, ncclDouble, left, net->comm, net->stream));
  }
  if (right < size) {
    CHECK_NCCL(ncclSend(net->dHalo + 1, 1, ncclDouble, right, net->comm, net->stream));
    CHECK_NCCL(ncclRecv(net->dHalo + 3, 1, ncclDouble, right, net->comm, net->stream));
  }
  CHECK_NCCL(ncclGroupEnd());
  CHECK_NCCL(mcclStreamSynchronize(net->stream, MPI_COMM_WORLD));
  double in[2] = {0, 0};
  exCopy(in, net->dHalo + 2, sizeof in, net->isHost, 0);
  if (left >= 0) ghost[0] = in[0];
  if (right < size) ghost[1] = in[1];
}

/* CG iterations; residual norms into res[0..iters]. Returns iterations done. */
static int solve(Net* net, int n, int first, int global, int iters, double* res, int rank, int size) {
  double h = 1.0 / (global + 1);
  double* x = calloc((size_t)n, sizeof(double));
  double* r = malloc((size_t)n * sizeof(double));
  double* p = malloc((size_t)n * sizeof(double));
  double* ap = malloc((size_t)n * sizeof(double));
  for (int i = 0; i < n; ++i) {
    double xi = (first + i + 1) * h;
    r[i] = p[i] = h * h * (M_PI * M_PI * sin(M_PI * xi) + 1.0); /* b, scaled: A = tridiag(-1, 2, -1) */
  }
  double rr = dot(net, r, r, n);
  res[0] = sqrt(rr);
  int it;
  for (it = 0; it < iters; ++it) {
    double g[2];
    halo(net, p, n, rank, size, g);
    for (int i = 0; i < n; ++i) {
      double l = i > 0 ? p[i - 1] : g[0], rgt = i < n - 1 ? p[i + 1] : g[1];
      ap[i] = 2 * p[i] - l - rgt;
    }
    double alpha = rr / dot(net, p, ap, n);
    for (int i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
    }
    double rrNew = dot(net, r, r, n);
    res[it + 1] = sqrt(rrNew);
    if (res[it + 1] < 1e-12 * res[0]) {
      ++it;
      break;
    }
    for (int i = 0; i < n; ++i) p[i] = r[i] + (rrNew / rr) * p[i];
    rr = rrNew;
  }
  free(x);
  free(r);
  free(p);
  free(ap);
  return it;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int global = argc > 1 ? atoi(argv[1]) : 1000;
  int iters = argc > 2 ? atoi(argv[2]) : 800;
  int first = (int)((long)rank * global / size), last = (int)((long)(rank + 1) * global / size);
  int n = last - first;

  Net mccl = {1, NULL, 1, NULL, NULL, NULL};
  CHECK_NCCL(mcclMpiComm(MPI_COMM_WORLD, &mccl.comm));
  CHECK_NCCL(mcclCommIsHost(mccl.comm, &mccl.isHost));
  mccl.stream = exStream(mccl.isHost);
  mccl.dScalar = (double*)exAlloc(sizeof(double), mccl.isHost);
  mccl.dHalo = (double*)exAlloc(4 * sizeof(double), mccl.isHost);
  Net mpi = {0, NULL, 1, NULL, NULL, NULL};

  double* resMccl = calloc((size_t)iters + 1, sizeof(double));
  double* resMpi = calloc((size_t)iters + 1, sizeof(double));
  /* A few iterations of each first, so that neither timing includes one-time costs (the
   * first use of a shared-memory segment, MPI's first messages, cold caches). */
  int warm = iters < 20 ? iters : 20;
  solve(&mccl, n, first, global, warm, resMccl, rank, size);
  solve(&mpi, n, first, global, warm, resMpi, rank, size);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  int itMccl = solve(&mccl, n, first, global, iters, resMccl, rank, size);
  MPI_Barrier(MPI_COMM_WORLD);
  double t1 = MPI_Wtime();
  int itMpi = solve(&mpi, n, first, global, iters, resMpi, rank, size);
  double t2 = MPI_Wtime();

  /* The histories must agree while the residual is well above rounding: once it nears
   * 1e-12 of the initial one, the last digits depend on the order of each sum (mccl's
   * ring and MPI's algorithms add in different orders), and so may the iteration count
   * by one or two. */
  double worst = 0;
  for (int i = 0; i <= itMccl && i <= itMpi; ++i) {
    if (resMpi[i] < 1e-12 * resMpi[0]) break;
    double d = fabs(resMccl[i] - resMpi[i]) / (resMpi[i] + 1e-300);
    if (d > worst) worst = d;
  }
  int ok = abs(itMccl - itMpi) <= 2 && worst < 1e-6;
  if (rank == 0) {
    printf("CG on %d points, %d ranks (%s memory): %d iterations with mccl, %d with MPI\n", global, size,
           mccl.isHost ? "host" : "GPU", itMccl, itMpi);
    for (int i = 0; i <= itMccl; i += (itMccl / 8 > 0 ? itMccl / 8 : 1))
      printf("  iteration %4d  residual mccl %.10e  MPI %.10e\n", i, resMccl[i], resMpi[i]);
    printf("  final          residual mccl %.10e  MPI %.10e\n", resMccl[itMccl], resMpi[itMpi]);
    printf("largest relative difference of the residual histories: %.2e: %s (mccl %.3f s, MPI %.3f s)\n", worst,
           ok ? "match" : "MISMATCH", t1 - t0, t2 - t1);
  }
  exFree(mccl.dScalar, mccl.isHost);
  exFree(mccl.dHalo, mccl.isHost);
  free(resMccl);
  free(resMpi);
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize(); /* releases the communicator cached on MPI_COMM_WORLD */
  return ok ? 0 : 1;
}
