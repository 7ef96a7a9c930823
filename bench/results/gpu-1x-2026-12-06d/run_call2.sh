#!/usr/bin/env bash
# Call 2 (one GPU): after fdda7ca (completion calls given no request array while a staged
# request lives return MPI's error; the staged test checks that misuse on device buffers
# too; the collectives the route does not take staged as well): the preload suite on 2 and
# 3 processes sharing the GPU.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 200 $M -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload2.log 2>&1
res "preload suite np 2" $? $W/preload2.log
gtestLines $W/preload2.log >> $T
timeout 200 ${M/-np 2/-np 3} -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload3.log 2>&1
res "preload suite np 3" $? $W/preload3.log
gtestLines $W/preload3.log >> $T
finish call2
