#!/usr/bin/env bash
# Call 1 (every GPU of the host): the LL loops reading a thread's lines together
# (llReadLines) and the lean LL kernel reading every peer's line together (llReadPeersLine),
# the tests: every single-process GPU test on the host's GPUs, and the type/op/form, lean-and-
# general and graph-replay tests with LL forced.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 330 $B/mccl_gpu_tests > $W/t_single.log 2>&1; res "single process, every GPU" $? $W/t_single.log
NCCL_PROTO=LL timeout 200 $B/mccl_gpu_tests --gtest_filter='*EveryTypeOpAndForm:*LeanAndGeneral*:*GraphCaptureReplayed*' > $W/t_single_ll.log 2>&1
res "single process, every GPU, LL forced" $? $W/t_single_ll.log
finish call1
