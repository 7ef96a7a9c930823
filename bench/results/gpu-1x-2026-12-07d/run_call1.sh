#!/usr/bin/env bash
# Call 1 (one GPU): launch graphs (MCCL_LAUNCH_GRAPH_BYTES, kernels/launch/launch_graph.h)
# and the lean LL kernel of one work taking its channel from its block index (no queue
# entry loaded: LaunchSpec::channelBlocks). Tests first: the new test, the plan cache's, the
# lean kernels' and the graph tests on 2 ranks as threads, the new and the lean ones on 3.
# Then two ranks as threads of one process (mccl-threads-bench, eager and graph columns),
# alternating, three rounds: the knob at its default ("on") and 0 ("off"); this build
# ("new") against ab/base (launch graphs, the queue entry loaded).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
date -u >> $T
gtests 2 'GpuSingleProcess.RepeatedEagerCallsReplayLaunchGraphs:GpuSingleProcess.Lean*:GpuSingleProcess.LoneCallsReusePlans*:GpuSingleProcess.GraphCaptureReplayedThousandTimes:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.CollectivesChained*:GpuSingleProcess.LlFlagsWrap*:GpuSingleProcess.CallsQueuedBehindATimeoutStopWithIt' 240
gtests 3 'GpuSingleProcess.RepeatedEagerCallsReplayLaunchGraphs:GpuSingleProcess.Lean*:GpuSingleProcess.LoneCallsReusePlans*' 100
A="-r 2 -b 8 -e 1M -f 8 -n 1000 -G 100 -o allreduce,allgather,broadcast,reducescatter,sendrecv"
for round in 1 2 3; do
  tb tbab on $round "$A"
  tb tbab off $round "$A" MCCL_LAUNCH_GRAPH_BYTES=0
  tb tbq base $round "$A"
  tb tbq new $round "$A"
done
finish call1 tbab tbq
