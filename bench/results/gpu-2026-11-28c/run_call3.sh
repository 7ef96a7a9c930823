#!/usr/bin/env bash
# Call 3 (four GPUs): the rules call 2 led to (units by agreement from eight units a channel,
# not for Gather and Scatter). Tests: MPI np 4 and np 3 (quick), single process on four
# GPUs; four ranks 16 MiB - 1 GiB, sendrecv, exchange, alltoall, gather, scatter, the build
# against units off (MCCL_SIMPLE_UNITS=0), two rounds; AlltoAll blocks into the outputs from
# 8 MiB (MCCL_USER_BUFFERS_ALLTOALL_BYTES, 16 by default); NCCL plain once.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is|FAILED|rror' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
Q="-x MCCL_TEST_QUICK=1"
timeout 120 $M -np 4 $Q $B/mccl_gpu_mpi_tests --gtest_filter='*SendRecvUnitsByAgreement*:*UserBuffers*:*CollectivesFromMpiComm*' > $W/t_mpi4.log 2>&1; res "MPI np 4 (quick)" $? $W/t_mpi4.log
timeout 60 $M -np 3 $Q $B/mccl_gpu_mpi_tests --gtest_filter='*SendRecvUnitsByAgreement*:*UserBuffersSendRecv*' > $W/t_mpi3.log 2>&1; res "MPI np 3 (quick)" $? $W/t_mpi3.log
timeout 100 $B/mccl_gpu_tests --gtest_filter='*SimpleUnits*:*PointToPointPatterns*:*AlltoAllGatherScatter*' > $W/t_single4.log 2>&1; res "single process, 4 GPUs" $? $W/t_single4.log
cat $T
P="-b 16M -e 1G -f 2 -t 3 -c 0 -o sendrecv,exchange,alltoall,gather,scatter"
for round in 1 2; do
  timeout 100 $M -np 4 $B/mccl-perf $P --csv $W/q_mccl_$round.csv > /dev/null 2>&1
  timeout 100 $M -np 4 -x MCCL_SIMPLE_UNITS=0 $B/mccl-perf $P --csv $W/q_nounits_$round.csv > /dev/null 2>&1
done
timeout 100 $M -np 4 $B/nccl-perf $P --csv $W/q_nccl_1.csv > /dev/null 2>&1
A="-b 8M -e 128M -f 2 -t 3 -c 0 -o alltoall"
for round in 1 2; do
  timeout 60 $M -np 4 $B/mccl-perf $A --csv $W/a_mccl_$round.csv > /dev/null 2>&1
  timeout 60 $M -np 4 -x MCCL_USER_BUFFERS_ALLTOALL_BYTES=$((8 << 20)) $B/mccl-perf $A --csv $W/a_ata8M_$round.csv > /dev/null 2>&1
done
{ python3 bench/summary.py $W q_; echo "### AlltoAll thresholds"; python3 bench/summary.py $W a_; } > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call3.tgz" -C "$W" .
