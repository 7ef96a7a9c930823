#!/usr/bin/env bash
# Call 6 (2 x H200), for the next step: does Send/Recv (both ways) 16 - 256 MiB on the FIFOs
# gain from deeper FIFOs? Knobs only, this build, two rounds interleaved: the default (4 MiB
# FIFO, 4 slots of 1 MiB) | NCCL_BUFFSIZE=8 MiB (8 slots of 1 MiB) | MCCL_FIFO_SLOTS=8 (8 of
# 512 KiB) | NCCL_BUFFSIZE=16 MiB; NCCL registered (its best mode) once.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
P="-b 16M -e 256M -f 2 -t 3 -c 0 -o sendrecv,alltoall"
for round in 1 2; do
  $M $B/mccl-perf $P --csv $W/f_mccl_$round.csv > /dev/null 2>&1
  $M -x NCCL_BUFFSIZE=8388608 $B/mccl-perf $P --csv $W/f_buf8M_$round.csv > /dev/null 2>&1
  $M -x MCCL_FIFO_SLOTS=8 $B/mccl-perf $P --csv $W/f_slots8_$round.csv > /dev/null 2>&1
  $M -x NCCL_BUFFSIZE=16777216 -x MCCL_FIFO_SLOTS=8 $B/mccl-perf $P --csv $W/f_buf16Ms8_$round.csv > /dev/null 2>&1
done
$M $B/nccl-perf $P -R 1 --csv $W/f_ncclR1_1.csv > /dev/null 2>&1
python3 bench/summary.py $W f_ 2>&1 | tee $W/summary.txt
tar -czf "$OUT/call6.tgz" -C "$W" .
