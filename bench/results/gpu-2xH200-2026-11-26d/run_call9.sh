#!/usr/bin/env bash
# Call 9: the committed tree's GPU tests with the new count (1 << 16) + 5 in
# EveryTypeOpAndForm (every type, operator and form, 8 ranks on the two GPUs), the rest of
# the single-process tests, and a 2-rank mccl-perf -c 1 of the reductions at 128 KiB - 1 MiB
# with LL forced.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
LD_LIBRARY_PATH=$L timeout 400 $B/mccl_gpu_tests > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
$M -x LD_LIBRARY_PATH=$L -x NCCL_PROTO=LL $B/mccl-perf -b 128K -e 1M -f 2 -t 1 -o allreduce,reducescatter,reduce -c 1 > $W/check_ll.log 2>&1; echo "rc=$?" >> $W/check_ll.log
grep -h "rc=\|FAILED\|PASSED\|wrong\|mismatch\|OK \]" $W/gpu_single.log $W/check*.log > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call9.tgz" -C "$W" .
