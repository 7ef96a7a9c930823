#!/usr/bin/env bash
# Call 6 (one H200): window works and plain works each with a call site of their own in the
# direct kernel (the windows' loops as main's again: call 5's places held in registers made
# every direct kernel spill, 64-176 bytes, and the windows' path 0.7-1.2 us slower); the
# band from call 5 (ReduceScatter from 2 MiB, AllGather 4 MiB). Tests: GpuPlainDirect.* on 2
# and 3 ranks as threads sharing the GPU, the windows' and the plain collectives'
# single-process tests (not the MPI test: the pack with three builds of libmccl would not
# fit the 64 MiB the device tool carries). Then mccl-threads-bench,
# two ranks sharing the GPU, 512 KiB - 8 MiB, two rounds: FIFO path, default, windows with
# this build, with main's (before), and with a build whose kernel copies every work into
# shared memory and has one call site (shmd default, shmw windows; half the build time).
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
one pd_2ranks 2 'GpuPlainDirect.*' 100
one pd_3ranks 3 'GpuPlainDirect.*' 100
one touched 2 'GpuSingleProcess.SymmetricWindowsEveryTypeOpAndForm:GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SymmetricWindowsGraph*:GpuSingleProcess.GraphCaptureReplayedThousandTimes:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol' 120 NCCL_MAX_NCHANNELS=16
A="-r 2 -b 512K -e 8M -f 2 -n 100 -G 10 -o allreduce,allreduce_inplace,reducescatter,allgather"
for r in 1 2; do
  tb pd fifo $r "$A" MCCL_PLAIN_DIRECT=0
  tb pd dflt $r "$A"
  tb pd win $r "$A -w" MCCL_WIN_DIRECT=2
  tb pd before $r "$A -w" MCCL_WIN_DIRECT=2
  tb pd shmd $r "$A"
  tb pd shmw $r "$A -w" MCCL_WIN_DIRECT=2
done
python3 bench/threads_ab.py $W pd --ref fifo > $W/summary.txt 2>&1
{ cat $T; [ -f $W/errors.txt ] && cat $W/errors.txt; cat $W/summary.txt; } > $OUT/call6_summary.txt
tar -czf $OUT/call6.tgz -C $W .
cat $OUT/call6_summary.txt
