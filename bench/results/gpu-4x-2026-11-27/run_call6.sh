#!/usr/bin/env bash
# Call 6 (call 5's build): where a three-rank ReduceScatter of unaligned blocks loses its
# time (MCCL_PROFILE: per step, waiting against moving), 64 MiB with blocks of 16-byte
# multiples (67108800 B) against not (67108860 B), AllGather beside.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 3 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L -x CUDA_VISIBLE_DEVICES=0,1,2"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
for op in reducescatter allgather; do
  for b in 67108800 67108860; do
    timeout 40 $M -x MCCL_PROFILE=1 $B/mccl-perf -b $b -e $b -t 1 -w 3 -n 20 -c 0 -o $op > $W/prof_${op}_$b.log 2>&1
  done
done
for b in 67108800 67108860; do
  timeout 40 $M -x MCCL_SIMPLE_KERNEL=0 $B/mccl-perf -b $b -e $b -t 1 -w 3 -n 20 -c 0 -o reducescatter > $W/generic_$b.log 2>&1
done
tar -czf "$OUT/call6.tgz" -C "$W" .
for f in $W/*.log; do echo "== $(basename $f)"; tr '\r' '\n' < $f | grep -aE "^ +[0-9]+ |rank 0" ; done
