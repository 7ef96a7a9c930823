#!/usr/bin/env bash
# Call 3 (two GPUs): the landed rule (a two-rank chain aims at 16 units a channel) against
# the old one (MCCL_SIMPLE_UNIT_STEPS=4), Broadcast and Reduce 8 MiB - 1 GiB, three rounds
# interleaved, NCCL plain and registered; AllReduce / AllGather as controls (same plans).
# First the MPI collectives test at the default (every type, op, form, up to 64 Mi elements).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 170 $M $B/mccl_gpu_mpi_tests --gtest_filter='*CollectivesFromMpiComm*:*UniqueIdPathAndGraph*' > $W/t_mpi.log 2>&1; res "MPI np 2" $? $W/t_mpi.log
cat $T
U="-b 8M -e 1G -f 2 -t 3 -c 0 -o broadcast,reduce"
C="-b 32M -e 256M -f 2 -t 3 -c 0 -o allreduce,allgather"
for r in 1 2 3; do
  run u mccl $r "$U"
  run u s4 $r "$U" MCCL_SIMPLE_UNIT_STEPS=4
  [ $r = 1 ] || continue
  run u nccl $r "$U"
  run u ncclR1 $r "$U -R 1"
  run c mccl $r "$C"
  run c s4 $r "$C" MCCL_SIMPLE_UNIT_STEPS=4
done
finish call3 u c
