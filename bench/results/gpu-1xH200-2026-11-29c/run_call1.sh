#!/usr/bin/env bash
# Call 1 (one H200, ranks as threads sharing it): the Simple kernel whose first work sets up
# before the PDL wait and whose units' claim is the posting warp's. SASS of the Simple
# kernels (float and data movement) of main and of this build, compiled here alone
# (sk_main.cubin, sk_new.cubin); the GPU tests (2 ranks: every single-process test but the
# 80-rank one; 3 ranks: the Simple, units, unaligned, two-shot, point-to-point and chained
# ones); then old (main's simple_kernel.cu.o in this build) against new, Simple 256 KiB -
# 16 MiB, MCCL_PDL=0 and 2, three rounds interleaved; MCCL_PROFILE start -> first step.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for c in main new; do
  cuobjdump -sass $B/sk_$c.cubin > $W/sass_$c.txt 2>&1 || /usr/local/cuda/bin/cuobjdump -sass $B/sk_$c.cubin > $W/sass_$c.txt 2>&1
done
xz -9 -c $W/sass_main.txt > $OUT/sass_main.txt.xz
xz -9 -c $W/sass_new.txt > $OUT/sass_new.txt.xz
F3='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm:GpuSingleProcess.SimpleUnalignedBuffersEveryCollective:GpuSingleProcess.Ll128TwoShotAllReduceEveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.CollectivesChainedOnOneStreamReadEachOthersResults'
for run in "2:GpuSingleProcess.*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" "3:$F3"; do
  nr=${run%%:*} f=${run#*:}
  [ $SECONDS -lt 330 ] || continue
  gtests $nr "$f" $((nr > 2 ? 120 : 220))
done
for r in 1 2 3; do
  for pdl in 0 2; do
    for v in old new; do
      [ $SECONDS -lt 480 ] || continue
      tb s$pdl $v $r "-r 2 -b 256K -e 16M -f 4 -n 50 -G 10 -o allreduce,reducescatter,allgather,broadcast,sendrecv" NCCL_PROTO=Simple MCCL_PDL=$pdl
    done
  done
done
for pdl in 0 2; do
  for v in old new; do
    lp=$L; [ $v = old ] && lp=$L/old:$L
    for spec in "allreduce 2M" "allreduce 4M" "reducescatter 2M" "sendrecv 4M"; do
      set -- $spec
      [ $SECONDS -lt 540 ] || continue
      echo "== $v Simple $1 $2 PDL=$pdl"
      LD_LIBRARY_PATH=$lp NCCL_PROTO=Simple MCCL_PDL=$pdl MCCL_PROFILE=1 timeout 30 $B/mccl-threads-bench -r 2 -b $2 -e $2 -n 200 -G 0 -o $1 2>&1 | grep -v "^#" | grep -E "^[a-z]|Simple:" | cut -c1-400
    done
  done
done > $W/profile.txt 2>&1
finish call1 s0 s2
cat $W/profile.txt
