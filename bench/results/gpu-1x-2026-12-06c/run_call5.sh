#!/usr/bin/env bash
# Call 5 (one GPU): after the review's mend (the route's staging lambda referenced, not
# wrapped in a std::function that allocated on every routed call): the rebuilt libmccl and
# preload tests (a fresh pack) on 2 and 3 processes sharing the GPU.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
# (the pack itself holds the rebuilt library and tests)
timeout 150 $M -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload2.log 2>&1
res "preload suite np 2" $? $W/preload2.log
gtestLines $W/preload2.log >> $T
timeout 150 ${M/-np 2/-np 3} -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload3.log 2>&1
res "preload suite np 3" $? $W/preload3.log
gtestLines $W/preload3.log >> $T
finish call5
