#!/usr/bin/env bash
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16
T=$OUT/final_tests.txt
clean() { sed 's/\x1b\[[0-9;]*m//g' | grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran|OK \]|Failure|rank [0-9]:|SKIPPED" | tail -40; }
echo "== bench" >> $T
for op in allreduce allgather sendrecv; do LD_LIBRARY_PATH=$B timeout 25 $B/mccl-threads-bench -r 2 -b 8 -e 8 -o $op 2>&1 | tail -1 >> $T; done
NCCL_PROTO=LL128 LD_LIBRARY_PATH=$B timeout 25 $B/mccl-threads-bench -r 2 -b 256K -e 256K -o allgather,allreduce 2>&1 | tail -2 >> $T
echo "== tests 2 ranks, NCCL_PROTO=LL128" >> $T
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 NCCL_PROTO=LL128 timeout 120 $B/mccl_gpu_tests --gtest_filter='*EveryTypeOpAndForm*:*PointToPoint*:*AlltoAll*:*Lean*:*Ll128*:*GraphCapture*:*TwoCommunicators*:*Gather*' 2>&1 | clean >> $T
echo "== tests 3 ranks, NCCL_PROTO=LL128" >> $T
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=4 timeout 80 $B/mccl_gpu_tests --gtest_filter='*EveryTypeOpAndForm*:*Ll128*:*AlltoAll*' 2>&1 | clean >> $T
echo "== tests 2 ranks, default" >> $T
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 timeout 200 $B/mccl_gpu_tests 2>&1 | clean >> $T
cat $T
