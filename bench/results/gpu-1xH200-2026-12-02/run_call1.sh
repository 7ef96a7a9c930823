#!/usr/bin/env bash
# Call 1 (one H200, ranks as threads sharing it): the kernels with one inlined copy of each
# loop (a Simple kernel's steps through one call of step(), the direct kernels' reductions
# through one reduceOut a operator, an LL128 work's phases in one loop, the generic kernel's
# LL reductions as sum + run-time operator) against main before them (old/). First the
# single-process GPU tests on 2 ranks (all but the 80-rank one) and on 3 ranks (windows,
# AlltoAll family, Gather, units, point-to-point patterns, LL128 two-shot); then mccl-
# threads-bench, old and new interleaved, three rounds: LL 8 B - 64 KiB, LL128 16 KiB -
# 1 MiB, Simple 256 KiB - 64 MiB, windows (direct kernels) 8 B - 4 MiB, and the operators
# and types off the sum/float path (int8 max, double prod: Simple and LL128).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
ln -sfn ab/old $B/old
F3='GpuSingleProcess.*Window*:GpuSingleProcess.AlltoAll*:GpuSingleProcess.OneThreadGather*:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.Ll128*'
for run in "2:GpuSingleProcess.*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" "3:$F3"; do
  nr=${run%%:*} f=${run#*:}
  gtests $nr "$f" $((nr > 2 ? 150 : 240))
done
OPS=allreduce,reducescatter,allgather,broadcast,sendrecv,alltoall
for r in 1 2 3; do
  for v in old new; do
    [ $SECONDS -lt 540 ] || continue
    tb ll $v $r "-r 2 -b 8 -e 64K -f 8 -n 50 -G 10 -o $OPS" NCCL_PROTO=LL
    tb llx $v $r "-r 2 -b 16K -e 1M -f 4 -n 50 -G 10 -o $OPS" NCCL_PROTO=LL128
    tb simple $v $r "-r 2 -b 256K -e 64M -f 4 -n 20 -G 5 -o $OPS" NCCL_PROTO=Simple
    tb win $v $r "-r 2 -b 8 -e 4M -f 8 -n 50 -G 10 -w -o allreduce,reducescatter,allgather,broadcast"
    tb ops $v $r "-r 2 -b 64K -e 16M -f 16 -n 20 -G 5 -d int8 -o allreduce_max,reducescatter_max"
    tb opsd $v $r "-r 2 -b 64K -e 16M -f 16 -n 20 -G 5 -d double -o allreduce_prod,reducescatter_prod"
  done
done
finish call1 ll llx simple win ops opsd
