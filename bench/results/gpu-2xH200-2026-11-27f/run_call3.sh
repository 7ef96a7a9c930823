#!/usr/bin/env bash
# Call 3 (2 x H200): the window tests after their shared parts moved into helpers
# (runWindowCases, scheduleDumpOf): single process on the 2 GPUs, and 2 ranks sharing one.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
W=$(mktemp -d)
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m6 -E 'rank [0-9]+:|Failure|expected|Which is' "$3" | cut -c1-300 >> $T; }
timeout 300 $B/mccl_gpu_tests --gtest_filter='*SymmetricWindows*' > $W/t_single.log 2>&1; res "single process, 2 GPUs" $? $W/t_single.log
CUDA_VISIBLE_DEVICES=0 MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 NCCL_MAX_NCHANNELS=16 timeout 250 $B/mccl_gpu_tests --gtest_filter='*SymmetricWindows*CopyEngines*' > $W/t_shared2.log 2>&1; res "2 ranks sharing one GPU" $? $W/t_shared2.log
cat $T; grep -a "OK \]" $W/t_single.log $W/t_shared2.log
tar -czf "$OUT/call3.tgz" -C "$W" .
