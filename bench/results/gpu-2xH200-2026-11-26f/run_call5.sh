#!/usr/bin/env bash
# Call 5: the fix for call 4's +0.18-0.27 us: an LL sender reads its head on the side
# (cp.async at setup, waited for at its last step) instead of a load before its last
# barrier, and a table within one page is allocated whole (MCCL_CONN_TABLE=auto). main
# (.carry/ab/main), the new build (auto: whole at 2 ranks) and the new build with
# MCCL_CONN_TABLE=sparse, interleaved, three rounds, graph and eager; MCCL_PROFILE's LL
# phases; GPU init both libraries; then the memory test and every single-process GPU test.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
G="-b 8 -e 32K -f 8 -t 3 -c 0 -o allreduce,allgather,sendrecv"
for round in 1 2 3; do
  for v in main auto sparse; do
    lp=$L; [ $v = main ] && lp=$L/ab/main:$L
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_CONN_TABLE=$v $B/mccl-perf $G -G 100 --csv $W/graph_${v}_$round.csv > $W/graph_${v}_$round.log 2>&1 || echo "$v graph failed"
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_CONN_TABLE=$v $B/mccl-perf $G -n 1000 --csv $W/eager_${v}_$round.csv > $W/eager_${v}_$round.log 2>&1 || echo "$v eager failed"
  done
  for v in main auto; do
    lp=$L; [ $v = main ] && lp=$L/ab/main:$L
    timeout 60 $M -x LD_LIBRARY_PATH=$lp $B/mccl-init-bench --gpu 7 > $W/init_${v}_$round.log 2>&1 || echo "$v init failed"
  done
done
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf $G -G 100 --csv $W/graph_nccl.csv > $W/graph_nccl.log 2>&1 || echo "nccl graph failed"
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf $G -n 1000 --csv $W/eager_nccl.csv > $W/eager_nccl.log 2>&1 || echo "nccl eager failed"
for v in main auto; do
  lp=$L; [ $v = main ] && lp=$L/ab/main:$L
  $M -x LD_LIBRARY_PATH=$lp -x MCCL_PROFILE=1 $B/mccl-perf -b 8 -e 8 -n 2000 -w 100 -t 1 -c 0 -G 100 -o allreduce > $W/prof_graph_$v.log 2>&1
done
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 4M -f 8 -c 1 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv > $W/check.log 2>&1; echo "check rc=$?" >> $W/check.log
LD_LIBRARY_PATH=$L timeout 100 $B/mccl_gpu_tests --gtest_filter='*ConnectionTable*' > $W/test_table.log 2>&1; echo "rc=$?" >> $W/test_table.log
LD_LIBRARY_PATH=$L timeout 240 $B/mccl_gpu_tests --gtest_filter='-*ConnectionTable*' > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
{ grep -h "LL:" $W/prof_*.log; grep -h "connection table" $W/test_table.log; grep -H "rc=\|FAILED\|PASSED" $W/*.log | grep -v "OK \]"; } > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call5.tgz" -C "$W" .
