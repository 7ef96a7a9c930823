#!/usr/bin/env bash
# Call 12 (two GPUs): the single-process test call 11 failed, with its expectation brought
# to the new rule (two ranks' Sends step 128 KiB from 32 MiB, or a smaller slot).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 150 $B/mccl_gpu_tests --gtest_filter='*PointToPointFifoSlotsOfNvlChunkSize*:*PointToPointPatterns*' > $W/t_single.log 2>&1; res "single process, 2 GPUs" $? $W/t_single.log
finish call12
