#!/usr/bin/env bash
# Call 3 (one H200, ranks sharing it): the AlltoAll-family graph test now checks from the
# schedule dump that its copies to itself went to the copy engines; and where the engines
# start to pay: AlltoAll, Gather, Scatter of 4 / 8 / 16 MiB total on two ranks (blocks to
# itself of 2 / 4 / 8 MiB), engines at every size (=1) against the kernel (=0), and the
# landed default (8 MiB), three rounds interleaved.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F='GpuSingleProcess.AlltoAllFamilyInGraphCapture:GpuSingleProcess.SelfSendRecvPairsAndBacklog'
gtests 2 "$F" 120
gtests 3 "$F" 120
A="-r 2 -b 4M -e 16M -f 2 -n 50 -G 10 -o alltoall,gather,scatter"
for round in 1 2 3; do
  tb ce kernel $round "$A" MCCL_SELF_COPY_ENGINE_BYTES=0
  tb ce engines $round "$A" MCCL_SELF_COPY_ENGINE_BYTES=1
  tb ce default $round "$A"
done
{
  cat $T
  python3 bench/threads_ab.py $W ce --ref kernel
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call3_summary.txt 2>&1
tar -czf $OUT/call3.tgz -C $W .
cat $OUT/call3_summary.txt
