#!/usr/bin/env bash
# Call 4 (one GPU): after the merge of the leaner host group path (ncclGroupEnd runs a
# one-communicator group in place, which GPU communicators' groups take too) and launch
# graphs gated on programmatic dependent launch: the single-process GPU tests of groups and
# repeated calls on 2 ranks as threads, the MPI GPU tests on two processes under MPS, the
# preload suite.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
date -u >> $T
SECONDS=0
gtests 2 'GpuSingleProcess.RepeatedEager*:GpuSingleProcess.PointToPoint*:GpuSingleProcess.SelfSendRecv*:GpuSingleProcess.AlltoAll*:GpuSingleProcess.OneThreadGroups*:GpuSingleProcess.LoneCalls*:GpuSingleProcess.EveryTypeOpAndForm' 100
echo "(single process, 2 ranks: ${SECONDS} s)" >> $T
mpsStart
SECONDS=0
mpitests '*' 70
echo "(MPI np 2: ${SECONDS} s)" >> $T
preload 2 30
mpsStop
finish call4
