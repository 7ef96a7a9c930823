#!/usr/bin/env bash
# Call 1 (one GPU): a launch of two small LL works (a Send/Recv pair, two collectives, a
# collective and a Send or Recv) or of one work on blocks that are not all its own runs the
# lean LL kernel's two-work form from its block index alone (LeanTwoArgs, 416 bytes, no queue
# entry read; was TinyArgs, 672, and each block's queue). The single-process GPU tests that run
# it on 2 and 3 ranks as threads (the new LeanLlTwoWorkGroupsEveryLayout, every type, op and
# form, groups, Send/Recv patterns, graphs replayed 1,000 times, launch graphs, LL flags past
# 2^32); then this build ("new") against main before it ("old", .carry/ab/old), alternating
# in each round: two and three ranks as threads (mccl-threads-bench) in CUDA graphs and eager.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
[ -d .carry/ab/old ] && ln -sfn ab/old .carry/old
F="GpuSingleProcess.LeanLlTwoWorkGroupsEveryLayout:GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.LeanLl*"
F="$F:GpuSingleProcess.LeanAndGeneral*:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol"
F="$F:GpuSingleProcess.GraphCaptureReplayedThousandTimes:GpuSingleProcess.LlFlagsWrapPast2To32Steps"
F="$F:GpuSingleProcess.CallsQueuedBehindATimeoutStopWithIt:GpuSingleProcess.RepeatedEager*"
F="$F:GpuSingleProcess.LoneCalls*:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.OneThreadGroups*"
F="$F:GpuSingleProcess.AlltoAllGatherScatterAlltoAllv:GpuSingleProcess.CollectivesChainedOnOneStream*"
F="$F:GpuSingleProcess.PointToPointUnitsBesideCollectiveUnitsInAnyCallOrder"
SECONDS=0
gtests 2 "$F" 150
cp $W/t_2.log $W/t2.log
gtests 3 "$F" 150
echo "(single process, 2 and 3 ranks: ${SECONDS} s)" >> $T
A="-b 8 -e 32K -f 8 -n 1000 -G 100 -o allreduce,broadcast,sendrecv"
for round in ${ROUNDS:-1}; do
  for v in new old; do
    tb tb2 $v $round "-r 2 $A"
    [ $round = 1 ] && tb tb3 $v $round "-r 3 $A"
  done
done
finish call1 tb2 tb3
