#!/usr/bin/env bash
# Call 3 (one H200, ranks as threads sharing it): the build landed (main with the units'
# claim on the posting warp, call 2's variant B; MCCL_PDL=2): the GPU tests (2 ranks: every
# single-process test but the 80-rank one; 3 ranks: the Simple, units, unaligned, two-shot,
# point-to-point and chained ones), then against main (old/) at 16-256 MiB, where a launch's
# channels take more units, MCCL_PDL=0 and 2, three rounds interleaved.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F3='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm:GpuSingleProcess.SimpleUnalignedBuffersEveryCollective:GpuSingleProcess.Ll128TwoShotAllReduceEveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.CollectivesChainedOnOneStreamReadEachOthersResults:GpuSingleProcess.PointToPointUnitsBesideCollectiveUnitsInAnyCallOrder'
for run in "2:GpuSingleProcess.*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" "3:$F3"; do
  nr=${run%%:*} f=${run#*:}
  [ $SECONDS -lt 330 ] || continue
  gtests $nr "$f" $((nr > 2 ? 120 : 220))
done
for r in 1 2 3; do
  for pdl in 0 2; do
    for v in old new; do
      [ $SECONDS -lt 540 ] || continue
      tb l$pdl $v $r "-r 2 -b 16M -e 256M -f 4 -n 20 -G 5 -o allreduce,reducescatter,allgather,broadcast,sendrecv" NCCL_PROTO=Simple MCCL_PDL=$pdl
    done
  done
done
finish call3 l0 l2
