#!/usr/bin/env bash
# Call 1 (four GPUs): the Simple kernel launched with 512 moving threads and the posting warp
# (544, as NCCL) against the last build (512 threads, 480 moving where a work sends: ab/old).
# Tests first (single process on four GPUs and on three: the Simple kernel's tests, every
# type, op and form; MPI np 4 quick), then every collective and Send/Recv 8 MiB - 1 GiB, new
# and old, two rounds interleaved; NCCL once; Broadcast / Reduce 8 - 64 MiB in 64 KiB chain
# steps (NCCL_BUFFSIZE=512 KiB); MCCL_PROFILE of a 64 MiB Broadcast.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; nvidia-smi topo -m; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is|FAILED' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
S='*SimpleUnits*:*SimpleUnaligned*:*SimpleKernelsAndGeneric*:*PointToPointPatterns*:*AlltoAllGatherScatter*:*EveryTypeOpAndForm*'
timeout 200 $B/mccl_gpu_tests --gtest_filter="$S" > $W/t_single4.log 2>&1; res "single process, 4 GPUs" $? $W/t_single4.log
CUDA_VISIBLE_DEVICES=0,1,2 timeout 100 $B/mccl_gpu_tests --gtest_filter='*SimpleUnits*:*PointToPointPatterns*' > $W/t_single3.log 2>&1; res "single process, 3 GPUs" $? $W/t_single3.log
MCCL_TEST_QUICK=1 timeout 120 $M -x LD_LIBRARY_PATH -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests --gtest_filter='*CollectivesFromMpiComm*:*UserBuffers*' > $W/t_mpi4.log 2>&1; res "MPI np 4 (quick)" $? $W/t_mpi4.log
cat $T
P="-b 8M -e 1G -f 2 -t 3 -c 0 -o broadcast,reduce,allreduce,allgather,reducescatter,alltoall,sendrecv"
for round in 1 2; do
  timeout 150 $M -x LD_LIBRARY_PATH=$L $B/mccl-perf $P --csv $W/q_mccl_$round.csv > /dev/null 2>&1
  timeout 150 $M -x LD_LIBRARY_PATH=$L/ab/old:$L $B/mccl-perf $P --csv $W/q_old_$round.csv > /dev/null 2>&1
done
timeout 150 $M -x LD_LIBRARY_PATH=$L $B/nccl-perf $P --csv $W/q_nccl_1.csv > /dev/null 2>&1
C="-b 8M -e 64M -f 2 -t 3 -c 0 -o broadcast,reduce"
for round in 1 2; do
  timeout 60 $M -x LD_LIBRARY_PATH=$L $B/mccl-perf $C --csv $W/c_mccl_$round.csv > /dev/null 2>&1
  timeout 60 $M -x LD_LIBRARY_PATH=$L -x NCCL_BUFFSIZE=524288 $B/mccl-perf $C --csv $W/c_s64K_$round.csv > /dev/null 2>&1
done
timeout 60 $M -x LD_LIBRARY_PATH=$L -x MCCL_PROFILE=1 -x MCCL_PDL=0 $B/mccl-perf -b 64M -e 64M -t 1 -w 5 -n 50 -c 0 -o broadcast > $W/prof.log 2>&1
{ python3 bench/summary.py $W q_; echo "### chains: 64 KiB steps"; python3 bench/summary.py $W c_
  echo "### profile 64 MiB Broadcast"; grep -a "mccl profile" $W/prof.log | sort | head -24; } > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call1.tgz" -C "$W" .
