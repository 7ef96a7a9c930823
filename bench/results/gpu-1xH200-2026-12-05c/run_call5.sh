#!/usr/bin/env bash
# Call 5 (one GPU): after the shared helpers (ipc_transport/mem_ops.h) took the pages and
# memory operations of both copy-engine waits: their tests again on 2 processes.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpitests 'GpuMpi.CopyEngine*:GpuMpi.AbortReleases*:GpuMpi.SendRecvOnTheCopyEngines' 60
cp $W/mpi.log $W/mpi_np2.log
cp $T $OUT/tests.txt
finish call5
