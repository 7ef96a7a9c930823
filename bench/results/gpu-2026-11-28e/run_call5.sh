#!/usr/bin/env bash
# Call 5 (the build of call 4): the MPI collectives test with LL forced (np 2, and np 4 where
# there are four GPUs); every collective and Send/Recv against the landed build (old/:
# dc83a09), the default protocols and LL forced, NCCL plain once a round: two ranks 256 B -
# 4 MiB three rounds, four ranks (where there are four GPUs) 8 B - 4 MiB two rounds; two
# ranks' AllReduce 256 KiB - 2 MiB with LL up to 1 MiB (MCCL_LL_MAX_BYTES), three rounds.
RUN_TIMEOUT=120
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
NG=$(nvidia-smi -L | wc -l)
M4=${M/-np $NP/-np 4}
timeout 120 $M -x MCCL_TEST_QUICK=1 -x NCCL_PROTO=LL $B/mccl_gpu_mpi_tests --gtest_filter='GpuMpi.CollectivesFromMpiComm' > $W/t_mpi_ll.log 2>&1
res "MPI np 2 (quick), LL forced" $? $W/t_mpi_ll.log
if [ "$NG" -ge 4 ]; then
  timeout 150 $M4 -x MCCL_TEST_QUICK=1 -x NCCL_PROTO=LL $B/mccl_gpu_mpi_tests --gtest_filter='GpuMpi.CollectivesFromMpiComm' > $W/t_mpi4_ll.log 2>&1
  res "MPI np 4 (quick), LL forced" $? $W/t_mpi4_ll.log
fi
cat $T
P="-b 256 -e 4M -f 2 -t 3 -c 0 -o allreduce,reducescatter,allgather,broadcast,reduce,sendrecv"
A="-b 256K -e 2M -f 2 -t 3 -c 0 -o allreduce"
for r in 1 2 3; do
  run s mccl $r "$P"
  run s old $r "$P"
  run s mcclLL $r "$P" NCCL_PROTO=LL
  run s oldLL $r "$P" NCCL_PROTO=LL
  run s nccl $r "$P"
  run a mccl $r "$A"
  run a ll1M $r "$A" MCCL_LL_MAX_BYTES=1048576
done
sets="s a"
if [ "$NG" -ge 4 ]; then
  sets="s a q"
  Q="-b 8 -e 4M -f 4 -t 3 -c 0 -o allreduce,reducescatter,allgather,broadcast,reduce,sendrecv"
  for r in 1 2; do
    NP=4 M=$M4 run q mccl $r "$Q"
    NP=4 M=$M4 run q old $r "$Q"
    NP=4 M=$M4 run q mcclLL $r "$Q" NCCL_PROTO=LL
    NP=4 M=$M4 run q oldLL $r "$Q" NCCL_PROTO=LL
    NP=4 M=$M4 run q nccl $r "$Q"
  done
fi
finish call5 $sets
