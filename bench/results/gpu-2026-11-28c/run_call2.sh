#!/usr/bin/env bash
# Call 2 (four GPUs): units by agreement for Send/Recv beyond two ranks (kUnitsAgree).
# Tests first: MPI np 4 and np 3 (units by agreement with the generic kernel at one end;
# user buffers, collectives, quick), np 2 (user buffers, quick), the single-process units
# and point-to-point tests on four GPUs; then four ranks, sendrecv (a ring: one way per
# pair), exchange (pairs, both ways), alltoall, gather, scatter 16 MiB - 1 GiB: the build
# (mccl), units off (MCCL_SIMPLE_UNITS=0: fixed ranges, as the last build beyond two
# ranks), Send/Recv through the FIFO (MCCL_USER_BUFFERS_SENDRECV_BYTES=0), two rounds
# interleaved; NCCL plain once; MCCL_PROFILE of a 1 GiB Send/Recv ring last.
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
timeout 60 $M -np 2 $Q $B/mccl_gpu_mpi_tests --gtest_filter='*UserBuffers*' > $W/t_mpi2.log 2>&1; res "MPI np 2 (quick)" $? $W/t_mpi2.log
timeout 100 $B/mccl_gpu_tests --gtest_filter='*SimpleUnits*:*PointToPointPatterns*:*AlltoAllGatherScatter*' > $W/t_single4.log 2>&1; res "single process, 4 GPUs" $? $W/t_single4.log
cat $T
P="-b 16M -e 1G -f 2 -t 3 -c 0 -o sendrecv,exchange,alltoall,gather,scatter"
for round in 1 2; do
  timeout 100 $M -np 4 $B/mccl-perf $P --csv $W/q_mccl_$round.csv > /dev/null 2>&1
  timeout 100 $M -np 4 -x MCCL_SIMPLE_UNITS=0 $B/mccl-perf $P --csv $W/q_nounits_$round.csv > /dev/null 2>&1
  timeout 100 $M -np 4 -x MCCL_USER_BUFFERS_SENDRECV_BYTES=0 $B/mccl-perf $P --csv $W/q_fifo_$round.csv > /dev/null 2>&1
done
timeout 100 $M -np 4 $B/nccl-perf $P --csv $W/q_nccl_1.csv > /dev/null 2>&1
python3 bench/summary.py $W q_ > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call2.tgz" -C "$W" .
timeout 40 $M -np 4 -x MCCL_PROFILE=1 -x MCCL_PDL=0 $B/mccl-perf -b 1G -e 1G -t 1 -w 3 -n 10 -c 0 -o sendrecv > $W/prof.log 2>&1
grep -a "mccl profile" $W/prof.log | sort | head -40
tar -czf "$OUT/call2.tgz" -C "$W" .
