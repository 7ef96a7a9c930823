#!/usr/bin/env bash
# Call 6 (one H200, ranks sharing it as threads; main at fe40eb2): the LL tests on the
# planner's own channel counts (no NCCL_MAX_NCHANNELS, which the usual test runs set to 16
# or 4: here LL collectives take up to 24 channels, 2-8 lines a thread from 96 KiB a peer),
# on 2 and 3 ranks.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F='*Lean*:*Alternate*:GpuSingleProcess.EveryTypeOpAndForm:*Graph*:*Ll*'
for nr in 2 3; do
  env -u NCCL_MAX_NCHANNELS MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr MCCL_TIMEOUT=10 \
    timeout 200 $B/mccl_gpu_tests --gtest_filter="$F" > $W/t_$nr.log 2>&1
  res "tests $nr ranks, planner's channels" $? $W/t_$nr.log
  grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/t_$nr.log >> $T
done
cp $T $OUT/call6_tests.txt
cat $T
