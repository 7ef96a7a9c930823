#!/usr/bin/env bash
# Call 1 (one H200, two ranks sharing it): plain direct works' plans reused from the plan
# cache (their offers made again each call) against main's build (before: every plain
# direct call planned anew). Tests: the new GpuMpi.PlainDirectReusedPlansFollowReallocatedBuffers
# and GpuMpi.PlainBuffersDirect on two processes, GpuPlainDirect.* on two ranks as threads.
# Then mccl-threads-bench 256 KiB - 8 MiB, two rounds interleaved: before, new, the FIFO
# path, windows; and one MCCL_PROFILE run each of before and new at AllReduce 1 MiB (host
# phases per launch, plan cache hits).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpitests 'GpuMpi.PlainDirectReusedPlansFollowReallocatedBuffers:GpuMpi.PlainBuffersDirect' 120
gtests 2 'GpuPlainDirect.*' 100
A="-r 2 -b 256K -e 8M -f 2 -n 100 -G 10 -o allreduce,allreduce_inplace,reducescatter,allgather"
for round in 1 2; do
  tb pd before $round "$A"
  tb pd new $round "$A"
  tb pd fifo $round "$A" MCCL_PLAIN_DIRECT=0
  tb pd win $round "$A -w" MCCL_WIN_DIRECT=2
done
P="-r 2 -b 1M -e 1M -n 200 -G 0 -o allreduce"
tb prof before 1 "$P" MCCL_PROFILE=1
tb prof new 1 "$P" MCCL_PROFILE=1
tb prof win 1 "$P -w" MCCL_PROFILE=1 MCCL_WIN_DIRECT=2
{
  cat $T
  python3 bench/threads_ab.py $W pd --ref before
  for v in before new win; do echo "== profile $v"; grep -a "profile" $W/prof_${v}_1.txt | cut -c1-600; done
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call1_summary.txt 2>&1
tar -czf $OUT/call1.tgz -C $W .
cat $OUT/call1_summary.txt
