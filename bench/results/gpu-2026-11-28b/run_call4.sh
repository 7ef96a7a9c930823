#!/usr/bin/env bash
# Call 4 (two GPUs): the landed build (ab/old: 72abb73, the same kernels as bd9f9c2) against
# NCCL on two ranks, the issues' own machine kind: every collective and Send/Recv 1 MiB -
# 2 GiB (issue 13) and 8 B - 1 MiB (issue 12), two rounds of mccl, NCCL plain and
# registered once each.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L/ab/old:$L
M="timeout 150 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
O="-o allreduce,allgather,reducescatter,broadcast,reduce,alltoall,sendrecv -t 3 -c 0"
for set in "l:-b 1M -e 2G -f 4" "s:-b 8 -e 1M -f 8"; do
  n=${set%%:*}; P="${set#*:} $O"
  for round in 1 2; do $M $B/mccl-perf $P --csv $W/${n}_mccl_$round.csv > /dev/null 2>&1; done
  $M $B/nccl-perf $P --csv $W/${n}_nccl_1.csv > /dev/null 2>&1
  $M $B/nccl-perf $P -R 1 --csv $W/${n}_ncclR1_1.csv > /dev/null 2>&1
done
{ python3 bench/summary.py $W l_; python3 bench/summary.py $W s_; } > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call4.tgz" -C "$W" .
