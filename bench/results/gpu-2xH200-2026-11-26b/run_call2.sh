#!/usr/bin/env bash
# Call 2: a rank's Send/Recv to itself copied straight into the Recv's buffer (selfCopy)
# against the build before it (.carry/ab/before): Gather, Scatter, AlltoAll, Send/Recv
# 512 KiB - 2 GiB, interleaved, two rounds; NCCL alongside. Then the GPU tests of the
# point-to-point family (2 GPUs; 3 and 4 ranks sharing them), MPI np 2.
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
# correctness of the new path: -c 1 at a few sizes
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 1M -e 64M -f 8 -c 1 -o $ops > $W/check.log 2>&1; echo "check rc=$?" >> $W/check.log
export LD_LIBRARY_PATH=$L CUDA_DEVICE_MAX_CONNECTIONS=32
F='GpuSingleProcess.SelfSendRecv*:GpuSingleProcess.AlltoAll*:GpuSingleProcess.PointToPoint*:GpuSingleProcess.EveryTypeOpAndForm'
timeout 300 $B/mccl_gpu_tests --gtest_filter="$F" > $W/tests_2gpus.log 2>&1; echo "rc=$?" >> $W/tests_2gpus.log
for nr in 3 4; do
  MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr timeout 300 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.SelfSendRecv*:GpuSingleProcess.AlltoAll*:GpuSingleProcess.PointToPoint*' > $W/tests_$nr.log 2>&1; echo "rc=$?" >> $W/tests_$nr.log
done
$M -x LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_mpi_tests --gtest_filter=GpuMpi.CollectivesFromMpiComm > $W/tests_mpi.log 2>&1; echo "rc=$?" >> $W/tests_mpi.log
grep -h "rc=\|PASSED\|FAILED" $W/*.log | sort | uniq -c
tar -czf "$OUT/call2.tgz" -C "$W" .
