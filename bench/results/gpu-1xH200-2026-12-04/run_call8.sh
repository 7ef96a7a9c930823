#!/usr/bin/env bash
# Call 8 (one H200, two ranks sharing it as threads; main at fe40eb2): on NCCL's 24
# channels, does LL128 (16 KiB a channel) or Simple take the sizes where the LL cap cost
# most (AllReduce 512 KiB, ReduceScatter 128-256 KiB)? Each protocol forced against the
# planner's choice, 64 KiB - 1 MiB, two rounds.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
A="-r 2 -b 64K -e 1M -f 2 -n 100 -G 10 -o allreduce,reducescatter,allgather,broadcast"
for round in 1 2; do
  tb proto tuner $round "$A"
  tb proto ll $round "$A" NCCL_PROTO=LL
  tb proto ll128 $round "$A" NCCL_PROTO=LL128
  tb proto simple $round "$A" NCCL_PROTO=Simple
done
{
  python3 bench/threads_ab.py $W proto --ref tuner
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call8_summary.txt 2>&1
tar -czf $OUT/call8.tgz -C $W .
