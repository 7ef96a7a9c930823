#!/usr/bin/env bash
# Call 4 (2 x H200), for the next step: Send/Recv (both ways on 2 ranks), Gather and Scatter
# (one way) 4 MiB - 2 GiB, mccl plain buffers at the default against the user-buffer path
# from 16 MiB (MCCL_USER_BUFFERS_MIN_BYTES=16777216, every Send/Recv), and mccl windows;
# NCCL plain, registered, windows; two rounds for mccl, one for NCCL.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
P="-b 4M -e 2G -f 4 -t 3 -c 0 -o sendrecv,gather,scatter"
for round in 1 2; do
  $M $B/mccl-perf $P -R 0 --csv $W/p_mccl_$round.csv > /dev/null 2>&1
  $M -x MCCL_USER_BUFFERS_MIN_BYTES=16777216 $B/mccl-perf $P -R 0 --csv $W/p_ub16M_$round.csv > /dev/null 2>&1
  $M $B/mccl-perf $P -R 2 --csv $W/p_mR2_$round.csv > /dev/null 2>&1
done
for r in 0 1 2; do $M $B/nccl-perf $P -R $r --csv $W/p_nR${r}_1.csv > /dev/null 2>&1; done
python3 bench/summary.py $W p_ 2>&1 | tee $W/summary.txt
tar -czf "$OUT/call4.tgz" -C "$W" .
