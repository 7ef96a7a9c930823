#!/usr/bin/env bash
# Call 3 (one GPU): the MPI GPU tests call 1 did not reach (its 150 s went to
# CollectivesFromMpiComm, 126-189 s alone under MPS), two processes under MPS: every other
# test, then CollectivesFromMpiComm to 1M elements (MCCL_TEST_QUICK=1).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpsStart
SECONDS=0
mpitests '-GpuMpi.CollectivesFromMpiComm' 200
cp $W/mpi.log $W/mpi_rest.log
echo "(MPI np 2, the rest: ${SECONDS} s)" >> $T
SECONDS=0
MCCL_TEST_QUICK=1 mpitests 'GpuMpi.CollectivesFromMpiComm' 200
echo "(MPI np 2, CollectivesFromMpiComm quick: ${SECONDS} s)" >> $T
mpsStop
finish call3
