#!/usr/bin/env bash
# Call 10: every single-process GPU test on the last build, 2 GPUs, default tuner.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
W=$(mktemp -d)
timeout 420 $B/mccl_gpu_tests > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
grep -v "^\[mccl rank\|^  " $W/gpu_single.log | grep -h "rc=\|OK \]\|FAILED\|PASSED" > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call10.tgz" -C "$W" summary.txt
