#!/usr/bin/env bash
# Call 4 (one GPU, the warm machine of call 3): the MPI GPU suite on 2 processes but its
# two longest tests (CollectivesFromMpiComm, SymmetricWindowCollectives: both passed in call
# 1), and mccl-perf Send/Recv 1-256 MiB on the copy engines (from 1 MiB) and on the SMs.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpitests 'GpuMpi.*-GpuMpi.CollectivesFromMpiComm:GpuMpi.SymmetricWindowCollectives:GpuMpi.MemoryComesBack*' 100
cp $W/mpi.log $W/mpi_rest.log
A="-o sendrecv -b 1M -e 256M -f 4 -n 5 -w 2 -t 1"
run p2p mccl 1 "$A" MCCL_SHARED_GPU=2 MCCL_P2P_CE_MIN_BYTES=1M
run p2p sms 1 "$A" MCCL_SHARED_GPU=2 MCCL_P2P_CE_MIN_BYTES=0
finish call4 p2p
