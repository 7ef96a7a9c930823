#!/usr/bin/env bash
# Call 2 (two GPUs): steps per channel of large Simple collectives (MCCL_SIMPLE_UNIT_STEPS:
# the units a channel should get before steps shrink below a slot, down to 256 KiB; 4 is
# the rule so far). Call 1 had Broadcast 64 / 128 MiB 0.96 / 0.95x the time in 512 KiB
# steps (NCCL_BUFFSIZE=2 MiB). First the MPI collectives test (every type, op, form, up to
# 64 Mi elements) at 16 steps, then broadcast, reduce, allgather, reducescatter, allreduce,
# sendrecv 8 MiB - 1 GiB at 4, 8, 12, 16 steps, two rounds, NCCL plain and registered.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 170 $M -x MCCL_SIMPLE_UNIT_STEPS=16 $B/mccl_gpu_mpi_tests --gtest_filter='*CollectivesFromMpiComm*:*SendRecvUnits*' > $W/t_mpi.log 2>&1; res "MPI np 2, 16 steps" $? $W/t_mpi.log
cat $T
U="-b 8M -e 1G -f 2 -t 3 -c 0 -o broadcast,reduce,allgather,reducescatter,allreduce,sendrecv"
for r in 1 2; do
  run u mccl $r "$U"
  run u s8 $r "$U" MCCL_SIMPLE_UNIT_STEPS=8
  run u s16 $r "$U" MCCL_SIMPLE_UNIT_STEPS=16
  [ $r = 1 ] || continue
  run u s12 $r "$U" MCCL_SIMPLE_UNIT_STEPS=12
  run u nccl $r "$U"
  run u ncclR1 $r "$U -R 1"
done
timeout 60 $M -x MCCL_SIMPLE_UNIT_STEPS=16 $B/mccl-perf -b 8M -e 256M -f 4 -c 1 -o allreduce > $W/check16.log 2>&1; echo "mccl-perf -c 1 at 16 steps rc=$? $(grep -ci 'wrong\|error\|fail' $W/check16.log) error lines" >> $T
finish call2 u
