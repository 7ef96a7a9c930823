#!/usr/bin/env bash
# Call 8 (two GPUs): the landed form (one peer's lines read at once, llReadLines; the lean
# kernel's one line a peer read peer after peer, as before; the LL limits of call 7). Tests:
# every single-process GPU test on the two GPUs; the type/op/form test with LL forced on four
# ranks sharing them; every MPI GPU test at np 2 (quick). Then every collective but Reduce
# and Broadcast, Send/Recv and AlltoAll 16 KiB - 2 MiB against the landed build (old/),
# three rounds interleaved, NCCL plain once a round.
RUN_TIMEOUT=120
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 200 $B/mccl_gpu_tests > $W/t_single.log 2>&1; res "single process, 2 GPUs" $? $W/t_single.log
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=4 NCCL_PROTO=LL timeout 120 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm' > $W/t_shared4_ll.log 2>&1
res "4 ranks sharing 2 GPUs, LL forced" $? $W/t_shared4_ll.log
timeout 120 $M -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests > $W/t_mpi.log 2>&1; res "MPI np 2 (quick)" $? $W/t_mpi.log
cat $T
P="-b 16K -e 2M -f 2 -t 3 -c 0 -o allreduce,reducescatter,allgather,sendrecv,alltoall"
for r in 1 2 3; do
  run p mccl $r "$P"
  run p old $r "$P"
  run p nccl $r "$P"
done
finish call8 p
