#!/usr/bin/env bash
# Call 3: the Simple kernel's setup with 32-bit division where it gives the same result
# (the pack's libmccl, "fast") against call 1's build ("v1": early connection loads, unit
# counters zeroed by the last claim) and the session's start ("base"), interleaved twice:
# every collective and Send/Recv 1 - 64 MiB, and 128 KiB with Simple forced (fixed costs
# alone); MCCL_PROFILE at 2 MiB for each; GPU tests of the Simple kernel; mccl-perf -c 1.
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
LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_tests --gtest_filter='*Simple*:*Units*:*EveryTypeOpAndForm:*LargeBuffers*:*Graph*:*PointToPoint*' > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 64K -e 64M -f 4 -t 1 -o $ops -c 1 > $W/check.log 2>&1; echo "rc=$?" >> $W/check.log
$M -x LD_LIBRARY_PATH=$L -x NCCL_PROTO=Simple $B/mccl-perf -b 8 -e 1M -f 8 -t 1 -o $ops -c 1 > $W/check_simple.log 2>&1; echo "rc=$?" >> $W/check_simple.log
S="-b 1M -e 64M -f 2 -t 3 -c 0 -o $ops"
T="-b 128K -e 128K -t 3 -c 0 -o $ops"
for r in 1 2; do
  for v in base v1 fast; do
    lp=$L/ab/$v:$L; [ $v = fast ] && lp=$L
    $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $S --csv $W/${v}_$r.csv > $W/${v}_$r.log 2>&1 || echo "$v failed"
    $M -x LD_LIBRARY_PATH=$lp -x NCCL_PROTO=Simple $B/mccl-perf $T --csv $W/s128_${v}_$r.csv > $W/s128_${v}_$r.log 2>&1 || echo "$v s128 failed"
  done
done
for v in base fast; do
  lp=$L/ab/$v:$L; [ $v = fast ] && lp=$L
  for op in allreduce reducescatter; do
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_PROFILE=1 $B/mccl-perf -b 2M -e 2M -n 200 -w 20 -t 1 -c 0 -o $op > $W/prof_${v}_${op}_2M.log 2>&1
  done
done
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf -R 0 $S --csv $W/nccl_R0.csv > $W/nccl_R0.log 2>&1
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf -R 2 $S --csv $W/nccl_R2.csv > $W/nccl_R2.log 2>&1
grep -h "rc=\|FAILED\|PASSED\|wrong\|mismatch" $W/gpu_single.log $W/check.log $W/check_simple.log | sort | uniq -c > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call3.tgz" -C "$W" .
