#!/usr/bin/env bash
# Call 1 (one GPU, processes sharing it): the copy engines' waits end by themselves after
# MCCL_TIMEOUT (the host's watch, ipc_transport/mem_ops.h MemOpWatched): the new test and
# every copy-engine MPI GPU test on 2 and 3 processes; then the whole MPI GPU suite and the
# preload suite on 2 (libmccl_mpi's request helper was refactored), as time allows.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F='GpuMpi.CopyEngine*:GpuMpi.AbortReleases*:GpuMpi.SendRecvOnTheCopyEngines:GpuMpi.PlainCollectivesOnTheCopyEngines'
mpitests "$F" 200
cp $W/mpi.log $W/mpi_ce_np2.log
NP=3
M=${M/-np 2/-np 3}
mpitests "$F" 200
cp $W/mpi.log $W/mpi_ce_np3.log
M=${M/-np 3/-np 2}
cp $T $OUT/tests.txt
[ $SECONDS -lt 260 ] && mpitests "GpuMpi.*-$F" 200 && cp $W/mpi.log $W/mpi_all_np2.log
if [ $SECONDS -lt 470 ]; then
  timeout 100 $M -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload2.log 2>&1
  res "preload suite np 2" $? $W/preload2.log
  gtestLines $W/preload2.log >> $T
fi
finish call1
