#!/usr/bin/env bash
# Call 2 (one H200, ranks as threads sharing it): the non-lean LL-family kernels' works in one
# function both parameter forms call (llWorks, not inlined; TinyArgs and KernelArgs<8> had
# each inlined it) against main before (old/, b0f23a3). First the single-process GPU tests
# on 2 ranks (all but the 80-rank one) and on 3 (LL128, AlltoAll family, point-to-point,
# windows); then mccl-threads-bench, old and new interleaved, four rounds: LL 8 B - 64 KiB
# and LL128 16 KiB - 1 MiB, every collective, eager and in a graph.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
ln -sfn ab/old $B/old
F3='GpuSingleProcess.Ll128*:GpuSingleProcess.AlltoAll*:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.*Window*:GpuSingleProcess.EveryTypeOpAndForm'
for run in "2:GpuSingleProcess.*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" "3:$F3"; do
  nr=${run%%:*} f=${run#*:}
  gtests $nr "$f" $((nr > 2 ? 150 : 240))
done
OPS=allreduce,reducescatter,allgather,broadcast,sendrecv,alltoall
for r in 1 2 3 4; do
  for v in old new; do
    [ $SECONDS -lt 540 ] || continue
    tb ll $v $r "-r 2 -b 8 -e 64K -f 8 -n 50 -G 10 -o $OPS" NCCL_PROTO=LL
    tb llx $v $r "-r 2 -b 16K -e 1M -f 4 -n 50 -G 10 -o $OPS" NCCL_PROTO=LL128
  done
done
finish call2 ll llx
