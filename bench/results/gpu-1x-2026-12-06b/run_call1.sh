#!/usr/bin/env bash
# Call 1 (one GPU, processes sharing it): libmccl_mpi after the review mends of 2026-12-06
# (a thread's last stream kept while no communicator changes, destroyed communicators'
# streams destroyed, MCCL_ERR on a failed communicator) and MCCL_MPI_NONBLOCKING. The whole
# preload suite on 2 and 3 processes; the nonblocking test again under
# MCCL_MPI_NONBLOCKING=0 (on this machine's MPI, not CUDA-aware, each call then runs to its
# end inside it and its request is complete when handed out); micro_mpi_tiny on 2 processes
# for the record (time slices of one GPU: no goal figure).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for np in 2 3; do
  P="${M/-np 2/-np $np} -x MCCL_SHARED_GPU=2"
  timeout 200 $P $B/mccl_preload_gpu_tests > $W/preload$np.log 2>&1
  res "preload suite np $np" $? $W/preload$np.log
  gtestLines $W/preload$np.log >> $T
  timeout 90 $P -x MCCL_MPI_NONBLOCKING=0 -x MCCL_MPI_VERBOSE=1 $B/mccl_preload_gpu_tests \
    --gtest_filter='PreloadGpu.NonblockingCollectivesOnDeviceBuffers' > $W/inCall$np.log 2>&1
  res "nonblocking in the call np $np" $? $W/inCall$np.log
  gtestLines $W/inCall$np.log >> $T
  echo "  paths: $(grep -ao 'MPI_I[a-z_]* [0-9]* B -> [a-zA-Z (]*' $W/inCall$np.log | sed 's/ [0-9]* B//' | sort | uniq -c | tr -s ' ' | tr '\n' ';')" >> $T
  cp $T $OUT/tests.txt
done
MCCL_SHARED_GPU=2 timeout 60 $M -x MCCL_SHARED_GPU $B/micro_mpi_tiny > $W/mpi_tiny.txt 2>&1
echo "micro_mpi_tiny np 2: rc=$?" >> $T; tail -25 $W/mpi_tiny.txt >> $T
finish call1
