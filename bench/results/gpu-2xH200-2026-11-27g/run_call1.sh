#!/usr/bin/env bash
# Call 1 (2 x H200): point-to-point FIFOs of their own (NCCL_P2P_NVL_CHUNKSIZE slots, 512 KiB
# by default; the collectives keep 4 of 1 MiB). Tests first (the new slot test, the
# point-to-point, units and AlltoAll tests; the MPI user-buffer test), then Send/Recv (both
# ways), AlltoAll, Gather, Scatter 1 MiB - 2 GiB: this build's default | NCCL_P2P_NVL_CHUNKSIZE
# = 1 MiB (4 slots of 1 MiB: the geometry before) | 256 KiB (16 slots), two rounds
# interleaved; NCCL plain and registered once; then the collectives at 64 MiB and 1 GiB, default
# against 1 MiB (their FIFOs must not have changed).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is|FAILED' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
timeout 240 $B/mccl_gpu_tests --gtest_filter='*PointToPoint*:*SelfSendRecv*:*SimpleUnits*:*AlltoAll*' > $W/t_single.log 2>&1; res "single process, 2 GPUs" $? $W/t_single.log
CUDA_VISIBLE_DEVICES=0 MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 NCCL_MAX_NCHANNELS=8 timeout 150 $B/mccl_gpu_tests --gtest_filter='*PointToPointFifoSlots*' > $W/t_shared3.log 2>&1; res "3 ranks sharing one GPU" $? $W/t_shared3.log
timeout 120 $M $B/mccl_gpu_mpi_tests --gtest_filter='*UserBuffers*:*CollectivesFromMpiComm*' > $W/t_mpi.log 2>&1; res "MPI np 2" $? $W/t_mpi.log
cat $T
P="-b 1M -e 2G -f 2 -t 3 -c 0 -o sendrecv,alltoall,gather,scatter"
for round in 1 2; do
  $M $B/mccl-perf $P --csv $W/p_mccl_$round.csv > /dev/null 2>&1
  $M -x NCCL_P2P_NVL_CHUNKSIZE=1048576 $B/mccl-perf $P --csv $W/p_c1M_$round.csv > /dev/null 2>&1
  $M -x NCCL_P2P_NVL_CHUNKSIZE=262144 $B/mccl-perf $P --csv $W/p_c256K_$round.csv > /dev/null 2>&1
done
$M $B/nccl-perf $P -R 1 --csv $W/p_ncclR1_1.csv > /dev/null 2>&1
$M $B/nccl-perf $P --csv $W/p_nccl_1.csv > /dev/null 2>&1
python3 bench/summary.py $W p_ 2>&1 | tee $W/summary.txt
C="-b 64M -e 1G -f 16 -t 3 -c 0 -o allreduce,allgather,reducescatter,broadcast"
$M $B/mccl-perf $C --csv $W/c_mccl_1.csv > /dev/null 2>&1
$M -x NCCL_P2P_NVL_CHUNKSIZE=1048576 $B/mccl-perf $C --csv $W/c_c1M_1.csv > /dev/null 2>&1
python3 bench/summary.py $W c_ 2>&1 | tee -a $W/summary.txt
tar -czf "$OUT/call1.tgz" -C "$W" .
