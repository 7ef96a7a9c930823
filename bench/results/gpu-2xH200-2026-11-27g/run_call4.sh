#!/usr/bin/env bash
# Call 4 (4 x H200): the point-to-point FIFO's choice made once at the transport's
# construction (two ranks, or NCCL_P2P_NVL_CHUNKSIZE set) instead of at each plan: the slot
# test on two GPUs and on four, and the point-to-point patterns on two.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
W=$(mktemp -d)
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED|OK \]' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
CUDA_VISIBLE_DEVICES=0,1 timeout 150 $B/mccl_gpu_tests --gtest_filter='*PointToPointFifoSlots*:*PointToPointPatterns*' > $W/t2.log 2>&1; res "single process, 2 GPUs" $? $W/t2.log
timeout 150 $B/mccl_gpu_tests --gtest_filter='*PointToPointFifoSlots*' > $W/t4.log 2>&1; res "single process, 4 GPUs" $? $W/t4.log
cat $T
tar -czf "$OUT/call4.tgz" -C "$W" .
