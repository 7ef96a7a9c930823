#!/usr/bin/env bash
# Call 1 (two GPUs): Send/Recv into the receiver's output where the group goes both ways
# (MCCL_USER_BUFFERS_SENDRECV_BYTES, default 8 MiB) against the FIFO (the knob at 0, as
# the last build). Tests first (MPI np 2: the user-buffer and point-to-point tests; np 3 and
# 4 with ranks sharing the GPUs, MCCL_SHARED_GPU: units by agreement), then
# sendrecv (two ranks: both ways), exchange (pairs both ways), gather / scatter (one way),
# 1 MiB - 1 GiB, two rounds interleaved; NCCL plain and registered once; AlltoAll 2 - 64 MiB
# with blocks into the outputs from 8 MiB (MCCL_USER_BUFFERS_ALLTOALL_BYTES) against 16.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L
NP=${NP:-2}
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np $NP -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is|FAILED' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
timeout 120 $M -x LD_LIBRARY_PATH=$L $B/mccl_gpu_mpi_tests --gtest_filter='*UserBuffers*:*PointToPoint*:*P2p*:*SendRecv*:*Alltoall*:*AlltoAll*' > $W/t_mpi.log 2>&1; res "MPI np $NP" $? $W/t_mpi.log
S="-x MCCL_SHARED_GPU=1 -x CUDA_DEVICE_MAX_CONNECTIONS=32 -x MCCL_TEST_QUICK=1"
for np in 3 4; do
  timeout 80 ${M/-np $NP/-np $np} -x LD_LIBRARY_PATH=$L $S $B/mccl_gpu_mpi_tests --gtest_filter='*SendRecvUnitsByAgreement*:*CollectivesFromMpiComm*' > $W/t_mpi$np.log 2>&1; res "MPI np $np, shared GPUs" $? $W/t_mpi$np.log
done
cat $T
P="-b 1M -e 1G -f 2 -t 3 -c 0 -o sendrecv,exchange,gather,scatter"
for round in 1 2; do
  timeout 120 $M -x LD_LIBRARY_PATH=$L $B/mccl-perf $P --csv $W/s_mccl_$round.csv > /dev/null 2>&1
  timeout 120 $M -x LD_LIBRARY_PATH=$L -x MCCL_USER_BUFFERS_SENDRECV_BYTES=0 $B/mccl-perf $P --csv $W/s_fifo_$round.csv > /dev/null 2>&1
done
timeout 120 $M -x LD_LIBRARY_PATH=$L $B/nccl-perf $P --csv $W/s_nccl_1.csv > /dev/null 2>&1
timeout 120 $M -x LD_LIBRARY_PATH=$L $B/nccl-perf $P -R 1 --csv $W/s_ncclR_1.csv > /dev/null 2>&1
A="-b 2M -e 64M -f 2 -t 3 -c 0 -o alltoall"
for round in 1 2; do
  timeout 60 $M -x LD_LIBRARY_PATH=$L $B/mccl-perf $A --csv $W/a_mccl_$round.csv > /dev/null 2>&1
  timeout 60 $M -x LD_LIBRARY_PATH=$L -x MCCL_USER_BUFFERS_ALLTOALL_BYTES=$((8 << 20)) $B/mccl-perf $A --csv $W/a_ata8M_$round.csv > /dev/null 2>&1
  timeout 60 $M -x LD_LIBRARY_PATH=$L -x MCCL_USER_BUFFERS_ALLTOALL_BYTES=$((4 << 20)) $B/mccl-perf $A --csv $W/a_ata4M_$round.csv > /dev/null 2>&1
done
timeout 60 $M -x LD_LIBRARY_PATH=$L $B/nccl-perf $A -R 1 --csv $W/a_ncclR_1.csv > /dev/null 2>&1
{ python3 bench/summary.py $W s_; echo "### AlltoAll thresholds"; python3 bench/summary.py $W a_; } > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call1.tgz" -C "$W" .
