#!/usr/bin/env bash
# Call 4 (one GPU): call 3's one failure was the new test's own count of its cases (16, not
# 17; every result agreed with MPI's); the rebuilt preload tests (.carry/new) on 2 and 3
# processes sharing the GPU.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
cp .carry/new/mccl_preload_gpu_tests $B/
timeout 150 $M -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload2.log 2>&1
res "preload suite np 2" $? $W/preload2.log
gtestLines $W/preload2.log >> $T
timeout 150 ${M/-np 2/-np 3} -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload3.log 2>&1
res "preload suite np 3" $? $W/preload3.log
gtestLines $W/preload3.log >> $T
finish call4
