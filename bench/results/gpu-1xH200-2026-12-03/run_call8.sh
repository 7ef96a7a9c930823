#!/usr/bin/env bash
# Call 8 (one H200): GpuPlainDirect.GraphReplay again on 2 and 3 ranks as threads sharing
# the GPU, its path check made right for three ranks (call 7: the data right everywhere, but
# the test expected a one-shot AllReduce that is two-shot beyond two ranks at 3.5 MiB).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for nr in 2 3; do
  env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr MCCL_TIMEOUT=10 timeout 60 $B/mccl_gpu_tests \
    --gtest_filter='GpuPlainDirect.GraphReplay' > $W/graph_$nr.log 2>&1
  res "graph $nr ranks" $? $W/graph_$nr.log
done
cp $T $OUT/call8_tests.txt
cat $T
