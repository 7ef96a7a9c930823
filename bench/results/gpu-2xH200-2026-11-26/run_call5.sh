#!/usr/bin/env bash
# Call 5 (not landed, README): a rank's Send/Recv to itself on a copy engine beside the kernel
# (MCCL_SELF_CE_MIN_BYTES, default 4 MiB) against the kernel's FIFO (0), interleaved, two
# rounds, NCCL alongside; then the GPU tests that run it.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
ops=gather,scatter,alltoall
for round in 1 2; do
  for min in 0 4194304; do
    $M -x MCCL_SELF_CE_MIN_BYTES=$min $B/mccl-perf -b 512K -e 2G -f 4 -t 3 -o $ops --csv $W/self_${min}_$round.csv > /dev/null 2>&1
  done
done
$M $B/nccl-perf -b 512K -e 2G -f 4 -t 3 -o $ops --csv $W/nccl.csv > /dev/null 2>&1
echo "== us: kernel FIFO (2 rounds) | copy engine (2 rounds) | NCCL"
paste -d, $W/self_0_1.csv $W/self_0_2.csv $W/self_4194304_1.csv $W/self_4194304_2.csv $W/nccl.csv |
  awk -F, 'NR>1 {printf "%-9s %11s  %8s %8s | %8s %8s | %8s\n", $2, $3, $4, $11, $18, $25, $32}'
tar -czf "$OUT/self.tgz" -C "$W" .
echo "== tests"
timeout 300 $B/mccl_gpu_tests --gtest_filter='*SelfSendRecv*:*AlltoAll*:*Gather*:GpuSingleProcess.PointToPointPatterns' 2>&1 | grep -a -E "^\[  (PASSED|FAILED)|Failure|rank [0-9]+:" | head -12
for nr in 2 3; do
  MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_MAX_NCHANNELS=16 CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 300 $B/mccl_gpu_tests \
    --gtest_filter='*SelfSendRecv*:*AlltoAll*' 2>&1 | grep -a -E "^\[  (PASSED|FAILED)|Failure" | sed "s/^/shared $nr: /" | head -6
done
MCCL_TEST_QUICK=1 timeout 200 $M -x MCCL_TEST_QUICK -x MCCL_SELF_CE_MIN_BYTES=1 $B/mccl_gpu_mpi_tests 2>&1 | grep -a -E "(PASSED|FAILED) |Failure" | head -6
