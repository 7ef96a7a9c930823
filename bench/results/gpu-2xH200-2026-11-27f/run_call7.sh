#!/usr/bin/env bash
# Call 7 (2 x H200): every collective and Send/Recv, 1 MiB - 1 GiB (x4), the default FIFO (4
# slots of 1 MiB) against MCCL_FIFO_SLOTS=8 (8 of 512 KiB), two rounds interleaved, this build.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
P="-b 1M -e 1G -f 4 -t 3 -c 0 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall,gather,scatter"
for round in 1 2; do
  $M $B/mccl-perf $P --csv $W/s_mccl_$round.csv > /dev/null 2>&1
  $M -x MCCL_FIFO_SLOTS=8 $B/mccl-perf $P --csv $W/s_slots8_$round.csv > /dev/null 2>&1
done
python3 bench/summary.py $W s_ 2>&1 | tee $W/summary.txt
tar -czf "$OUT/call7.tgz" -C "$W" .
