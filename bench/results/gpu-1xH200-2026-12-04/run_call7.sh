#!/usr/bin/env bash
# Call 7 (one H200, two ranks sharing it as threads; main at fe40eb2): the direct kernels of
# symmetric windows on fewer blocks, toward NCCL's 3-9 (issue 13: mccl takes a block a
# 32 KiB of the whole, up to 32): NCCL_MAX_NCHANNELS 32 (the default's most), 16, 8 and 4,
# 64 KiB - 16 MiB, two rounds. The peer's window is in the same GPU here, so this measures
# the kernels' fixed costs and one SM's local copy rate, not NVLink's: what fewer blocks
# cost before a two-GPU machine says what they cost there.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
A="-r 2 -b 64K -e 16M -f 4 -n 50 -G 10 -w -o allreduce,reducescatter,allgather,broadcast"
for round in 1 2; do
  tb win ch32 $round "$A"
  tb win ch16 $round "$A" NCCL_MAX_NCHANNELS=16
  tb win ch8 $round "$A" NCCL_MAX_NCHANNELS=8
  tb win ch4 $round "$A" NCCL_MAX_NCHANNELS=4
done
{
  python3 bench/threads_ab.py $W win --ref ch32
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call7_summary.txt 2>&1
tar -czf $OUT/call7.tgz -C $W .
cat $OUT/call7_summary.txt | head -5
