#!/usr/bin/env bash
# Call 3 (one H200, two ranks sharing it as threads): where the several-line lean form of
# call 2 loses its time (MCCL_PROFILE: the LL phases of each block-step). The same work in
# the one-line form, main's four-line form and this branch's eight-line form:
#   8 KiB AllReduce/AllGather: 2 channels of a line a thread (one) or 1 of two (cb8k);
#   256 KiB AllReduce on 32 channels, two lines a thread: main (U = 4) and new32 (U = 8);
#   512 KiB AllReduce on 24 channels, six lines: the lean form (new) and the general (lines1).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
A8="-r 2 -b 8K -e 8K -n 300 -G 10 -o allreduce,allgather"
A256="-r 2 -b 256K -e 256K -n 300 -G 10 -o allreduce"
A512="-r 2 -b 512K -e 512K -n 300 -G 10 -o allreduce"
tb p8 one 1 "$A8" MCCL_PROFILE=1
tb p8 cb8k 1 "$A8" MCCL_PROFILE=1 MCCL_LL_CHANNEL_BYTES=8192
tb p256 main 1 "$A256" MCCL_PROFILE=1
tb p256 new32 1 "$A256" MCCL_PROFILE=1 MCCL_LL_MAX_CHANNELS=32
tb p512 new 1 "$A512" MCCL_PROFILE=1
tb p512 lines1 1 "$A512" MCCL_PROFILE=1 MCCL_LL_LEAN_LINES=1
for f in $W/p*_*.txt; do echo "== $(basename $f)"; grep -aE "mccl profile: rank 0 LL|^ *(allreduce|allgather)" $f; done > $OUT/call3_summary.txt 2>&1
[ -f $W/errors.txt ] && cat $W/errors.txt >> $OUT/call3_summary.txt
tar -czf $OUT/call3.tgz -C $W .
cat $OUT/call3_summary.txt
