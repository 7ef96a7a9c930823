#!/usr/bin/env bash
# Call 3 (one H200, two ranks as threads sharing it): what LL and LL128 launches lose with
# NCCL's channel counts. mccl takes 32 channels for LL / LL128 from 128 KiB (planner.cc),
# NCCL 2.28 16-24 there; the same build with NCCL_MAX_NCHANNELS=24 and 16 against its
# default (c32), 64 KiB - 2 MiB, eager and in graphs, three rounds interleaved. On one GPU
# the peers' lines are in local memory, so a round trip is shorter than over NVLink: a
# lower bound of what fewer channels cost there.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
A="-r 2 -b 64K -e 2M -f 2 -n 200 -G 20 -o allreduce,allgather,reducescatter,broadcast"
for r in 1 2 3; do
  tb ch c32 $r "$A"
  tb ch c24 $r "$A" NCCL_MAX_NCHANNELS=24
  tb ch c16 $r "$A" NCCL_MAX_NCHANNELS=16
done
python3 bench/threads_ab.py $W ch --ref c32 > $W/summary.txt 2>&1
[ -f $W/errors.txt ] && cat $W/errors.txt >> $W/summary.txt
cp $W/summary.txt $OUT/call3_summary.txt
tar -czf $OUT/call3.tgz -C $W .
cat $W/summary.txt
