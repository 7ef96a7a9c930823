#!/usr/bin/env bash
# Call 2 (one GPU): call 1 found the new test's other ranks aborting while rank 0 still
# waited (the watchdog then let rank 0 go after 1.2 s as a lost peer, not the timeout); they
# now wait in MPI_Barrier. The rebuilt MPI GPU tests (.carry/new) on the copy-engine subset,
# 2 and 3 processes sharing the GPU.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
xz -dk .carry/new/mccl_gpu_mpi_tests.xz && cp .carry/new/mccl_gpu_mpi_tests $B/
F='GpuMpi.CopyEngine*:GpuMpi.AbortReleases*:GpuMpi.SendRecvOnTheCopyEngines:GpuMpi.PlainCollectivesOnTheCopyEngines'
mpitests "$F" 150
cp $W/mpi.log $W/mpi_ce_np2.log
NP=3
M=${M/-np 2/-np 3}
mpitests "$F" 150
cp $W/mpi.log $W/mpi_ce_np3.log
finish call2
