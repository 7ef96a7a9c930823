#!/usr/bin/env bash
# Call 1 (one GPU): AllGather, Broadcast, AlltoAll, Gather and Scatter on plain buffers on the
# copy engines (MCCL_PLAIN_CE_MIN_BYTES, NCCL_CTA_POLICY=2; each pair's hosts meeting as a
# user's Send/Recv's do, ipc_transport/p2p_engine.h) and the refactored copy-engine waits
# (ipc_transport/mem_ops.h, not run before), on processes sharing the GPU:
#  - the new test and the copy-engine tests on 2 and 3 processes;
#  - the window collectives under NCCL_CTA_POLICY=2 (plain Scatter may meet there now).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for np in 2 3; do
  NP=$np
  M="${M/-np [0-9]/-np $np}"
  mpitests 'GpuMpi.PlainCollectivesOnTheCopyEngines:GpuMpi.SendRecvOnTheCopyEngines:GpuMpi.CopyEngine*:GpuMpi.AbortReleases*' 170
  cp $W/mpi.log $W/mpi_ce_np$np.log
  cp $T $OUT/tests.txt
done
NP=2
M="${M/-np [0-9]/-np 2}"
M="$M -x NCCL_CTA_POLICY=2" mpitests 'GpuMpi.SymmetricWindowCollectives' 150
cp $W/mpi.log $W/mpi_windows_policy.log
cp $T $OUT/tests.txt
finish call1
