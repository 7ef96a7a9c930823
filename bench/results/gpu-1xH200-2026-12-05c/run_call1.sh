#!/usr/bin/env bash
# Call 1 (one GPU): the copy engines' barriers as stream memory operations (MCCL_CE_SYNC=1,
# ipc_transport/ce_sync.h), on processes sharing the GPU (the copy-engine path is open to
# processes, closed to threads of one process sharing a GPU):
#  - the new tests (every result, two barriers a launch and no kernel; abort lets a stream
#    go whose peers never came) on 2 and 3 processes;
#  - the window collectives under NCCL_CTA_POLICY=2 (every copy-engine case on the new
#    barriers), then the whole MPI GPU suite on 2 processes (abort, revoke, shrink);
#  - mccl-perf on windows under the zero-CTA policy, memory-operation barriers ("mccl")
#    against the barrier kernel ("kernel", MCCL_CE_SYNC=0), three rounds alternating.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for np in 2 3; do
  NP=$np
  M="${M/-np [0-9]/-np $np}"
  mpitests 'GpuMpi.CopyEngine*:GpuMpi.AbortReleases*' 120
  cp $W/mpi.log $W/mpi_ce_np$np.log
done
NP=2
M="${M/-np [0-9]/-np 2}"
M="$M -x NCCL_CTA_POLICY=2" mpitests 'GpuMpi.SymmetricWindowCollectives' 150
cp $W/mpi.log $W/mpi_windows_policy.log
cp $T $OUT/tests.txt
mpitests 'GpuMpi.*' 300
cp $W/mpi.log $W/mpi_all.log
cp $T $OUT/tests.txt
A="-R 2 -o allgather,alltoall,broadcast -b 8 -e 64M -f 4 -n 20 -w 5 -t 3 -c 0"
for r in 1 2 3; do
  run ce mccl $r "$A" MCCL_SHARED_GPU=2 NCCL_CTA_POLICY=2 MCCL_CE_SYNC=1
  run ce kernel $r "$A" MCCL_SHARED_GPU=2 NCCL_CTA_POLICY=2 MCCL_CE_SYNC=0
done
finish call1 ce
