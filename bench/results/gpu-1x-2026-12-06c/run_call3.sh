#!/usr/bin/env bash
# Call 3 (one GPU, processes sharing it): libmccl_mpi's host copies for calls mccl has no
# kernel for, on this machine's MPI without CUDA support (before: a crash inside it): the
# preload suite on 2 and 3 processes; the windowed collectives' MPI test on 3 (a Broadcast
# by size on the copy engines now only on two ranks) and the copy-engine tests on 2.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 150 $M -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload2.log 2>&1
res "preload suite np 2" $? $W/preload2.log
gtestLines $W/preload2.log >> $T
timeout 150 ${M/-np 2/-np 3} -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload3.log 2>&1
res "preload suite np 3" $? $W/preload3.log
gtestLines $W/preload3.log >> $T
timeout 60 $M -x MCCL_SHARED_GPU=2 -x MCCL_MPI_VERBOSE=1 $B/mccl_preload_gpu_tests \
  --gtest_filter='*HostCopies' > $W/staged.log 2>&1
res "staged calls, verbose, np 2" $? $W/staged.log
grep -a 'rank 0\]' $W/staged.log | sed 's/^.*\] //' | sort | uniq -c > $W/staged_calls.txt
cp $T $OUT/tests.txt
mpitests 'GpuMpi.CopyEngine*:GpuMpi.SendRecvOnTheCopyEngines:GpuMpi.PlainCollectivesOnTheCopyEngines' 120
NP=3
M=${M/-np 2/-np 3}
mpitests 'GpuMpi.SymmetricWindowCollectives:GpuMpi.CopyEngineWaitsEndAfterTheTimeout' 150
finish call3
