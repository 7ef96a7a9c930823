#!/usr/bin/env bash
# Call 3 (one H200): the LL flags' wrap past 2^32 steps (GpuSingleProcess.LlFlagsWrapPast2To32Steps:
# connections start 1,024 steps short of it, ipcSetStepBaseForTests), and the test it shares
# its loop with (TwoCommunicatorsOneStreamEveryProtocol), on 2 and 3 ranks as threads sharing
# the GPU, with the usual channel caps and with the planner's own (no NCCL_MAX_NCHANNELS);
# then every single-process GPU test on 2 ranks (the refactored loop, the step presets).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F='*LlFlagsWrap*:*TwoCommunicators*:*LeanAndGeneral*'
gtests 2 "$F" 120
mv $W/t_2.log $W/t_2_wrap.log
gtests 3 "$F" 120
mv $W/t_3.log $W/t_3_wrap.log
env -u NCCL_MAX_NCHANNELS MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 MCCL_TIMEOUT=10 \
  timeout 120 $B/mccl_gpu_tests --gtest_filter="$F" > $W/t_2_planner.log 2>&1
res "tests 2 ranks, planner's channels" $? $W/t_2_planner.log
grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/t_2_planner.log >> $T
gtests 2 "*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" 300
cp $T $OUT/call3_tests.txt
finish call3
