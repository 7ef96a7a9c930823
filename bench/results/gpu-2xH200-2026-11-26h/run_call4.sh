#!/usr/bin/env bash
# Call 4: where a Simple launch's time goes at 256 KiB - 2 MiB (its floor: ReduceScatter
# 256 KiB 10.0 us on Simple against 4.2 on LL in call 3), MCCL_PROFILE per size, one
# process pair per size; and LL at 1 MiB beside (NCCL runs LL on 24 channels there, 9.4 us).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32 LD_LIBRARY_PATH=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH -x MCCL_PROFILE=1"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
for op in reducescatter allgather; do
  for s in 256K 1M 2M; do
    for p in Simple LL; do
      [ $p = LL ] && [ $s != 1M ] && continue
      NCCL_PROTO=$p $M -x NCCL_PROTO $B/mccl-perf -b $s -e $s -t 1 -c 0 -n 2000 -w 50 -G 20 -o $op > $W/prof_${op}_${s}_$p.log 2>&1
    done
  done
done
for f in $W/prof_*.log; do echo "== $(basename $f)"; grep -a "rank 0" $f | grep -av "host us"; grep -a "^ *[0-9]" $f | head -2; done > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call4.tgz" -C "$W" .
