#!/usr/bin/env bash
# Call 2 (one H200, main at dce9275): AlltoAll, Gather and Scatter may now be queued whole
# (DataPath::runsWhole; a GPU data path says no, so they stay Sends and Recvs there): the
# GPU tests again (unit, every single-process test on 2 ranks, the preload tests and the
# AlltoAll-family MPI GPU tests on two processes sharing the GPU). Then where an eager small
# call's host time goes: perf (if the machine has it) over mccl-threads-bench's AllReduce of
# 8 B eager on 1 and on 2 ranks, by library and symbol.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 90 $B/mccl_unit_tests > $W/unit.log 2>&1
res "unit" $? $W/unit.log
gtests 2 "*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" 300
MCCL_SHARED_GPU=2 timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x MCCL_SHARED_GPU \
  -x MCCL_TIMEOUT -x LD_LIBRARY_PATH=$L $B/mccl_preload_gpu_tests > $W/preload.log 2>&1
res "preload np 2 sharing the GPU" $? $W/preload.log
mpitests '*AlltoAll*:*Gather*:*Scatter*' 100
cp $T $OUT/call2_tests.txt
if command -v perf > /dev/null; then
  for r in 1 2; do
    env LD_LIBRARY_PATH=$L MCCL_SHARED_GPU=1 timeout 60 perf record -q -o $W/perf_r$r.data \
      $B/mccl-threads-bench -r $r -b 8 -e 8 -n 20000 -G 0 -o allreduce > $W/perf_r$r.txt 2>&1
    perf report -i $W/perf_r$r.data --no-children --sort dso,sym --percent-limit 0.7 --stdio 2>/dev/null |
      grep -v "^#" | grep -v "^$" | head -60 > $W/perf_r${r}_report.txt
    perf report -i $W/perf_r$r.data --no-children --sort dso --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" |
      head -12 > $W/perf_r${r}_dso.txt
  done
else
  echo "no perf on this machine" > $W/perf_r1_report.txt
fi
for f in $W/perf_r*.txt; do echo "== $(basename $f)"; cat $f; done > $W/perf_summary.txt
cp $W/perf_summary.txt $OUT/
finish call2
