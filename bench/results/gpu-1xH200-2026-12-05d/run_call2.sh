#!/usr/bin/env bash
# Call 2 (one GPU, a fresh machine): the new test again after its buffers were set on its
# stream (call 1's mixed-group failures: a cudaMemset on the legacy stream landed after the
# peers' copies) on 2 and 3 processes, the whole MPI GPU suite on 2 processes, then mccl-perf
# AllGather, Broadcast and AlltoAll on plain buffers 1-256 MiB, on the copy engines from 1 MiB
# ("ce", MCCL_PLAIN_CE_MIN_BYTES=1M) against the default ("sms"), two processes time-slicing
# one GPU: a check that the path runs call after call, not a two-GPU figure.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for np in 3 2; do
  NP=$np
  M="${M/-np [0-9]/-np $np}"
  mpitests 'GpuMpi.PlainCollectivesOnTheCopyEngines:GpuMpi.SendRecvOnTheCopyEngines' 90
  cp $W/mpi.log $W/mpi_plain_np$np.log
  cp $T $OUT/tests.txt
done
mpitests 'GpuMpi.*' 330
cp $W/mpi.log $W/mpi_all.log
cp $T $OUT/tests.txt
A="-o allgather,broadcast,alltoall -b 1M -e 256M -f 4 -n 5 -w 2 -t 1 -c 0"
run ce ce 1 "$A" MCCL_SHARED_GPU=2 MCCL_PLAIN_CE_MIN_BYTES=1M
run ce sms 1 "$A" MCCL_SHARED_GPU=2
finish call2 ce
