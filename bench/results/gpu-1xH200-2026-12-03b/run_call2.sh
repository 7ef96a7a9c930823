#!/usr/bin/env bash
# Call 2 (one H200, two ranks sharing it): where a direct work's time goes (MCCL_PROFILE's
# new direct-kernel marks: block start to first work, entry barrier or offers, the work,
# exit barrier or done lines), plain buffers against windows at AllReduce 1 MiB,
# ReduceScatter 2 MiB and AllGather 4 MiB, plain also on 32 channels; and the plan cache
# A/B: main's build (before), call 1's (c1: plans reused, no profile marks) and this one
# (new), 512 KiB - 8 MiB, two rounds, with plain on 32 channels (p32) beside.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
prof() {  # NAME "ARGS" [VAR=VALUE ...]
  local name=$1 a=$2
  shift 2
  env "$@" MCCL_PROFILE=1 timeout $RUN_TIMEOUT $B/mccl-threads-bench $a > $W/prof_$name.txt 2>&1 ||
    echo "prof $name rc=$?" >> $W/errors.txt
}
for sz in 1M:allreduce 2M:reducescatter 4M:allgather; do
  s=${sz%%:*} o=${sz#*:}
  P="-r 2 -b $s -e $s -n 300 -G 0 -o $o"
  prof ${o}_plain "$P"
  prof ${o}_plain32 "$P" NCCL_MIN_NCHANNELS=32
  prof ${o}_win "$P -w" MCCL_WIN_DIRECT=2
done
A="-r 2 -b 512K -e 8M -f 2 -n 100 -G 10 -o allreduce,allreduce_inplace,reducescatter,allgather"
for round in 1 2; do
  tb pd before $round "$A"
  tb pd c1 $round "$A"
  tb pd new $round "$A"
  tb pd p32 $round "$A" NCCL_MIN_NCHANNELS=32
  tb pd win $round "$A -w" MCCL_WIN_DIRECT=2
done
{
  python3 bench/threads_ab.py $W pd --ref before
  for f in $W/prof_*.txt; do echo "== $(basename $f .txt)"; grep -a "profile" $f | cut -c1-400; done
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call2_summary.txt 2>&1
tar -czf $OUT/call2.tgz -C $W .
cat $OUT/call2_summary.txt
