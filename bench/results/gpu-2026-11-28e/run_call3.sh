#!/usr/bin/env bash
# Call 3: the MPI collectives test with LL forced (np 2, and np 4 where there are four GPUs);
# the LL profile of AllReduce and ReduceScatter 1 MiB on 24 channels (new and old), and of
# the default ReduceScatter 1 MiB with and without PDL (its 3.9 us from block start to first
# step, 2026-11-28d call 8); four ranks (where there are four GPUs): 8 B - 4 MiB new against
# old, the default and LL forced, two rounds, NCCL once a round; AllReduce 1 - 2 GiB on two
# ranks against NCCL.
RUN_TIMEOUT=120
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
NG=$(nvidia-smi -L | wc -l)
timeout 120 $M -x MCCL_TEST_QUICK=1 -x NCCL_PROTO=LL $B/mccl_gpu_mpi_tests --gtest_filter='GpuMpi.CollectivesFromMpiComm' > $W/t_mpi_ll.log 2>&1
res "MPI np 2 (quick), LL forced" $? $W/t_mpi_ll.log
M4=${M/-np $NP/-np 4}
if [ "$NG" -ge 4 ]; then
  timeout 150 $M4 -x MCCL_TEST_QUICK=1 -x NCCL_PROTO=LL $B/mccl_gpu_mpi_tests --gtest_filter='GpuMpi.CollectivesFromMpiComm' > $W/t_mpi4_ll.log 2>&1
  res "MPI np 4 (quick), LL forced" $? $W/t_mpi4_ll.log
fi
for v in new old; do
  lib=$L; [ $v = old ] && lib=$L/old:$L
  for op in allreduce reducescatter; do
    timeout 60 $M -x LD_LIBRARY_PATH=$lib -x MCCL_PROFILE=1 -x NCCL_PROTO=LL -x NCCL_MAX_NCHANNELS=24 $B/mccl-perf -b 1M -e 1M -t 1 -c 0 -o $op > $W/prof_${op}_$v.log 2>&1
    { echo "### $op 1 MiB, LL on 24 channels, $v"; grep -a "mccl profile\|^ *$op\|1048576" $W/prof_${op}_$v.log | cut -c1-900 | head -12; } >> $T
  done
done
for pdl in 1 0; do
  timeout 60 $M -x MCCL_PROFILE=1 -x MCCL_PDL=$pdl $B/mccl-perf -b 1M -e 1M -t 1 -c 0 -o reducescatter > $W/prof_rs_pdl$pdl.log 2>&1
  { echo "### reducescatter 1 MiB, default, MCCL_PDL=$pdl"; grep -a "mccl profile\|^ *reducescatter\|1048576" $W/prof_rs_pdl$pdl.log | cut -c1-900 | head -12; } >> $T
done
sets="g"
if [ "$NG" -ge 4 ]; then
  sets="q g"
  P="-b 8 -e 4M -f 4 -t 3 -c 0 -o allreduce,reducescatter,allgather,broadcast,reduce,sendrecv"
  for r in 1 2; do
    NP=4 M=$M4 run q mccl $r "$P"
    NP=4 M=$M4 run q old $r "$P"
    NP=4 M=$M4 run q mcclLL $r "$P" NCCL_PROTO=LL
    NP=4 M=$M4 run q oldLL $r "$P" NCCL_PROTO=LL
    NP=4 M=$M4 run q nccl $r "$P"
  done
fi
G="-b 1G -e 2G -f 2 -t 3 -c 0 -o allreduce"
for r in 1 2; do
  run g mccl $r "$G"
  run g nccl $r "$G"
done
finish call3 $sets
