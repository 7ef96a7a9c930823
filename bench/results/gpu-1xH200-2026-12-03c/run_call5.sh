#!/usr/bin/env bash
# Call 5 (one H200, ranks sharing it): the plain-buffer band widened (ReduceScatter and
# AllGather from 1 MiB whole): its tests on two and three ranks as threads and two
# processes, and the default against the FIFO path at 256 KiB - 2 MiB a rank, two rounds.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpitests 'GpuMpi.PlainDirectReusedPlansFollowReallocatedBuffers:GpuMpi.PlainBuffersDirect' 120
gtests 2 'GpuPlainDirect.*' 100
gtests 3 'GpuPlainDirect.*' 150
A="-r 2 -b 256K -e 2M -f 2 -n 100 -G 10 -o allreduce,reducescatter,allgather"
for round in 1 2; do
  tb band fifo $round "$A" MCCL_PLAIN_DIRECT=0
  tb band dflt $round "$A"
done
{
  cat $T
  python3 bench/threads_ab.py $W band --ref fifo
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call5_summary.txt 2>&1
tar -czf $OUT/call5.tgz -C $W .
cat $OUT/call5_summary.txt
