#!/usr/bin/env bash
# Call 6: the new test of small collectives chained on one stream (each reading the last
# one's result; MCCL_PDL on and off), 2 ranks on 2 GPUs and 3 ranks sharing them.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
L=$PWD/$B
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
F='--gtest_filter=*Chained*:*LeanAndGeneral*:*GraphCaptureReplayed*'
LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_tests "$F" > $W/chain2.log 2>&1; echo "rc=$?" >> $W/chain2.log
LD_LIBRARY_PATH=$L MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 timeout 120 $B/mccl_gpu_tests '--gtest_filter=*Chained*' > $W/chain3.log 2>&1; echo "rc=$?" >> $W/chain3.log
grep -H "rc=\|OK \]\|FAILED\|PASSED" $W/*.log | tee $W/summary.txt
tar -czf "$OUT/call6.tgz" -C "$W" .
