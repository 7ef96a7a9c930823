#!/usr/bin/env bash
# Call 1 (build of af8d500, the Simple kernel's unaligned paths): two ranks, the aligned
# large sizes that the change must leave alone, beside NCCL.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
A="-b 16M -e 1G -f 4 -t 1 -w 3 -n 10 -c 0 -o allreduce,reducescatter,allgather"
timeout 40 $M $B/mccl-perf $A -R 0 --csv $W/A_mccl_1.csv > $W/A_mccl.log 2>&1
timeout 40 $M $B/nccl-perf $A -R 0 --csv $W/A_nccl_1.csv > $W/A_nccl.log 2>&1
python3 bench/summary.py $W A_ > $W/summary.txt
tar -czf "$OUT/call1.tgz" -C "$W" .
cat $W/when.txt $W/summary.txt
