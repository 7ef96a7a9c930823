#!/usr/bin/env bash
# Call 4 (one H200, two ranks sharing it as threads): the plain-buffer direct path's band
# again, after 2026-12-03b's faster entry: every size forced (MCCL_PLAIN_DIRECT=2) against
# the FIFO path (=0) and the default band, 128 KiB - 16 MiB (per rank: AllReduce's vector,
# ReduceScatter's received block, AllGather's sent block), two rounds interleaved.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
A="-r 2 -b 128K -e 16M -f 2 -n 100 -G 10 -o allreduce,allreduce_inplace,reducescatter,allgather"
for round in 1 2; do
  tb band fifo $round "$A" MCCL_PLAIN_DIRECT=0
  tb band plain $round "$A" MCCL_PLAIN_DIRECT=2
  tb band dflt $round "$A"
done
{
  python3 bench/threads_ab.py $W band --ref fifo
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call4_summary.txt 2>&1
tar -czf $OUT/call4.tgz -C $W .
cat $OUT/call4_summary.txt
