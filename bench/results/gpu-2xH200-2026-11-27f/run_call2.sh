#!/usr/bin/env bash
# Call 2 (2 x H200): AlltoAll's Sends written straight into the peers' outputs (the
# user-buffer path) from MCCL_USER_BUFFERS_ALLTOALL_BYTES a block. Tests first (MPI np 2:
# the user-buffer test with AlltoAll cases, the window test), a checked run (-c 1), then
# AlltoAll 4 MiB - 2 GiB (a rank's whole buffer) on plain (R0) and registered (R1) buffers:
# the default (from 16 MiB blocks) | off (=0) | from 4 MiB blocks, two rounds interleaved;
# NCCL R0 and R1 in the same call, two rounds.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m6 -E 'rank [0-9]+:|Failure|expected|Which is' "$3" | cut -c1-300 >> $T; }
timeout 400 $M -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests --gtest_filter='*UserBuffers*:*SymmetricWindow*' > $W/t_mpi.log 2>&1; res "MPI np 2 user buffers + windows" $? $W/t_mpi.log
timeout 200 $B/mccl_gpu_tests --gtest_filter='*AlltoAll*' > $W/t_single.log 2>&1; res "single process AlltoAll tests" $? $W/t_single.log
for R in 0 1; do
  $M $B/mccl-perf -b 32M -e 512M -f 4 -c 1 -n 3 -w 1 -o alltoall -R $R > $W/check_R$R.txt 2>&1; echo "mccl-perf -c 1 -R $R: rc=$?" >> $T
  grep -a -E "^ +[0-9]+ " $W/check_R$R.txt | tail -4 >> $T
done
P="-b 4M -e 2G -f 2 -t 3 -c 0 -o alltoall"
for round in 1 2; do
  for R in 0 1; do
    $M $B/mccl-perf $P -R $R --csv $W/R${R}_mccl_$round.csv > /dev/null 2>&1
    $M -x MCCL_USER_BUFFERS_ALLTOALL_BYTES=0 $B/mccl-perf $P -R $R --csv $W/R${R}_off_$round.csv > /dev/null 2>&1
    $M -x MCCL_USER_BUFFERS_ALLTOALL_BYTES=4194304 $B/mccl-perf $P -R $R --csv $W/R${R}_from4M_$round.csv > /dev/null 2>&1
    $M $B/nccl-perf $P -R $R --csv $W/R${R}_nccl_$round.csv > /dev/null 2>&1
  done
done
cat $T
for R in 0 1; do
  echo "== R$R: median us of 2 rounds; NCCL R1 is NCCL's best mode for AlltoAll (call 1)"
  python3 bench/summary.py $W R${R}_ 2>&1
done | tee $W/summary.txt
tar -czf "$OUT/call2.tgz" -C "$W" .
