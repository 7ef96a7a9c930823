#!/usr/bin/env bash
# Call 1 (two GPUs): the Simple kernel's posting warp (a sending work's last warp fences and
# posts the tails while the other warps move the next step; MCCL_SIMPLE_POST_WARP=0: every
# thread moves and thread 32 posts, as before). Tests first (every single-process GPU test;
# the Simple-kernel tests again with the knob off, with 128 and 64 threads, and on three
# ranks sharing one GPU; the MPI collectives and user-buffer tests), then every collective and
# Send/Recv 1 MiB - 2 GiB, post warp on and off, two rounds interleaved; NCCL plain and
# registered once.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is|FAILED' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
S='*SimpleUnits*:*SimpleUnaligned*:*SimpleKernelsAndGeneric*:*PointToPointPatterns*:*AlltoAllGatherScatter*:*CallsQueuedBehindATimeout*'
timeout 300 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.*' > $W/t_single.log 2>&1; res "single process, 2 GPUs, all" $? $W/t_single.log
MCCL_SIMPLE_POST_WARP=0 timeout 150 $B/mccl_gpu_tests --gtest_filter="$S:*EveryTypeOpAndForm*" > $W/t_pw0.log 2>&1; res "single process, post warp off" $? $W/t_pw0.log
NCCL_NTHREADS=128 timeout 150 $B/mccl_gpu_tests --gtest_filter="$S" > $W/t_nt128.log 2>&1; res "single process, 128 threads" $? $W/t_nt128.log
NCCL_NTHREADS=64 timeout 150 $B/mccl_gpu_tests --gtest_filter="$S" > $W/t_nt64.log 2>&1; res "single process, 64 threads" $? $W/t_nt64.log
CUDA_VISIBLE_DEVICES=0 MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 NCCL_MAX_NCHANNELS=8 timeout 150 $B/mccl_gpu_tests --gtest_filter='*SimpleUnits*:*PointToPointPatterns*' > $W/t_shared3.log 2>&1; res "3 ranks sharing one GPU" $? $W/t_shared3.log
MCCL_TEST_QUICK=1 timeout 150 $M -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests --gtest_filter='*UserBuffers*:*CollectivesFromMpiComm*' > $W/t_mpi.log 2>&1; res "MPI np 2 (quick)" $? $W/t_mpi.log
cat $T
P="-b 1M -e 2G -f 4 -t 3 -c 0 -o allreduce,allgather,reducescatter,broadcast,reduce,alltoall,sendrecv"
for round in 1 2; do
  timeout 150 $M $B/mccl-perf $P --csv $W/p_mccl_$round.csv > /dev/null 2>&1
  timeout 150 $M -x MCCL_SIMPLE_POST_WARP=0 $B/mccl-perf $P --csv $W/p_pw0_$round.csv > /dev/null 2>&1
done
timeout 150 $M $B/nccl-perf $P --csv $W/p_nccl_1.csv > /dev/null 2>&1
timeout 150 $M $B/nccl-perf $P -R 1 --csv $W/p_ncclR1_1.csv > /dev/null 2>&1
python3 bench/summary.py $W p_ 2>&1 | tee $W/summary.txt
tar -czf "$OUT/call1.tgz" -C "$W" .
