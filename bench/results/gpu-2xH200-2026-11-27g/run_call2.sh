#!/usr/bin/env bash
# Call 2 (4 x H200): FIFO geometry on four ranks, knobs only on call 1's build. The
# collectives' FIFO: the default (4 slots of 1 MiB) | NCCL_BUFFSIZE=2 MiB (4 of 512 KiB) |
# MCCL_FIFO_SLOTS=8 (8 of 512 KiB) | MCCL_FIFO_SLOTS=16 (16 of 256 KiB); point-to-point:
# NCCL_P2P_NVL_CHUNKSIZE=1 MiB (the geometry before) against the default 512 KiB. Every
# collective, Send/Recv and AlltoAll 8 MiB - 1 GiB; the default and 8 slots twice; NCCL plain.
# First the MPI tests (np 4, quick sizes) and the point-to-point tests on the four GPUs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
M="timeout 150 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; nvidia-smi topo -m; } > $W/topo.txt 2>&1
timeout 200 $M -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests --gtest_filter='*UserBuffers*:*CollectivesFromMpiComm*' > $W/t_mpi4.log 2>&1; echo "MPI np 4 quick: rc=$? $(grep -aE 'PASSED|FAILED|OK \]' $W/t_mpi4.log | tr -d '\033' | tr '\n' ' ')" | tee $W/tests.txt
timeout 200 $B/mccl_gpu_tests --gtest_filter='*PointToPointFifoSlots*:*AlltoAllGatherScatter*:*PointToPointPatterns*' > $W/t_single4.log 2>&1; echo "single process 4 GPUs: rc=$? $(grep -aE 'PASSED|FAILED|OK \]' $W/t_single4.log | tr -d '\033' | tr '\n' ' ')" | tee -a $W/tests.txt
P="-b 8M -e 1G -f 2 -t 3 -c 0 -o broadcast,reduce,allreduce,allgather,reducescatter,sendrecv,alltoall"
$M $B/mccl-perf $P --csv $W/q_mccl_1.csv > /dev/null 2>&1
$M -x MCCL_FIFO_SLOTS=8 $B/mccl-perf $P --csv $W/q_slots8_1.csv > /dev/null 2>&1
$M -x NCCL_BUFFSIZE=2097152 $B/mccl-perf $P --csv $W/q_buf2M_1.csv > /dev/null 2>&1
$M -x MCCL_FIFO_SLOTS=16 $B/mccl-perf $P --csv $W/q_slots16_1.csv > /dev/null 2>&1
$M -x NCCL_P2P_NVL_CHUNKSIZE=1048576 $B/mccl-perf $P --csv $W/q_c1M_1.csv > /dev/null 2>&1
$M $B/nccl-perf $P --csv $W/q_nccl_1.csv > /dev/null 2>&1
$M $B/mccl-perf $P --csv $W/q_mccl_2.csv > /dev/null 2>&1
$M -x MCCL_FIFO_SLOTS=8 $B/mccl-perf $P --csv $W/q_slots8_2.csv > /dev/null 2>&1
python3 bench/summary.py $W q_ 2>&1 | tee $W/summary.txt
tar -czf "$OUT/call2.tgz" -C "$W" .
