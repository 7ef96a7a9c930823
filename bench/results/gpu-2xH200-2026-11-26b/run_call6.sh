#!/usr/bin/env bash
# Call 6: Sends and Recvs with units on two ranks (channels take the next slot-sized unit
# as they free up, as the collectives do) against the build before this session
# (.carry/ab/before, no units and no self copy): Send/Recv, Gather, Scatter, AlltoAll
# 512 KiB - 2 GiB, interleaved, two rounds, NCCL alongside; MCCL_PROFILE's block ends for
# Gather and Send/Recv 2 GiB; then the GPU tests that run units and point-to-point.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT"
W=$(mktemp -d)
ops=gather,scatter,alltoall,sendrecv
run() { local name=$1 lib=$2; shift 2; $M -x LD_LIBRARY_PATH=$lib:$L "$@" -b 512K -e 2G -f 4 -t 3 -c 0 -o $ops --csv $W/$name.csv > $W/$name.log 2>&1 || echo "$name failed rc=$?"; }
for round in 1 2; do
  run before_$round $L/ab/before $B/mccl-perf
  run after_$round $L $B/mccl-perf
done
run nccl $L $B/nccl-perf
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 1M -e 1G -f 8 -c 1 -o $ops > $W/check.log 2>&1; echo "check rc=$?" >> $W/check.log
for op in gather sendrecv; do
  $M -x LD_LIBRARY_PATH=$L -x MCCL_PROFILE=1 $B/mccl-perf -b 2G -e 2G -n 4 -w 1 -t 1 -c 0 -o $op > $W/prof_$op.log 2>&1
done
export LD_LIBRARY_PATH=$L CUDA_DEVICE_MAX_CONNECTIONS=32
F='GpuSingleProcess.PointToPointUnits*:GpuSingleProcess.SimpleUnits*:GpuSingleProcess.SimpleKernelsAndGeneric*:GpuSingleProcess.SelfSendRecv*:GpuSingleProcess.AlltoAll*:GpuSingleProcess.PointToPoint*:GpuSingleProcess.LargeBuffers'
timeout 400 $B/mccl_gpu_tests --gtest_filter="$F" > $W/tests_2gpus.log 2>&1; echo "rc=$?" >> $W/tests_2gpus.log
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 timeout 200 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.SimpleKernelsAndGeneric*:GpuSingleProcess.SelfSendRecv*:GpuSingleProcess.PointToPoint*' > $W/tests_3.log 2>&1; echo "rc=$?" >> $W/tests_3.log
grep -h "rc=\|OK \]\|FAILED \]" $W/*.log
tar -czf "$OUT/call6.tgz" -C "$W" .
