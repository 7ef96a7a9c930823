#!/usr/bin/env bash
# Call 7 (one H200): the landed form, call 6's shared-memory variant (every work from its
# copy in shared memory, one call site of the loops); AllGather's band from 3 MiB; the graph
# test at 3.5 MiB (call 6: at 2 MiB its AllGather had left the band). Tests: GpuPlainDirect.*
# on 2 and 3 ranks as threads sharing the GPU, GpuMpi.PlainBuffersDirect on two processes
# sharing it, the windows' and the plain collectives' single-process tests. Then
# mccl-threads-bench, two ranks sharing the GPU, 512 KiB - 8 MiB, one round: FIFO path,
# default, windows with this build and with main's (before).
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
timeout 90 $M -x MCCL_SHARED_GPU=2 -x MCCL_DUMP_SCHEDULE=0 $B/mccl_gpu_mpi_tests \
  --gtest_filter='GpuMpi.PlainBuffersDirect' > $W/mpi.log 2>&1
res "mpi np2 shared" $? $W/mpi.log
one touched 2 'GpuSingleProcess.SymmetricWindowsEveryTypeOpAndForm:GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SymmetricWindowsGraph*:GpuSingleProcess.GraphCaptureReplayedThousandTimes:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol' 120 NCCL_MAX_NCHANNELS=16
A="-r 2 -b 512K -e 8M -f 2 -n 100 -G 10 -o allreduce,allreduce_inplace,reducescatter,allgather"
tb pd fifo 1 "$A" MCCL_PLAIN_DIRECT=0
tb pd dflt 1 "$A"
tb pd win 1 "$A -w" MCCL_WIN_DIRECT=2
tb pd before 1 "$A -w" MCCL_WIN_DIRECT=2
python3 bench/threads_ab.py $W pd --ref fifo > $W/summary.txt 2>&1
{ cat $T; [ -f $W/errors.txt ] && cat $W/errors.txt; cat $W/summary.txt; } > $OUT/call7_summary.txt
tar -czf $OUT/call7.tgz -C $W .
cat $OUT/call7_summary.txt
