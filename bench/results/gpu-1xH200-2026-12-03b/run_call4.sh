#!/usr/bin/env bash
# Call 4 (one H200, two ranks sharing it): the work copied into shared memory in the kernel
# for plain works too (the entry and exit read it there; this rank's null offers kept as a
# mask), against call 3's build (c3) where the pack has it; tests: the plain-buffer MPI
# tests on two processes, GpuPlainDirect.* on two and three ranks as threads.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpitests 'GpuMpi.PlainDirectReusedPlansFollowReallocatedBuffers:GpuMpi.PlainBuffersDirect' 120
gtests 2 'GpuPlainDirect.*' 100
gtests 3 'GpuPlainDirect.*' 150
A="-r 2 -b 512K -e 8M -f 2 -n 100 -G 10 -o allreduce,allreduce_inplace,reducescatter,allgather"
for round in 1 2; do
  [ -d $L/ab/c3 ] && tb pd c3 $round "$A"
  tb pd new $round "$A"
  tb pd win $round "$A -w" MCCL_WIN_DIRECT=2
done
{
  cat $T
  python3 bench/threads_ab.py $W pd --ref new
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call4_summary.txt 2>&1
tar -czf $OUT/call4.tgz -C $W .
cat $OUT/call4_summary.txt
