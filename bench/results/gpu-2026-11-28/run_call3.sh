#!/usr/bin/env bash
# Call 3 (four GPUs): four-rank Broadcast and Reduce by the step of the chain. Call 2's
# profile: a 64 MiB Broadcast gives each of 24 blocks 5.3 steps of 512 KiB, and a chain of
# four ranks fills over two of them, so the pipeline's fill is about a quarter of the time.
# Smaller steps through the knobs that set the slot (the chain steps half a slot):
# NCCL_BUFFSIZE 2 MiB (4 slots of 512 KiB: 256 KiB steps), 1 MiB (128 KiB steps),
# MCCL_FIFO_SLOTS=8 (8 slots of 512 KiB: 256 KiB steps, 8 in flight); 256 KiB steps with the
# posting warp off; default; two rounds interleaved; NCCL once.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L
M="timeout 100 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
P="-b 8M -e 1G -f 2 -t 3 -c 0 -o broadcast,reduce"
for round in 1 2; do
  $M $B/mccl-perf $P --csv $W/s_mccl_$round.csv > /dev/null 2>&1
  $M -x NCCL_BUFFSIZE=2097152 $B/mccl-perf $P --csv $W/s_b2M_$round.csv > /dev/null 2>&1
  $M -x NCCL_BUFFSIZE=1048576 $B/mccl-perf $P --csv $W/s_b1M_$round.csv > /dev/null 2>&1
  $M -x MCCL_FIFO_SLOTS=8 $B/mccl-perf $P --csv $W/s_slots8_$round.csv > /dev/null 2>&1
  $M -x NCCL_BUFFSIZE=2097152 -x MCCL_SIMPLE_POST_WARP=0 $B/mccl-perf $P --csv $W/s_b2Mpw0_$round.csv > /dev/null 2>&1
done
$M $B/nccl-perf $P --csv $W/s_nccl_1.csv > /dev/null 2>&1
python3 bench/summary.py $W s_ > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call3.tgz" -C "$W" .
