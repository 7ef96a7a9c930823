#!/usr/bin/env bash
# Call 4 (one GPU): after the merge of the leaner host group path (ncclGroupEnd runs a
# one-communicator group in place, which GPU communicators' groups take too) and launch
# graphs gated on programmatic dependent launch: the single-process GPU tests on 2 ranks as
# threads (all but the 2^31-element one), the MPI GPU tests on two processes under MPS,
# the preload suite.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
date -u >> $T
SECONDS=0
gtests 2 'GpuSingleProcess.*:-GpuSingleProcess.CountsPast2To31Elements' 280
echo "(single process, 2 ranks: ${SECONDS} s)" >> $T
mpsStart
SECONDS=0
mpitests '*' 200
echo "(MPI np 2: ${SECONDS} s)" >> $T
preload 2 90
mpsStop
finish call4
