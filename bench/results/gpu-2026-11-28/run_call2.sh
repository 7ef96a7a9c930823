#!/usr/bin/env bash
# Call 2 (four GPUs): the posting warp on four ranks, where the chains (Broadcast, Reduce)
# lost most to NCCL. Tests first (single process on four GPUs and on three: the Simple
# kernel's tests, every type, op and form; MPI np 4 quick), then every collective and
# Send/Recv 8 MiB - 1 GiB, post warp on and off, two rounds interleaved; NCCL plain once;
# MCCL_PROFILE per step of a 64 MiB Broadcast, post warp on and off.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; nvidia-smi topo -m; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is|FAILED' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
S='*SimpleUnits*:*SimpleUnaligned*:*SimpleKernelsAndGeneric*:*PointToPointPatterns*:*AlltoAllGatherScatter*:*EveryTypeOpAndForm*'
timeout 200 $B/mccl_gpu_tests --gtest_filter="$S" > $W/t_single4.log 2>&1; res "single process, 4 GPUs" $? $W/t_single4.log
CUDA_VISIBLE_DEVICES=0,1,2 timeout 100 $B/mccl_gpu_tests --gtest_filter='*SimpleUnits*:*PointToPointPatterns*' > $W/t_single3.log 2>&1; res "single process, 3 GPUs" $? $W/t_single3.log
MCCL_TEST_QUICK=1 timeout 120 $M -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests --gtest_filter='*CollectivesFromMpiComm*:*UserBuffers*' > $W/t_mpi4.log 2>&1; res "MPI np 4 (quick)" $? $W/t_mpi4.log
cat $T
P="-b 8M -e 1G -f 2 -t 3 -c 0 -o broadcast,reduce,allreduce,allgather,reducescatter,alltoall,sendrecv"
for round in 1 2; do
  timeout 150 $M $B/mccl-perf $P --csv $W/q_mccl_$round.csv > /dev/null 2>&1
  timeout 150 $M -x MCCL_SIMPLE_POST_WARP=0 $B/mccl-perf $P --csv $W/q_pw0_$round.csv > /dev/null 2>&1
done
timeout 150 $M $B/nccl-perf $P --csv $W/q_nccl_1.csv > /dev/null 2>&1
for pw in 1 0; do
  timeout 60 $M -x MCCL_SIMPLE_POST_WARP=$pw -x MCCL_PROFILE=1 -x MCCL_PDL=0 $B/mccl-perf -b 64M -e 64M -t 1 -w 5 -n 50 -c 0 -o broadcast > $W/prof_pw$pw.log 2>&1
done
{ python3 bench/summary.py $W q_
  for pw in 1 0; do echo "### profile 64 MiB Broadcast, post warp $pw"; grep -a "mccl profile" $W/prof_pw$pw.log | sort | head -24; done; } > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call2.tgz" -C "$W" .
