#!/usr/bin/env bash
# Call 1 (one H200, two ranks as threads sharing it): the chained-results test with its
# inputs uploaded on the collectives' own stream (it had raced a pageable cudaMemcpy on the
# legacy stream), three times; the new test of counts past 2^31 elements; then every
# single-process GPU test on 2 ranks.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
one() {  # NAME FILTER LIMIT
  env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16 \
    timeout $3 $B/mccl_gpu_tests --gtest_filter="$2" > $W/$1.log 2>&1
  res "$1" $? $W/$1.log
  cp $T $OUT/tests.txt
}
one huge 'GpuSingleProcess.CountsPast2To31Elements' 150
for k in 1 2 3; do one chain_$k 'GpuSingleProcess.CollectivesChainedOnOneStreamReadEachOthersResults' 60; done
[ $SECONDS -lt 300 ] && gtests 2 "GpuSingleProcess.*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers:GpuSingleProcess.CountsPast2To31Elements" $((560 - SECONDS))
finish call1
