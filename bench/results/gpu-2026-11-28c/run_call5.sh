#!/usr/bin/env bash
# Call 5 (two GPUs): Gather's and Scatter's Sends and Recvs marked at neither end (7a93699).
# MPI np 2 (quick): the user-buffer and AlltoAll-family tests; gather / scatter / sendrecv
# 4 - 128 MiB, the build against Send/Recv through the FIFO (MCCL_USER_BUFFERS_SENDRECV_BYTES
# =0), three rounds interleaved.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is|FAILED' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
timeout 100 $M -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests --gtest_filter='*UserBuffers*:*AlltoAll*:*Alltoall*:*Gather*:*Scatter*' > $W/t_mpi2.log 2>&1; res "MPI np 2 (quick)" $? $W/t_mpi2.log
cat $T
P="-b 4M -e 128M -f 2 -t 3 -c 0 -o gather,scatter,sendrecv"
for round in 1 2 3; do
  timeout 40 $M $B/mccl-perf $P --csv $W/g_mccl_$round.csv > /dev/null 2>&1
  timeout 40 $M -x MCCL_USER_BUFFERS_SENDRECV_BYTES=0 $B/mccl-perf $P --csv $W/g_fifo_$round.csv > /dev/null 2>&1
done
python3 bench/summary.py $W g_ > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call5.tgz" -C "$W" .
