#!/usr/bin/env bash
# Call 1 (one GPU): main with the kernel parameters' hot fields first (DevComm, DevWork: the
# lean LL kernel's reads in three constant lines, were six), against main before it
# (.carry/ab/base). First the GPU suites that main's merged host group path (ncclGroupEnd runs
# a one-communicator group in place, GPU communicators' groups too) had not met: the
# single-process tests of groups, repeated calls and the LL kernels on 2 ranks as threads,
# the MPI GPU tests and the preload suite on two processes under MPS; the lean kernel's SASS.
# The timings against base are call 2's, on the same warm machine (the pack would not fit
# the device tool's 64 MiB with both builds of libmccl in it).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
SECONDS=0
F="GpuSingleProcess.RepeatedEager*:GpuSingleProcess.PointToPoint*:GpuSingleProcess.SelfSendRecv*"
F="$F:GpuSingleProcess.AlltoAll*:GpuSingleProcess.OneThreadGroups*:GpuSingleProcess.LoneCalls*"
F="$F:GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.LeanLl*:GpuSingleProcess.LeanAndGeneral*"
F="$F:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol:GpuSingleProcess.GraphCaptureReplayedThousandTimes"
F="$F:GpuSingleProcess.LlFlagsWrapPast2To32Steps:GpuSingleProcess.CallsQueuedBehindATimeoutStopWithIt"
gtests 2 "$F" 170
echo "(single process, 2 ranks: ${SECONDS} s)" >> $T
mpsStart
SECONDS=0
mpitests '*' 150
echo "(MPI np 2: ${SECONDS} s)" >> $T
preload 2 60
mpsStop
/usr/local/cuda/bin/cuobjdump -sass $L/libmccl.so.0 2>&1 |
  awk '/Function :/ {on = ($0 ~ /llLeanKernelIfLb1ELi1E/)} on' | head -900 > $W/sass_new.txt
grep -oE 'c\[0x0\]\[0x[0-9a-f]+\]' $W/sass_new.txt | sort -u | tr '\n' ' ' > $W/sass_params.txt
echo "new lean kernel's parameter offsets: $(cat $W/sass_params.txt)" >> $T
finish call1
