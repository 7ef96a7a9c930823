#!/usr/bin/env bash
# Call 2 (one GPU): the lean LL kernel's start with its parameter loads issued together
# (typeBytes without branches) and read before the grid wait (the reduction's arithmetic, the
# connections' addresses: llSetupAt), against the build of call 1 (.carry/ab/base).
# The GPU tests of the LL kernels on 2 and 3 ranks as threads and the preload suite on two
# processes; then, alternating base and new, 8-byte MPI_Allreduce on two processes under MPS
# (micro_mpi_tiny route,flag, replayed and launched) and 8 B - 64 KiB collectives on two
# ranks as threads (mccl-threads-bench, eager and in graphs); the measurement build of the new
# kernel (.carry/ab/prof) under MCCL_PROFILE; the new lean kernel's SASS.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.LeanLl*:GpuSingleProcess.LeanAndGeneral*"
F="$F:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol:GpuSingleProcess.GraphCaptureReplayedThousandTimes"
F="$F:GpuSingleProcess.CollectivesChainedOnOneStreamReadEachOthersResults:GpuSingleProcess.PointToPointPatterns"
F="$F:GpuSingleProcess.AlltoAllGatherScatterAlltoAllv:GpuSingleProcess.Ll128KernelsAndGenericAlternateOnOneCommunicator"
F="$F:GpuSingleProcess.CallsQueuedBehindATimeoutStopWithIt:GpuSingleProcess.SimpleUnalignedBuffersEveryCollective"
F="$F:GpuSingleProcess.OneThreadGatherEveryRootAndProtocol:GpuSingleProcess.LlFlagsWrapPast2To32Steps"
gtests 2 "$F" 150
cp $W/t_2.log $W/t2.log
gtests 3 "GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.LeanLl*:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol" 120
mpsStart
preload 2 150
MM="$M -x MCCL_SHARED_GPU=2"
for round in 1 2 3; do
  for v in base new; do
    lp=$L
    [ $v = base ] && lp=$L/ab/base:$L
    timeout 60 $MM -x LD_LIBRARY_PATH=$lp $B/micro_mpi_tiny 2000 route,flag > $W/ab_${v}_replay_$round.txt 2>&1 ||
      echo "ab $v replay $round rc=$?" >> $W/errors.txt
    timeout 60 $MM -x LD_LIBRARY_PATH=$lp -x MCCL_MPI_GRAPH_BYTES=0 $B/micro_mpi_tiny 2000 route,flag \
      > $W/ab_${v}_launch_$round.txt 2>&1 || echo "ab $v launch $round rc=$?" >> $W/errors.txt
  done
done
timeout 60 $MM -x LD_LIBRARY_PATH=$L/ab/prof:$L -x MCCL_PROFILE=1 $B/micro_mpi_tiny 2000 route > $W/prof_replay.txt 2>&1 ||
  echo "prof replay rc=$?" >> $W/errors.txt
mpsStop
for round in 1 2 3; do
  for v in base new; do
    tb tbab $v $round "-r 2 -b 8 -e 64K -f 8 -n 1000 -G 100 -o allreduce,allgather,broadcast,reducescatter,sendrecv"
  done
done
tb tbprof prof 1 "-r 2 -b 8 -e 8 -n 2000 -G 100 -o allreduce,allgather,sendrecv" MCCL_PROFILE=1
/usr/local/cuda/bin/cuobjdump -sass $L/libmccl.so.0 2>&1 |
  awk '/Function :/ {on = ($0 ~ /llLeanKernelIfLb1ELi1E/)} on' | head -900 > $W/sass_new.txt
{
  echo "== micro_mpi_tiny route / flag, us a call (slower rank's mean, median of 5 trials): base | new"
  for mode in replay launch; do
    for round in 1 2 3; do
      echo "$mode $round: $(grep -E '^(route|flag) ' $W/ab_base_${mode}_$round.txt | awk '{print $1, $2}' | tr '\n' ' ')| $(grep -E '^(route|flag) ' $W/ab_new_${mode}_$round.txt | awk '{print $1, $2}' | tr '\n' ' ')"
    done
  done
  for f in $W/prof_*.txt $W/tbprof_*.txt; do echo "== $(basename $f)"; grep -aE 'mccl profile.*LL|route |allreduce|allgather|sendrecv' $f | cut -c1-400; done
} >> $T
finish call2 tbab
