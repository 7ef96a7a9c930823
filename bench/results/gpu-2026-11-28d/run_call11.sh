#!/usr/bin/env bash
# Call 11 (two GPUs, the build with 128 KiB point-to-point steps from 32 MiB on two ranks):
# every single-process GPU test on two GPUs, every MPI GPU test at np 2 (quick), then
# Send/Recv, AlltoAll, Gather, Scatter 8 MiB - 1 GiB against the old rule
# (MCCL_SIMPLE_UNIT_STEPS=4 turns the fine steps off), three rounds interleaved, NCCL
# registered once.
RUN_TIMEOUT=120
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 280 $B/mccl_gpu_tests > $W/t_single.log 2>&1; res "single process, 2 GPUs" $? $W/t_single.log
timeout 200 $M -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests > $W/t_mpi.log 2>&1; res "MPI np 2 (quick)" $? $W/t_mpi.log
cat $T
P="-b 8M -e 1G -f 2 -t 3 -c 0 -o sendrecv,alltoall,gather,scatter"
for r in 1 2 3; do
  run p mccl $r "$P"
  run p old $r "$P" MCCL_SIMPLE_UNIT_STEPS=4
  [ $r = 1 ] && run p ncclR1 $r "$P -R 1"
done
finish call11 p
