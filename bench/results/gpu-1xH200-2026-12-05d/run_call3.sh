#!/usr/bin/env bash
# Call 3 (one GPU; little device time left after call 2 found no machine): the new test and
# the Send/Recv one after their buffers were set on their stream, on 3 and 2 processes.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for np in 3 2; do
  NP=$np
  M="${M/-np [0-9]/-np $np}"
  mpitests 'GpuMpi.PlainCollectivesOnTheCopyEngines:GpuMpi.SendRecvOnTheCopyEngines' 80
  cp $W/mpi.log $W/mpi_plain_np$np.log
  cp $T $OUT/tests.txt
done
finish call3
