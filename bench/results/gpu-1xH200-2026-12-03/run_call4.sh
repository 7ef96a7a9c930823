#!/usr/bin/env bash
# Call 4 (one H200): the landed form (the entry's connection words loaded at once, the staged
# elements typed, a channel a 32 KiB up to 24). Tests: GpuPlainDirect.* on 2 and 3 ranks as
# threads sharing the GPU, GpuMpi.PlainBuffersDirect on two processes sharing it, the
# single-process tests whose paths the change touches. Then mccl-threads-bench, two ranks
# sharing the GPU, 512 KiB - 16 MiB, two rounds: the FIFO path (MCCL_PLAIN_DIRECT=0), the
# default, the default on 32 channels (NCCL_MIN_NCHANNELS=32) and on 16 (NCCL_MAX_NCHANNELS=16),
# every part staged (3), symmetric windows (-w, MCCL_WIN_DIRECT=2) with this build and with
# main's (before: the windows' loop now shared with plain works).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
one() {  # NAME RANKS FILTER LIMIT [VAR=VALUE ...]
  local name=$1 nr=$2 f=$3 limit=$4
  shift 4
  env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr MCCL_TIMEOUT=10 "$@" \
    timeout $limit $B/mccl_gpu_tests --gtest_filter="$f" > $W/$name.log 2>&1
  res "$name" $? $W/$name.log
  grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/$name.log >> $T
  cp $T $OUT/tests.txt
}
one pd_2ranks 2 'GpuPlainDirect.*' 120
one pd_3ranks 3 'GpuPlainDirect.*' 100 NCCL_MAX_NCHANNELS=8
timeout 100 $M -x MCCL_SHARED_GPU=2 -x MCCL_DUMP_SCHEDULE=0 $B/mccl_gpu_mpi_tests \
  --gtest_filter='GpuMpi.PlainBuffersDirect' > $W/mpi.log 2>&1
res "mpi np2 shared" $? $W/mpi.log
grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/mpi.log >> $T
one touched 2 'GpuSingleProcess.SymmetricWindows*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.LoneCalls*:GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.GraphCapture*:GpuSingleProcess.LeanAndGeneral*' 120 NCCL_MAX_NCHANNELS=16
A="-r 2 -b 512K -e 16M -f 2 -n 100 -G 10 -o allreduce,allreduce_inplace,reducescatter,allgather"
for r in 1 2; do
  tb pd fifo $r "$A" MCCL_PLAIN_DIRECT=0
  tb pd dflt $r "$A"
  tb pd ch32 $r "$A" NCCL_MIN_NCHANNELS=32
  tb pd ch16 $r "$A" NCCL_MAX_NCHANNELS=16
  tb pd staged $r "$A" MCCL_PLAIN_DIRECT=3
  tb pd win $r "$A -w" MCCL_WIN_DIRECT=2
  tb pd before $r "$A -w" MCCL_WIN_DIRECT=2
done
python3 bench/threads_ab.py $W pd --ref fifo > $W/summary.txt 2>&1
{ cat $T; [ -f $W/errors.txt ] && cat $W/errors.txt; cat $W/summary.txt; } > $OUT/call4_summary.txt
tar -czf $OUT/call4.tgz -C $W .
cat $OUT/call4_summary.txt
