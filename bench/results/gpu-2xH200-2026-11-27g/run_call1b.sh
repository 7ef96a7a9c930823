#!/usr/bin/env bash
# Call 1b (2 x H200): GpuMpi.CollectivesFromMpiComm did not finish in 120 s in call 1. Quick
# sizes with this build's point-to-point FIFOs and with the geometry before
# (NCCL_P2P_NVL_CHUNKSIZE=1 MiB), then the full test; a state dump (SIGUSR2) before each kill.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 MCCL_DUMP_SIGNAL=1 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x MCCL_DUMP_SIGNAL -x LD_LIBRARY_PATH"
W=$(mktemp -d)
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED|OK \]' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m12 -E 'rank [0-9]+|Failure|expected|Which is|FAILED|WARN|waiting' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
F='*CollectivesFromMpiComm*'
timeout -s USR2 -k 15 60 $M -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests --gtest_filter="$F" > $W/t_quick.log 2>&1; res "quick, default" $? $W/t_quick.log
timeout -s USR2 -k 15 60 $M -x MCCL_TEST_QUICK=1 -x NCCL_P2P_NVL_CHUNKSIZE=1048576 $B/mccl_gpu_mpi_tests --gtest_filter="$F" > $W/t_quick_c1M.log 2>&1; res "quick, 1 MiB p2p slots" $? $W/t_quick_c1M.log
timeout -s USR2 -k 15 150 $M $B/mccl_gpu_mpi_tests --gtest_filter="$F" > $W/t_full.log 2>&1; res "full, default" $? $W/t_full.log
cat $T
tar -czf "$OUT/call1b.tgz" -C "$W" .
