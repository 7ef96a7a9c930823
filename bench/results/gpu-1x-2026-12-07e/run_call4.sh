#!/usr/bin/env bash
# Call 4 (one GPU, warm after call 3): call 1's single-process GPU tests on 3 ranks as threads.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
SECONDS=0
F="GpuSingleProcess.RepeatedEager*:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.SelfSendRecv*"
F="$F:GpuSingleProcess.AlltoAll*:GpuSingleProcess.OneThreadGroups*:GpuSingleProcess.LoneCalls*"
F="$F:GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.LeanLl*:GpuSingleProcess.LeanAndGeneral*"
F="$F:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol:GpuSingleProcess.GraphCaptureReplayedThousandTimes"
gtests 3 "$F" 200
echo "(single process, 3 ranks: ${SECONDS} s)" >> $T
finish call4
