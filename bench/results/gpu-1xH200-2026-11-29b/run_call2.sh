#!/usr/bin/env bash
# Call 2 (one H200, ranks as threads sharing it): the GPU tests on the build with 32-bit
# divisions in the Simple and LL setups (2 ranks: every single-process test; 3 ranks: the
# Simple, units and LL128 two-shot ones), then the start marks of call 1 on this build.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F3='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm:GpuSingleProcess.SimpleUnalignedBuffersEveryCollective:GpuSingleProcess.Ll128TwoShotAllReduceEveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns'
for run in "2:GpuSingleProcess.*" "3:$F3"; do
  nr=${run%%:*} f=${run#*:}
  [ $SECONDS -lt 400 ] || continue
  env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=$((nr > 2 ? 4 : 16)) timeout 240 $B/mccl_gpu_tests --gtest_filter="$f" > $W/t_$nr.log 2>&1
  res "tests $nr ranks" $? $W/t_$nr.log
  grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/t_$nr.log >> $T
  cp $T $OUT/tests.txt
done
cat $T
TB=$B/mccl-threads-bench
for spec in "reducescatter 2M" "allgather 4M" "allreduce 4M" "allreduce 2M" "sendrecv 4M" "broadcast 4M"; do
  set -- $spec
  echo "== Simple $1 $2 PDL=0"
  NCCL_PROTO=Simple MCCL_PDL=0 MCCL_PROFILE=1 timeout 60 $TB -r 2 -b $2 -e $2 -n 200 -G 0 -o $1 2>&1 | grep -v "^#" | grep -E "^[a-z]|Simple block start|Simple:" | grep -v "rank 1" | cut -c1-400
done > $OUT/profile.txt 2>&1
for spec in "allreduce 1M LL128" "allreduce 64K LL" "allreduce 8 LL"; do
  set -- $spec
  echo "== $3 $1 $2 PDL=0"
  NCCL_PROTO=$3 MCCL_PDL=0 MCCL_PROFILE=1 timeout 60 $TB -r 2 -b $2 -e $2 -n 200 -G 0 -o $1 2>&1 | grep -v "^#" | grep -E "^[a-z]|LL:" | cut -c1-400
done >> $OUT/profile.txt 2>&1
cat $OUT/profile.txt
tar -czf "$OUT/call2.tgz" -C "$W" .
