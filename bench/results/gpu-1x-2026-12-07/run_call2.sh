#!/usr/bin/env bash
# Call 2 (one GPU, MPS; two and three processes at once on the GPU):
# 1. the completion word raised by a one-block launch with no count (ll_kernel.cu's
#    llRaiseDone): the preload suite on 2 and 3 processes, then 8-byte MPI_Allreduce
#    (micro_mpi_tiny route,flag) on this build against the last one (.carry/ab/old), by
#    default (replayed) and launched, three rounds alternating;
# 2. the whole MPI GPU suite (mccl_gpu_mpi_tests, 14 tests) on 2 and 3 processes, where until
#    2026-12-06 they took the GPU in 2 ms time slices, and the device-API test on 2;
# 3. small collectives between two processes (mccl-perf, eager and in graphs, 8 B - 1 MiB):
#    a one-GPU baseline, flags through the GPU's L2, nothing against NCCL.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpsStart
MM="$M -x MCCL_SHARED_GPU=2"
preload 2 120
preload 3 120
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
{
  echo "== micro_mpi_tiny route / flag, us a call (slower rank's mean, median of 5 trials): old | new"
  for mode in replay launch; do
    for round in 1 2 3; do
      echo "$mode $round: $(grep -E '^(route|flag) ' $W/ab_old_${mode}_$round.txt | awk '{print $1, $2}' | tr '\n' ' ')| $(grep -E '^(route|flag) ' $W/ab_new_${mode}_$round.txt | awk '{print $1, $2}' | tr '\n' ' ')"
    done
  done
} >> $T
cp $T $OUT/tests.txt
SECONDS=0
mpitests '*' 200
mv $W/mpi.log $W/mpi_np2.log
echo "(np 2: ${SECONDS} s)" >> $T
cp $T $OUT/tests.txt
SECONDS=0
NP=3 M=${M/-np 2/-np 3} mpitests '*' 120
mv $W/mpi.log $W/mpi_np3.log
echo "(np 3: ${SECONDS} s)" >> $T
cp $T $OUT/tests.txt
timeout 60 $MM $B/mccl_gpu_devapi_tests > $W/devapi.log 2>&1
res "devapi np 2" $? $W/devapi.log
gtestLines $W/devapi.log >> $T
RUN_TIMEOUT=50
run small mccl 1 "-b 8 -e 1M -f 8 -o allreduce,allgather,broadcast,sendrecv -t 3" MCCL_SHARED_GPU=2
run smallgraph mccl 1 "-b 8 -e 1M -f 8 -o allreduce,allgather,broadcast,sendrecv -G 10 -t 3" MCCL_SHARED_GPU=2
mpsStop
finish call2
