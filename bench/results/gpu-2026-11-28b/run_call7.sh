#!/usr/bin/env bash
# Call 7 (two GPUs, the host of call 6): the thresholds of call 6 from 64 MiB to 1 GiB:
# AlltoAll from 4 / 8 MiB blocks, Send/Recv into the output from 1 MiB; NCCL registered.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L/ab/old:$L
M="timeout 100 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
P="-b 64M -e 1G -f 2 -t 3 -c 0 -o alltoall,sendrecv"
for round in 1 2; do
  $M $B/mccl-perf $P --csv $W/v_mccl_$round.csv > /dev/null 2>&1
  $M -x MCCL_USER_BUFFERS_ALLTOALL_BYTES=4194304 $B/mccl-perf $P --csv $W/v_ata4M_$round.csv > /dev/null 2>&1
  $M -x MCCL_USER_BUFFERS_ALLTOALL_BYTES=8388608 $B/mccl-perf $P --csv $W/v_ata8M_$round.csv > /dev/null 2>&1
  $M -x MCCL_USER_BUFFERS_MIN_BYTES=1048576 $B/mccl-perf $P --csv $W/v_ub1M_$round.csv > /dev/null 2>&1
done
$M $B/nccl-perf $P -R 1 --csv $W/v_ncclR1_1.csv > /dev/null 2>&1
python3 bench/summary.py $W v_ > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call7.tgz" -C "$W" .
