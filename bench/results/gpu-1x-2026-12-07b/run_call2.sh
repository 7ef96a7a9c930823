#!/usr/bin/env bash
# Call 2 (one GPU, MPS, two processes at once): the LL and LL128 kernels split a block among
# their channels with a 32-bit division where it fits (dev_div.cuh; was a 64-bit division,
# before the grid wait): this build (new) against the one before (.carry/ab/old), alternating,
# 8-byte MPI_Allreduce (micro_mpi_tiny route,flag: a call after the last one was waited for,
# replayed and launched), three rounds; then MCCL_PROFILE of each (the LL kernel's block start
# to its setup). The device-API suite on 2 processes with this build.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpsStart
MM="$M -x MCCL_SHARED_GPU=2"
timeout 120 $MM $B/mccl_gpu_devapi_tests > $W/devapi2.log 2>&1
rc=$?
[ $rc = 124 ] && reap mccl_gpu_devapi_tests
res "devapi np 2" $rc $W/devapi2.log
gtestLines $W/devapi2.log >> $T
cp $T $OUT/tests.txt
for round in 1 2 3; do
  for v in old new; do
    lp=$L
    [ $v = old ] && lp=$L/ab/old:$L  # (the later -x wins)
    timeout 60 $MM -x LD_LIBRARY_PATH=$lp $B/micro_mpi_tiny 2000 route,flag > $W/ab_${v}_replay_$round.txt 2>&1 ||
      echo "ab $v replay $round rc=$?" >> $W/errors.txt
    timeout 60 $MM -x LD_LIBRARY_PATH=$lp -x MCCL_MPI_GRAPH_BYTES=0 $B/micro_mpi_tiny 2000 route,flag \
      > $W/ab_${v}_launch_$round.txt 2>&1 || echo "ab $v launch $round rc=$?" >> $W/errors.txt
  done
done
for v in old new; do
  lp=$L
  [ $v = old ] && lp=$L/ab/old:$L
  timeout 60 $MM -x LD_LIBRARY_PATH=$lp -x MCCL_PROFILE=1 $B/micro_mpi_tiny 2000 route > $W/prof_${v}_replay.txt 2>&1 ||
    echo "prof $v rc=$?" >> $W/errors.txt
  timeout 60 $MM -x LD_LIBRARY_PATH=$lp -x MCCL_PROFILE=1 -x MCCL_MPI_GRAPH_BYTES=0 $B/micro_mpi_tiny 2000 route \
    > $W/prof_${v}_launch.txt 2>&1 || echo "prof $v launch rc=$?" >> $W/errors.txt
done
mpsStop
{
  echo "== micro_mpi_tiny route / flag, us a call (slower rank's mean, median of 5 trials): old | new"
  for mode in replay launch; do
    for round in 1 2 3; do
      echo "$mode $round: $(grep -E '^(route|flag) ' $W/ab_old_${mode}_$round.txt | awk '{print $1, $2}' | tr '\n' ' ')| $(grep -E '^(route|flag) ' $W/ab_new_${mode}_$round.txt | awk '{print $1, $2}' | tr '\n' ' ')"
    done
  done
  for f in $W/prof_*.txt; do echo "== $(basename $f)"; grep -aE 'mccl profile.*LL|route ' $f | cut -c1-400; done
} >> $T
finish call2
