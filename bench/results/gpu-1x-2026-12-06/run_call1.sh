#!/usr/bin/env bash
# Call 1 (one GPU, processes sharing it: correctness only). The preload's suite with the new
# nonblocking forms (PreloadGpu.NonblockingCollectivesOnDeviceBuffers) on 2 and 3 processes;
# then 2026-12-05d's check never run there: the plain copy-engine collectives after their test
# set its buffers on its stream, on 3 and 2 processes; then the whole MPI GPU suite on 2.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for np in 2 3; do
  MCCL_SHARED_GPU=2 timeout 120 ${M/-np 2/-np $np} -x MCCL_SHARED_GPU $B/mccl_preload_gpu_tests > $W/preload$np.log 2>&1
  res "preload np $np sharing the GPU" $? $W/preload$np.log
  gtestLines $W/preload$np.log >> $T
done
cp $T $OUT/tests.txt
for np in 3 2; do
  NP=$np
  M="${M/-np [0-9]/-np $np}"
  mpitests 'GpuMpi.PlainCollectivesOnTheCopyEngines:GpuMpi.SendRecvOnTheCopyEngines' 90
  cp $W/mpi.log $W/mpi_plain_np$np.log
  cp $T $OUT/tests.txt
done
mpitests 'GpuMpi.*:-GpuMpi.PlainCollectivesOnTheCopyEngines:GpuMpi.SendRecvOnTheCopyEngines' 240
cp $W/mpi.log $W/mpi_all.log
cp $T $OUT/tests.txt
finish call1
