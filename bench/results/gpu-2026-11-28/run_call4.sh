#!/usr/bin/env bash
# Call 4 (four GPUs): the build to land: chains of more than two ranks step 128 KiB, the
# posting warp. Tests first (the slot test, whose Broadcast now steps 128 KiB, on four GPUs
# and on three; units and every type, op and form on four), then four-rank Broadcast and
# Reduce 8 MiB - 1 GiB: this build, 64 KiB steps (NCCL_BUFFSIZE=512 KiB), the posting warp
# off; two rounds; NCCL once; then three ranks against NCCL.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is|FAILED' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
timeout 200 $B/mccl_gpu_tests --gtest_filter='*PointToPointFifoSlots*:*SimpleUnits*:*EveryTypeOpAndForm*' > $W/t_single4.log 2>&1; res "single process, 4 GPUs" $? $W/t_single4.log
CUDA_VISIBLE_DEVICES=0,1,2 timeout 100 $B/mccl_gpu_tests --gtest_filter='*PointToPointFifoSlots*' > $W/t_single3.log 2>&1; res "single process, 3 GPUs" $? $W/t_single3.log
cat $T
M="timeout 100 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
P="-b 8M -e 1G -f 2 -t 3 -c 0 -o broadcast,reduce"
for round in 1 2; do
  $M $B/mccl-perf $P --csv $W/s_mccl_$round.csv > /dev/null 2>&1
  $M -x NCCL_BUFFSIZE=524288 $B/mccl-perf $P --csv $W/s_b512K_$round.csv > /dev/null 2>&1
  $M -x MCCL_SIMPLE_POST_WARP=0 $B/mccl-perf $P --csv $W/s_pw0_$round.csv > /dev/null 2>&1
done
$M $B/nccl-perf $P --csv $W/s_nccl_1.csv > /dev/null 2>&1
M3="timeout 100 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES=0,1,2"
$M3 $B/mccl-perf $P --csv $W/t_mccl_1.csv > /dev/null 2>&1
$M3 $B/nccl-perf $P --csv $W/t_nccl_1.csv > /dev/null 2>&1
$M3 $B/mccl-perf $P --csv $W/t_mccl_2.csv > /dev/null 2>&1
{ python3 bench/summary.py $W s_; echo "### three ranks"; python3 bench/summary.py $W t_; } > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call4.tgz" -C "$W" .
