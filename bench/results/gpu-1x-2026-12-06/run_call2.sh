#!/usr/bin/env bash
# Call 2 (one GPU, processes sharing it; 448 s of device time left): after call 1's two
# findings. The new preload test (and the first of the suite) on
# 2 and 3 processes (the nonblocking test now makes each new communicator's mccl communicator
# with a call in the same order on every rank first: call 1 hung there, the first calls on
# two new communicators in opposite orders making their communicators in opposite orders);
# the plain copy-engine collectives on 3 and 2 processes (a group's collective-made Sends and
# Recvs now go before the user's: call 1's round-0 failures were the FIFO fallback matching an
# AllGather's transfer with a user's Recv).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for np in 2 3; do
  # A hang's stacks (gdb, where the machine has it) 50 s in, before the timeout's kill.
  ( sleep 50; for p in $(pgrep -f mccl_preload_gpu_tests); do
      command -v gdb > /dev/null && timeout 20 gdb -p $p -batch -ex 'thread apply all bt 14' > $W/stack${np}_$p.txt 2>&1
    done ) &
  MCCL_SHARED_GPU=2 timeout 70 ${M/-np 2/-np $np} -x MCCL_SHARED_GPU $B/mccl_preload_gpu_tests \
    --gtest_filter='PreloadGpu.NonblockingCollectivesOnDeviceBuffers:PreloadGpu.DeviceBuffersGoToMcclWithMpiResults' \
    > $W/preload$np.log 2>&1
  res "preload np $np sharing the GPU" $? $W/preload$np.log
  gtestLines $W/preload$np.log >> $T
  cp $T $OUT/tests.txt
done
for np in 3 2; do
  NP=$np
  M="${M/-np [0-9]/-np $np}"
  mpitests 'GpuMpi.PlainCollectivesOnTheCopyEngines:GpuMpi.SendRecvOnTheCopyEngines' 90
  cp $W/mpi.log $W/mpi_np$np.log
  cp $T $OUT/tests.txt
done
finish call2
