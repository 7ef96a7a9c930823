#!/usr/bin/env bash
# Call 1 (one GPU, MPS; two and three processes at once on the GPU):
# 1. the device-API suite (mccl_gpu_devapi_tests) with ncclFindWindow's new test
#    (DevApi.FindWindowAcrossRegistrationsAndTableBlocks) on 2 and 3 processes;
# 2. the whole MPI GPU suite on 3 processes with 300 s (the last call's 120 s ended it inside
#    CollectivesFromMpiComm, no failure printed).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpsStart
for np in 2 3; do
  timeout 120 ${M/-np $NP/-np $np} -x MCCL_SHARED_GPU=2 $B/mccl_gpu_devapi_tests > $W/devapi$np.log 2>&1
  rc=$?
  [ $rc = 124 ] && reap mccl_gpu_devapi_tests
  res "devapi np $np" $rc $W/devapi$np.log
  gtestLines $W/devapi$np.log >> $T
  cp $T $OUT/tests.txt
done
SECONDS=0
NP=3 M=${M/-np 2/-np 3} mpitests '*' 300
mv $W/mpi.log $W/mpi_np3.log
echo "(np 3: ${SECONDS} s)" >> $T
cp $T $OUT/tests.txt
mpsStop
finish call1
