#!/usr/bin/env bash
# Call 2 (one H200, ranks as threads sharing it): call 1's two changes apart. Variant C
# (pack folder C/): the block's first work waits for the kernel before (PDL) in open(),
# right before its loads, so only the work's arithmetic runs before the wait; variant B
# (B/): main with only the units' claim moved to the posting warp. Against main (old/),
# Simple 256 KiB - 16 MiB, MCCL_PDL=0 and 2, five rounds interleaved; A/: the same library as
# old/ in another folder, the harness's control.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for r in 1 2 3 4 5; do
  for pdl in 0 2; do
    for v in old A C B; do
      [ $SECONDS -lt 500 ] || continue
      tb s$pdl $v $r "-r 2 -b 256K -e 16M -f 4 -n 50 -G 10 -o allreduce,reducescatter,allgather,broadcast,sendrecv" NCCL_PROTO=Simple MCCL_PDL=$pdl
    done
  done
done
finish call2 s0 s2
