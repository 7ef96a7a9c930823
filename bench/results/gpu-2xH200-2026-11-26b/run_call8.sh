#!/usr/bin/env bash
# Call 8: on two ranks a Send/Recv's steps a quarter of a channel's bytes (kUnitsPerChannel
# units a channel, so units apply from 24 MiB at 24 channels; was half) against call 7's
# build (.carry/ab/units): Send/Recv, Gather, Scatter, AlltoAll 4 - 256 MiB, interleaved,
# two rounds, NCCL alongside; results checked at 8 - 512 MiB.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT"
W=$(mktemp -d)
ops=gather,scatter,alltoall,sendrecv
run() { local name=$1 lib=$2; shift 2; $M -x LD_LIBRARY_PATH=$lib:$L "$@" -b 4M -e 256M -f 2 -t 3 -c 0 -o $ops --csv $W/$name.csv > $W/$name.log 2>&1 || echo "$name failed rc=$?"; }
for round in 1 2; do
  run units_$round $L/ab/units $B/mccl-perf
  run quarter_$round $L $B/mccl-perf
done
run nccl $L $B/nccl-perf
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8M -e 512M -f 4 -c 1 -o $ops > $W/check.log 2>&1; echo "check rc=$?" >> $W/check.log
export LD_LIBRARY_PATH=$L CUDA_DEVICE_MAX_CONNECTIONS=32
timeout 200 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.AlltoAll*:GpuSingleProcess.PointToPoint*:GpuSingleProcess.SelfSendRecv*' > $W/tests_2gpus.log 2>&1; echo "rc=$?" >> $W/tests_2gpus.log
grep -h "rc=\|OK \]\|FAILED \]" $W/*.log
tar -czf "$OUT/call8.tgz" -C "$W" .
