#!/usr/bin/env bash
# Call 7 (two GPUs): the build to land (calls 4-6's kernels; LL to 512 KiB sent for
# ReduceScatter and for two ranks' Sends and Recvs both ways). Tests: the type/op/form test
# with LL forced on four ranks sharing the two GPUs (MCCL_SHARED_GPU=1: every LL reader with
# three peers), and at the default protocols on three ranks sharing them; every MPI GPU test
# at np 2 (quick). Then ReduceScatter and point-to-point 128 KiB - 2 MiB against the landed
# build (old/: dc83a09, its kernels and its limits), three rounds interleaved, NCCL plain
# once a round.
RUN_TIMEOUT=120
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=4 NCCL_PROTO=LL timeout 180 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm' > $W/t_shared4_ll.log 2>&1
res "4 ranks sharing 2 GPUs, LL forced" $? $W/t_shared4_ll.log
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 timeout 120 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm' > $W/t_shared3.log 2>&1
res "3 ranks sharing 2 GPUs" $? $W/t_shared3.log
timeout 120 $M -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests > $W/t_mpi.log 2>&1; res "MPI np 2 (quick)" $? $W/t_mpi.log
cat $T
P="-b 128K -e 2M -f 2 -t 3 -c 0 -o reducescatter,sendrecv,alltoall,gather,scatter"
for r in 1 2 3; do
  run p mccl $r "$P"
  run p old $r "$P"
  run p nccl $r "$P"
done
finish call7 p
