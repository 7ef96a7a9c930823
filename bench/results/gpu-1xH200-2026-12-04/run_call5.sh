#!/usr/bin/env bash
# Call 5 (one H200, two ranks sharing it as threads): the branch as it lands (Send/Recv up
# to four lines a thread in the lean kernel) against main, 64 KiB - 1 MiB, two rounds; the
# lean-kernel GPU tests on 2 ranks again.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
A="-r 2 -b 64K -e 1M -f 2 -n 100 -G 10 -o allreduce,reducescatter,allgather,broadcast,sendrecv"
for round in 1 2; do
  tb fin main $round "$A"
  tb fin new $round "$A"
done
gtests 2 '*Lean*:*Alternate*:*Graph*' 120
{
  cat $T
  python3 bench/threads_ab.py $W fin --ref main
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call5_summary.txt 2>&1
tar -czf $OUT/call5.tgz -C $W .
cat $OUT/call5_summary.txt | head -12
