#!/usr/bin/env bash
# Call 2 (one H200, ranks as threads sharing it): more of the GPU tests on the build of call 1:
# LL128 and the generic kernel alternating, groups, graphs replayed, two communicators on
# one stream (2 ranks); the two-shot LL128 AllReduce of every type, operator and form (3).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F2='GpuSingleProcess.Ll128KernelsAndGenericAlternateOnOneCommunicator:GpuSingleProcess.LeanAndGeneralLlKernelsAlternateOnOneCommunicator:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol:GpuSingleProcess.GraphCaptureReplayedThousandTimes:GpuSingleProcess.CollectivesChainedOnOneStreamReadEachOthersResults:GpuSingleProcess.OneThreadGroupsAcrossDevicesAndAggregation'
F3='GpuSingleProcess.Ll128TwoShotAllReduceEveryTypeOpAndForm:GpuSingleProcess.Ll128KernelsAndGenericAlternateOnOneCommunicator'
for run in "2:$F2" "3:$F3"; do
  nr=${run%%:*} f=${run#*:}
  [ $SECONDS -lt 400 ] || continue
  env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=$((nr > 2 ? 4 : 16)) timeout 200 $B/mccl_gpu_tests --gtest_filter="$f" > $W/t_$nr.log 2>&1
  res "tests $nr ranks" $? $W/t_$nr.log
  grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/t_$nr.log >> $T
  cp $T $OUT/tests.txt
done
cat $T
