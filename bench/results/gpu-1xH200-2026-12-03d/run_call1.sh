#!/usr/bin/env bash
# Call 1 (one H200, two ranks sharing it as threads; main at 516a3c8): what capping the
# LL-family channels costs the kernels, before any change: the planner's 32 blocks from
# 128 KiB against NCCL_MAX_NCHANNELS 24 (NCCL's LL blocks on 2 x H200 from 512 KiB) and 16
# (NCCL's at 128 KiB), 16 KiB - 1 MiB, two rounds interleaved.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
A="-r 2 -b 16K -e 1M -f 2 -n 100 -G 10 -o allreduce,reducescatter,allgather,broadcast,sendrecv"
for round in 1 2; do
  tb cap ch32 $round "$A"
  tb cap ch24 $round "$A" NCCL_MAX_NCHANNELS=24
  tb cap ch16 $round "$A" NCCL_MAX_NCHANNELS=16
done
{
  python3 bench/threads_ab.py $W cap --ref ch32
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call1_summary.txt 2>&1
tar -czf $OUT/call1.tgz -C $W .
cat $OUT/call1_summary.txt
