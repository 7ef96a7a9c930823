#!/usr/bin/env bash
# Call 1: the sparse GPU connection table (a block per peer, pages mapped only behind
# connected peers' blocks; head words in exported blocks of their own; LL credits saved
# by the kernel). The new memory test alone, then every single-process GPU test; small and
# medium sizes against the build before (.carry/ab/main, 6110556) in two interleaved
# rounds, eager and graph-launched, NVIDIA's NCCL alongside.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
LD_LIBRARY_PATH=$L timeout 120 $B/mccl_gpu_tests --gtest_filter='*ConnectionTable*' > $W/test_table.log 2>&1; echo "rc=$?" >> $W/test_table.log
ops=allreduce,allgather,reducescatter,sendrecv
S="-b 8 -e 1M -f 4 -t 3 -c 0 -o $ops"
for round in 1 2; do
  $M -x LD_LIBRARY_PATH=$L/ab/main:$L $B/mccl-perf $S --csv $W/main_$round.csv > $W/main_$round.log 2>&1 || echo "main failed"
  $M -x LD_LIBRARY_PATH=$L $B/mccl-perf $S --csv $W/new_$round.csv > $W/new_$round.log 2>&1 || echo "new failed"
done
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf $S --csv $W/nccl.csv > $W/nccl.log 2>&1 || echo "nccl failed"
G="-b 8 -e 64K -f 8 -t 3 -c 0 -o allreduce -G 100"
$M -x LD_LIBRARY_PATH=$L/ab/main:$L $B/mccl-perf $G --csv $W/main_graph.csv > $W/main_graph.log 2>&1 || echo "main graph failed"
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf $G --csv $W/new_graph.csv > $W/new_graph.log 2>&1 || echo "new graph failed"
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf $G --csv $W/nccl_graph.csv > $W/nccl_graph.log 2>&1 || echo "nccl graph failed"
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 4M -f 8 -c 1 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv > $W/check.log 2>&1; echo "check rc=$?" >> $W/check.log
LD_LIBRARY_PATH=$L timeout 240 $B/mccl_gpu_tests --gtest_filter='-*ConnectionTable*' > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
{ grep -h "connection table\|OK \]\|FAILED" $W/test_table.log; grep -H "rc=\|FAILED\|PASSED\|wrong\|mismatch" $W/*.log | grep -v "OK \]"; } > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call1.tgz" -C "$W" .
