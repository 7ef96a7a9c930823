#!/usr/bin/env bash
# Call 2: a diagnostic build (not committed: clock64 phase sums of the Simple kernel's
# thread 0 and thread 32, through MCCL_PROFILE's buffer) at 128 KiB with Simple forced
# (Reduce, ReduceScatter, AllReduce: one, two and three dependent steps), 2 MiB and 32 MiB.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt; nvidia-smi -q -d CLOCK | grep -A3 "^    Clocks$\|Max Clocks" >> $W/when.txt
for op in reduce reducescatter allreduce; do
  $M -x LD_LIBRARY_PATH=$L -x MCCL_PROFILE=1 -x NCCL_PROTO=Simple $B/mccl-perf -b 128K -e 128K -n 300 -w 20 -t 1 -c 0 -o $op > $W/diag_${op}_128K.log 2>&1
  $M -x LD_LIBRARY_PATH=$L -x NCCL_PROTO=Simple $B/mccl-perf -b 128K -e 128K -t 3 -c 0 -o $op > $W/time_${op}_128K.log 2>&1
done
for sz in 2M 32M; do
  for op in allreduce allgather reducescatter; do
    $M -x LD_LIBRARY_PATH=$L -x MCCL_PROFILE=1 $B/mccl-perf -b $sz -e $sz -n 200 -w 20 -t 1 -c 0 -o $op > $W/diag_${op}_$sz.log 2>&1
  done
done
grep -h "diag rank 0" $W/diag_*.log | head -3
tar -czf "$OUT/call2.tgz" -C "$W" .
