#!/usr/bin/env bash
# Call 1 (2 x H200): AlltoAll on symmetric windows by the copy engines. Tests first (single
# process on the 2 GPUs and 3 ranks sharing them; 2 MPI processes under NCCL_CTA_POLICY=2
# and under MCCL_WIN_CE_MIN_BYTES=4096), then AlltoAll 1 MiB - 2 GiB (size: a rank's whole
# buffer) in every buffer mode, mccl and NCCL in the same call, two rounds for mccl:
#   mccl  R0 plain | R2 windows (copy engines from a 32 MiB block) | R2 with the FIFO path
#         only (MCCL_WIN_CE_MIN_BYTES=0) | R2 under NCCL_CTA_POLICY=2 (copy engines at every size)
#   NCCL  R0 | R1 registered | R2 windows | R2 under NCCL_CTA_POLICY=2
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE '^\[  (PASSED|FAILED) ' "$3" | tr '\n' ' ')" >> $T; grep -a -m6 -E 'rank [0-9]+:|Failure|expected|Which is' "$3" | cut -c1-300 >> $T; }
timeout 300 $B/mccl_gpu_tests --gtest_filter='*SymmetricWindows*:*AlltoAll*' > $W/t_single.log 2>&1; res "single process, 2 GPUs" $? $W/t_single.log
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 NCCL_MAX_NCHANNELS=16 timeout 200 $B/mccl_gpu_tests --gtest_filter='*SymmetricWindowsAlltoAll*' > $W/t_shared3.log 2>&1; res "3 ranks sharing 2 GPUs" $? $W/t_shared3.log
timeout 200 $M -x NCCL_CTA_POLICY=2 $B/mccl_gpu_mpi_tests --gtest_filter='*SymmetricWindow*' > $W/t_mpi_policy.log 2>&1; res "MPI np 2, NCCL_CTA_POLICY=2" $? $W/t_mpi_policy.log
timeout 200 $M -x MCCL_WIN_CE_MIN_BYTES=4096 $B/mccl_gpu_mpi_tests --gtest_filter='*SymmetricWindow*:*AlltoAll*' > $W/t_mpi_size.log 2>&1; res "MPI np 2, MCCL_WIN_CE_MIN_BYTES=4096" $? $W/t_mpi_size.log
# Values checked by the benchmark itself on the copy-engine path (64 MiB - 1 GiB).
$M $B/mccl-perf -b 64M -e 1G -f 4 -c 1 -n 3 -w 1 -o alltoall -R 2 > $W/check.txt 2>&1; echo "mccl-perf -c 1 -R 2: rc=$?" >> $T
tail -6 $W/check.txt >> $T
P="-b 1M -e 2G -f 2 -t 3 -c 0 -o alltoall"
for round in 1 2; do
  $M $B/mccl-perf $P -R 0 --csv $W/a_mR0_$round.csv > /dev/null 2>&1
  $M $B/mccl-perf $P -R 2 --csv $W/a_mR2_$round.csv > /dev/null 2>&1
  $M -x MCCL_WIN_CE_MIN_BYTES=0 $B/mccl-perf $P -R 2 --csv $W/a_mR2fifo_$round.csv > /dev/null 2>&1
  $M -x NCCL_CTA_POLICY=2 $B/mccl-perf $P -R 2 --csv $W/a_mR2zero_$round.csv > /dev/null 2>&1
done
for r in 0 1 2; do $M $B/nccl-perf $P -R $r --csv $W/a_nR${r}_1.csv > /dev/null 2>&1; done
$M -x NCCL_CTA_POLICY=2 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING $B/nccl-perf $P -R 2 --csv $W/a_nR2zero_1.csv > $W/nccl_zero_tuning.txt 2>&1
$M -x NCCL_CTA_POLICY=2 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING $B/mccl-perf -b 64M -e 64M -o alltoall -R 2 -n 2 -w 1 > $W/mccl_zero_tuning.txt 2>&1
cat $T
echo "== us per call (median of rounds for mccl)"
python3 bench/results/gpu-2xH200-2026-11-27f/summary.py $W a_ > $W/summary.txt 2>&1; cat $W/summary.txt
grep -a -m4 "AlltoAll\|alltoall" $W/nccl_zero_tuning.txt | cut -c1-200
grep -a -m4 "copy-engines" $W/mccl_zero_tuning.txt | cut -c1-200
tar -czf "$OUT/call1.tgz" -C "$W" .
