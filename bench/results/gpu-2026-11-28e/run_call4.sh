#!/usr/bin/env bash
# Call 4 (every GPU of the host): the build whose LL reads reload only the lines not yet
# written, together (llReadBatch), after calls 1-3's build (lines loaded together once, then
# each stale one spun on alone). The tests of call 1 again, and the type/op/form test with
# LL forced on four ranks sharing the GPUs (MCCL_TEST_RANKS=4).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 280 $B/mccl_gpu_tests > $W/t_single.log 2>&1; res "single process, every GPU" $? $W/t_single.log
NCCL_PROTO=LL timeout 150 $B/mccl_gpu_tests --gtest_filter='*EveryTypeOpAndForm:*LeanAndGeneral*:*GraphCaptureReplayed*' > $W/t_single_ll.log 2>&1
res "single process, every GPU, LL forced" $? $W/t_single_ll.log
MCCL_TEST_RANKS=4 NCCL_PROTO=LL timeout 140 $B/mccl_gpu_tests --gtest_filter='*EveryTypeOpAndForm' > $W/t_single_ll4.log 2>&1
res "single process, 4 ranks on the GPUs, LL forced" $? $W/t_single_ll4.log
finish call4
