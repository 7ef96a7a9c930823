#!/usr/bin/env bash
# Call 4: where call 3's +0.3 us (AllReduce 8 B, graph and eager) comes from. main
# (.carry/ab/main), the new build with its sparse table, and the new build with
# MCCL_CONN_TABLE=full (one cudaMalloc'd table: the code without the mapped pages),
# interleaved, three rounds, graph and eager; then MCCL_PROFILE's LL phases at 8 B
# (setup, send, receive, end: where in the kernel) for main and new.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
G="-b 8 -e 4K -f 8 -t 3 -c 0 -o allreduce"
for round in 1 2 3; do
  for v in main sparse full; do
    lp=$L; [ $v = main ] && lp=$L/ab/main:$L
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_CONN_TABLE=$([ $v = full ] && echo full || echo sparse) $B/mccl-perf $G -G 100 --csv $W/graph_${v}_$round.csv > $W/graph_${v}_$round.log 2>&1 || echo "$v graph failed"
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_CONN_TABLE=$([ $v = full ] && echo full || echo sparse) $B/mccl-perf $G -n 2000 --csv $W/eager_${v}_$round.csv > $W/eager_${v}_$round.log 2>&1 || echo "$v eager failed"
  done
done
for v in main sparse; do
  lp=$L; [ $v = main ] && lp=$L/ab/main:$L
  $M -x LD_LIBRARY_PATH=$lp -x MCCL_PROFILE=1 $B/mccl-perf -b 8 -e 8 -n 2000 -w 100 -t 1 -c 0 -o allreduce > $W/prof_$v.log 2>&1
  $M -x LD_LIBRARY_PATH=$lp -x MCCL_PROFILE=1 $B/mccl-perf -b 8 -e 8 -n 2000 -w 100 -t 1 -c 0 -G 100 -o allreduce > $W/prof_graph_$v.log 2>&1
done
grep -h "LL\b\|LL:" $W/prof_*.log | head -20 > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call4.tgz" -C "$W" .
