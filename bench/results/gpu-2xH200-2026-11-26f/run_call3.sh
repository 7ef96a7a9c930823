#!/usr/bin/env bash
# Call 3: is anything slower with the sparse table? Call 1 ran on another host than the last
# session's tests and the single-process tests took 1.3-1.4x longer there (every test,
# windows too), and AllReduce in a graph read 3.87 against 3.56 us (one round each). Here,
# main (6110556, .carry/ab/main) and the new build in the same call, interleaved, three
# rounds: AllReduce 8 B - 32 KiB in a graph of 100 and eager; GPU init (mccl-init-bench,
# both creation orders); and three single-process GPU tests timed with either library.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
G="-b 8 -e 32K -f 8 -t 3 -c 0 -o allreduce"
for round in 1 2 3; do
  for v in main new; do
    lp=$L; [ $v = main ] && lp=$L/ab/main:$L
    $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $G -G 100 --csv $W/graph_${v}_$round.csv > $W/graph_${v}_$round.log 2>&1 || echo "$v graph failed"
    $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $G -n 2000 --csv $W/eager_${v}_$round.csv > $W/eager_${v}_$round.log 2>&1 || echo "$v eager failed"
    timeout 60 $M -x LD_LIBRARY_PATH=$lp $B/mccl-init-bench --gpu 7 > $W/init_${v}_$round.log 2>&1 || echo "$v init failed"
  done
done
F='GpuSingleProcess.LargeBuffers:GpuSingleProcess.Ll128KernelsAndGeneric*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.AlltoAllGather*'
for v in main new main new; do
  lp=$L; [ $v = main ] && lp=$L/ab/main:$L
  LD_LIBRARY_PATH=$lp timeout 60 $B/mccl_gpu_tests --gtest_filter="$F" >> $W/tests_$v.log 2>&1; echo "rc=$?" >> $W/tests_$v.log
done
grep -h "OK \]\|rc=" $W/tests_*.log > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call3.tgz" -C "$W" .
