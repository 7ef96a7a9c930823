#!/usr/bin/env bash
# Call 8: the tree as committed (the pack's libmccl, "landed": call 7's LL kernels with the
# several-line form cut to reductions and its end shared with the one-line form; the Simple
# kernel as at the session's start) against "base": GPU tests of the LL kernels and every
# type, op and form; mccl-perf -c 1 (planner's choice, LL forced); both interleaved twice
# 32 KiB - 2 MiB and in CUDA graphs 8 B - 512 KiB.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
ops=allreduce,reducescatter,reduce,allgather,broadcast,gather,scatter,alltoall,sendrecv
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
LD_LIBRARY_PATH=$L timeout 240 $B/mccl_gpu_tests --gtest_filter='*Ll*:*Lean*:*EveryTypeOpAndForm:*Graph*:*PointToPoint*:*TwoCommunicators*:*AlltoAll*:*Gather*:*Simple*' > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 8M -f 2 -t 1 -o $ops -c 1 > $W/check.log 2>&1; echo "rc=$?" >> $W/check.log
$M -x LD_LIBRARY_PATH=$L -x NCCL_PROTO=LL $B/mccl-perf -b 1K -e 2M -f 2 -t 1 -o $ops -c 1 > $W/check_ll.log 2>&1; echo "rc=$?" >> $W/check_ll.log
S="-b 32K -e 2M -f 2 -t 3 -c 0 -o $ops"
G="-b 8 -e 512K -f 4 -t 3 -c 0 -G 20 -o allreduce,reducescatter,reduce,allgather,broadcast,sendrecv"
for r in 1 2; do
  for v in base landed; do
    lp=$L/ab/$v:$L; [ $v = landed ] && lp=$L
    $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $S --csv $W/${v}_$r.csv > $W/${v}_$r.log 2>&1 || echo "$v failed"
    $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $G --csv $W/graph_${v}_$r.csv > $W/graph_${v}_$r.log 2>&1 || echo "graph $v failed"
  done
done
grep -h "rc=\|FAILED\|PASSED\|wrong\|mismatch" $W/gpu_single.log $W/check*.log | sort | uniq -c > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call8.tgz" -C "$W" .
