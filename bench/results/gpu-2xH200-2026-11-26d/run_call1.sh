#!/usr/bin/env bash
# Call 1: the Simple kernel's block start and end. (a) The first work's connections loaded
# at the block's start (beside the parameters' copy) and the unit counters zeroed by the
# last claim instead of a fence and an atomic at every block's end (the pack's libmccl)
# against the session's starting build (ab/base): single-process GPU tests of the Simple
# kernel and its units, mccl-perf -c 1 over 512 KiB - 256 MiB; (b) MCCL_PROFILE with the new
# stamps (parameters copied / first work's setup) at 2 and 32 MiB, both builds; (c) both
# builds interleaved twice, 512 KiB - 128 MiB, every collective and Send/Recv, beside NCCL's
# three modes (-R 0 plain, 1 registered, 2 windows) in the same call.
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
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 512K -e 256M -f 2 -t 1 -o $ops -c 1 > $W/check.log 2>&1; echo "rc=$?" >> $W/check.log
for sz in 2M 32M; do
  for op in allreduce allgather reducescatter sendrecv; do
    for v in new base; do
      lp=$L; [ $v = base ] && lp=$L/ab/base:$L
      $M -x LD_LIBRARY_PATH=$lp -x MCCL_PROFILE=1 $B/mccl-perf -b $sz -e $sz -n 200 -w 20 -t 1 -c 0 -o $op > $W/prof_${v}_${op}_$sz.log 2>&1
    done
  done
done
S="-b 512K -e 128M -f 2 -t 3 -c 0 -o $ops"
for r in 1 2; do
  $M -x LD_LIBRARY_PATH=$L/ab/base:$L $B/mccl-perf $S --csv $W/base_$r.csv > $W/base_$r.log 2>&1 || echo "base failed"
  $M -x LD_LIBRARY_PATH=$L $B/mccl-perf $S --csv $W/new_$r.csv > $W/new_$r.log 2>&1 || echo "new failed"
done
for R in 0 1 2; do
  $M -x LD_LIBRARY_PATH=$L $B/nccl-perf -R $R $S --csv $W/nccl_R$R.csv > $W/nccl_R$R.log 2>&1 || echo "nccl R$R failed"
done
grep -h "rc=\|FAILED\|PASSED\|wrong\|mismatch" $W/gpu_single.log $W/check.log | sort | uniq -c > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call1.tgz" -C "$W" .
