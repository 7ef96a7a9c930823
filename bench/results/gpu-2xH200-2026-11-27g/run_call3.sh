#!/usr/bin/env bash
# Call 3 (4 x H200): what landed after call 2, against the build before it (8ce5f06,
# .carry/ab/old: point-to-point slots of 512 KiB at any rank count, chains in whole slots):
# point-to-point FIFOs of their own only on two ranks, chains of more than two ranks in
# half-slot steps. Tests first (the slot test on four GPUs and on three; Broadcast and
# Reduce of every type and form), then Broadcast, Reduce, AlltoAll, Send/Recv 8 MiB - 1 GiB,
# two rounds interleaved; NCCL plain once.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="timeout 150 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED|OK \]' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
export LD_LIBRARY_PATH=$L
timeout 200 $B/mccl_gpu_tests --gtest_filter='*PointToPointFifoSlots*:*EveryTypeOpAndForm*' > $W/t_single4.log 2>&1; res "single process, 4 GPUs" $? $W/t_single4.log
CUDA_VISIBLE_DEVICES=0,1,2 timeout 150 $B/mccl_gpu_tests --gtest_filter='*PointToPointFifoSlots*' > $W/t_single3.log 2>&1; res "single process, 3 GPUs" $? $W/t_single3.log
cat $T
P="-b 8M -e 1G -f 2 -t 3 -c 0 -o broadcast,reduce,alltoall,sendrecv"
for round in 1 2; do
  $M -x LD_LIBRARY_PATH=$L $B/mccl-perf $P --csv $W/q_mccl_$round.csv > /dev/null 2>&1
  $M -x LD_LIBRARY_PATH=$L/ab/old:$L $B/mccl-perf $P --csv $W/q_old_$round.csv > /dev/null 2>&1
done
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf $P --csv $W/q_nccl_1.csv > /dev/null 2>&1
python3 bench/summary.py $W q_ 2>&1 | tee $W/summary.txt
tar -czf "$OUT/call3.tgz" -C "$W" .
