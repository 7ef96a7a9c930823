#!/usr/bin/env bash
# Call 3 (one GPU): GpuMpi.SendRecvOnTheCopyEngines again, on 2 and 3 processes sharing the
# GPU, after call 2's hang: one side stream per peer and direction (call 2 waited for every
# arrival of a launch before any end, so rank 1's Send waited for rank 0's Recv, which rank
# 0 had put in its next group, behind its Send).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for np in 2 3; do
  NP=$np
  M="${M/-np [0-9]/-np $np}"
  mpitests 'GpuMpi.SendRecvOnTheCopyEngines:GpuMpi.AbortReleases*' 80
  cp $W/mpi.log $W/mpi_p2pce_np$np.log
done
cp $T $OUT/tests.txt
finish call3
