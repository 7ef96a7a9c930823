// GPU machine: libmccl_mpi linked before libmpi takes MPI collectives on device buffers to
// mccl (the counters prove it) with MPI's results; and mcclStreamSynchronize keeps MPI
// moving while a GPU collective waits for a rank that is blocked in MPI.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "mccl_mpi.h"

namespace {
bool gpusForAll() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  int have = n > 0, all = 0;
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all) {
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    cudaSetDevice(r % n);
  }
  return all != 0;
}
}  // namespace

TEST(PreloadGpu, DeviceBuffersGoToMcclWithMpiResults) {
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  uint64_t m0, p0;
  mcclMpiPathCounters(&m0, &p0);
  const int count = 1 << 20;
  std::vector<float> h(count), want(count), got(count);
  for (int i = 0; i < count; ++i) h[i] = static_cast<float>(r + 1 + i % 5);
  float *d, *dout;
  cudaMalloc(&d, count * sizeof(float) * n);
  cudaMalloc(&dout, count * sizeof(float) * n);
  cudaMemcpy(d, h.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  MPI_Allreduce(d, dout, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);           // device: mccl
  MPI_Allreduce(h.data(), want.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);  // host: MPI
  cudaMemcpy(got.data(), dout, count * sizeof(float), cudaMemcpyDeviceToHost);
  EXPECT_EQ(got, want);
  MPI_Bcast(d, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
  MPI_Reduce(d, dout, count, MPI_FLOAT, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Allgather(d, count, MPI_FLOAT, dout, count, MPI_FLOAT, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(dout, d, count / n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Alltoall(dout, count, MPI_FLOAT, d, count, MPI_FLOAT, MPI_COMM_WORLD);
  cudaMemcpy(got.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost);
  EXPECT_EQ(got[0], 1.0f);  // alltoall of the allgather of rank 0's broadcast data
  // Small device buffers: this MPI is not CUDA-aware, so mccl keeps them too.
  MPI_Allreduce(MPI_IN_PLACE, d, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  uint64_t m1, p1;
  mcclMpiPathCounters(&m1, &p1);
  EXPECT_GE(m1 - m0, 7u);
  cudaFree(d);
  cudaFree(dout);
}

TEST(PreloadGpu, StreamSynchronizeDrivesMpiWhileAKernelWaits) {
  // Rank 0 has a large MPI_Isend to rank 1 in flight and waits for its GPU AllReduce with
  // mcclStreamSynchronize; rank 1 first receives (needing rank 0's MPI progress), then
  // joins the AllReduce. Without progress in the wait, both would stall.
  if (!gpusForAll()) GTEST_SKIP() << "needs a GPU per rank";
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) GTEST_SKIP();
  ncclComm_t comm;
  ASSERT_EQ(mcclMpiComm(MPI_COMM_WORLD, &comm), ncclSuccess);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  float* d;
  cudaMalloc(&d, 1 << 20);
  cudaMemset(d, 0, 1 << 20);
  ASSERT_EQ(ncclAllReduce(d, d, 1 << 18, ncclFloat, ncclSum, comm, s), ncclSuccess);  // connect first
  ASSERT_EQ(mcclStreamSynchronize(s, MPI_COMM_WORLD), ncclSuccess);
  std::vector<char> big(32 << 20, static_cast<char>(r));
  if (r == 0) {
    MPI_Request req;
    MPI_Isend(big.data(), static_cast<int>(big.size()), MPI_CHAR, 1, 5, MPI_COMM_WORLD, &req);
    ASSERT_EQ(ncclAllReduce(d, d, 1 << 18, ncclFloat, ncclSum, comm, s), ncclSuccess);
    ASSERT_EQ(mcclStreamSynchronize(s, MPI_COMM_WORLD), ncclSuccess);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    if (r == 1) MPI_Recv(big.data(), static_cast<int>(big.size()), MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ASSERT_EQ(ncclAllReduce(d, d, 1 << 18, ncclFloat, ncclSum, comm, s), ncclSuccess);
    ASSERT_EQ(mcclStreamSynchronize(s, MPI_COMM_WORLD), ncclSuccess);
  }
  cudaFree(d);
  cudaStreamDestroy(s);
}
