#!/usr/bin/env bash
# Call 2 (one GPU): a user's Send/Recv on the copy engines (MCCL_P2P_CE_MIN_BYTES,
# ipc_transport/p2p_engine.h), on processes sharing the GPU:
#  - GpuMpi.SendRecvOnTheCopyEngines on 2 and 3 processes (every pattern, reused buffers,
#    groups split differently on the two ends, a Send whose Recv never comes then abort);
#  - the MPI GPU suite on 2 processes but its longest test (the planner's new hook);
#  - mccl-perf Send/Recv and AlltoAll 1 MiB - 256 MiB (runs through; mccl-perf checks only AllReduce), on
#    the copy engines from 1 MiB and on the SMs (0): a check, not a timing (time slices).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for np in 2 3; do
  NP=$np
  M="${M/-np [0-9]/-np $np}"
  mpitests 'GpuMpi.SendRecvOnTheCopyEngines' 120
  cp $W/mpi.log $W/mpi_p2pce_np$np.log
done
NP=2
M="${M/-np [0-9]/-np 2}"
cp $T $OUT/tests.txt
mpitests 'GpuMpi.*-GpuMpi.CollectivesFromMpiComm' 200
cp $W/mpi.log $W/mpi_rest.log
cp $T $OUT/tests.txt
A="-o sendrecv,alltoall -b 1M -e 256M -f 4 -n 5 -w 2 -t 1"
run p2p mccl 1 "$A" MCCL_SHARED_GPU=2 MCCL_P2P_CE_MIN_BYTES=1M MCCL_DUMP_SCHEDULE=0
run p2p sms 1 "$A" MCCL_SHARED_GPU=2 MCCL_P2P_CE_MIN_BYTES=0
grep -ahi 'mismatch\|wrong\|error\|fail' $W/p2p_*.log | head -20 >> $T
finish call2 p2p
