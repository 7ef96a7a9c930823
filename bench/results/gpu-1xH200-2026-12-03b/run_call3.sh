#!/usr/bin/env bash
# Call 3 (one H200, two ranks sharing it): the landed form (the profile's marks compiled
# out, a plain entry's two offer lines polled together) against call 1's build (c1); the
# plain entry split by the measurement build (prof, scripts/direct-profile.sh) at AllReduce
# 1 MiB and ReduceScatter 2 MiB; tests: GpuPlainDirect.* on two ranks as threads, the
# plain-buffer MPI tests on two processes.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpitests 'GpuMpi.PlainDirectReusedPlansFollowReallocatedBuffers:GpuMpi.PlainBuffersDirect' 120
gtests 2 'GpuPlainDirect.*' 100
prof() {  # NAME "ARGS" [VAR=VALUE ...]
  local name=$1 a=$2
  shift 2
  env LD_LIBRARY_PATH=$L/ab/prof:$L "$@" MCCL_PROFILE=1 timeout $RUN_TIMEOUT $B/mccl-threads-bench $a \
    > $W/prof_$name.txt 2>&1 || echo "prof $name rc=$?" >> $W/errors.txt
}
prof allreduce_plain "-r 2 -b 1M -e 1M -n 300 -G 0 -o allreduce"
prof reducescatter_plain "-r 2 -b 2M -e 2M -n 300 -G 0 -o reducescatter"
prof allreduce_win "-r 2 -b 1M -e 1M -n 300 -G 0 -o allreduce -w" MCCL_WIN_DIRECT=2
A="-r 2 -b 512K -e 8M -f 2 -n 100 -G 10 -o allreduce,allreduce_inplace,reducescatter,allgather"
for round in 1 2; do
  [ -d $L/ab/c1 ] && tb pd c1 $round "$A"
  tb pd new $round "$A"
  tb pd prof $round "$A"
  tb pd win $round "$A -w" MCCL_WIN_DIRECT=2
done
{
  cat $T
  python3 bench/threads_ab.py $W pd --ref new
  for f in $W/prof_*.txt; do echo "== $(basename $f .txt)"; grep -a "profile: rank . direct" $f | cut -c1-400; done
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call3_summary.txt 2>&1
tar -czf $OUT/call3.tgz -C $W .
cat $OUT/call3_summary.txt
