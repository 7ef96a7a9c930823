#!/usr/bin/env bash
# Call 1 (one GPU): the lean LL kernel of one work launched with the communicator and the
# work alone (LeanOneArgs, 264 bytes; was TinyArgs, 672). The GPU tests that run it: 2 and 3
# ranks as threads (every type, op and form; the lean kernels' several-line forms; graphs
# replayed 1,000 times; launch graphs, which now replay either parameter block; LL flags past
# 2^32), the preload suite (libmccl_mpi's graphs of small calls) and the MPI GPU suite
# (MCCL_TEST_QUICK=1) on two processes under MPS. Timings against main before it are call 2's.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.LeanLl*:GpuSingleProcess.LeanAndGeneral*"
F="$F:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol:GpuSingleProcess.GraphCaptureReplayedThousandTimes"
F="$F:GpuSingleProcess.LlFlagsWrapPast2To32Steps:GpuSingleProcess.CallsQueuedBehindATimeoutStopWithIt"
F="$F:GpuSingleProcess.RepeatedEager*:GpuSingleProcess.LoneCalls*:GpuSingleProcess.PointToPointPatterns"
F="$F:GpuSingleProcess.OneThreadGroups*:GpuSingleProcess.AlltoAllGatherScatterAlltoAllv"
SECONDS=0
gtests 2 "$F" 150
cp $W/t_2.log $W/t2.log
gtests 3 "$F" 150
echo "(single process, 2 and 3 ranks: ${SECONDS} s)" >> $T
mpsStart
preload 2 60
SECONDS=0
MCCL_TEST_QUICK=1 mpitests '*' 150
echo "(MPI np 2, quick: ${SECONDS} s)" >> $T
mpsStop
finish call1
