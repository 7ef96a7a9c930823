#!/usr/bin/env bash
# Call 1 (one H200, ranks as threads sharing it): f24dd84, the Simple kernel's unit loop
# parts shared by runUnits and pieces (the aligned kernels' SASS byte-identical to main's
# 45253f7; the unaligned kernels' code 0-128 bytes longer). The single-process GPU tests on
# 2 ranks (all but the 80-rank one) and 3 (windows, AlltoAll family, Gather, units,
# point-to-point patterns, LL128, unaligned); then against main before (old/), interleaved,
# four rounds: unaligned AllGather and ReduceScatter (a rank's block 8 bytes past a
# multiple of 16, 256 KiB + 8 B times 3 up to 20 MiB: the kernels that changed) and the
# aligned Simple sweep (the same SASS: the control).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
ln -sfn ab/old $B/old
F3='GpuSingleProcess.*Window*:GpuSingleProcess.AlltoAll*:GpuSingleProcess.OneThreadGather*:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.Ll128*:GpuSingleProcess.*Unaligned*'
for run in "2:GpuSingleProcess.*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" "3:$F3"; do
  nr=${run%%:*} f=${run#*:}
  gtests $nr "$f" $((nr > 2 ? 150 : 240))
done
OPS=allreduce,reducescatter,allgather,broadcast,sendrecv,alltoall
for r in 1 2 3 4; do
  for v in old new; do
    [ $SECONDS -lt 530 ] || continue
    tb wide $v $r "-r 2 -b 262152 -e 21234312 -f 3 -n 20 -G 5 -o allgather,reducescatter" NCCL_PROTO=Simple
    [ $r -le 2 ] && tb simple $v $r "-r 2 -b 256K -e 64M -f 4 -n 20 -G 5 -o $OPS" NCCL_PROTO=Simple
  done
done
finish call1 wide simple
