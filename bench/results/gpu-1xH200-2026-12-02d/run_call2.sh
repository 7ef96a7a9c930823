#!/usr/bin/env bash
# Call 2 (one H200): the 8-byte MPI_Allreduce on device buffers with two processes sharing
# the GPU (MCCL_SHARED_GPU=2), three rounds of micro_mpi_tiny: the route (its wait on the
# LL kernel's completion word) beside the pieces and floors measured on one rank in
# gpu-1xH200-2026-12-02c call 1. Then CountsPast2To31Elements again (its checks folded
# into one scan for bytes and floats).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for r in 1 2 3; do
  MCCL_SHARED_GPU=2 timeout 150 $M -x MCCL_SHARED_GPU -x CUDA_DEVICE_MAX_CONNECTIONS $B/micro_mpi_tiny 2000 > $W/tiny_np2_$r.txt 2>&1
  echo "rc=$?" >> $W/tiny_np2_$r.txt
done
env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16 timeout 150 \
  $B/mccl_gpu_tests --gtest_filter=GpuSingleProcess.CountsPast2To31Elements > $W/huge.log 2>&1
res huge $? $W/huge.log
cat $T >> $W/tiny_np2_3.txt
for f in $W/tiny_np2_*.txt; do echo "== $(basename $f)"; cat $f; done > $W/summary.txt
cp $W/summary.txt $OUT/call2_summary.txt
cat $W/summary.txt
