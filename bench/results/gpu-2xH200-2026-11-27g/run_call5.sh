#!/usr/bin/env bash
# Call 5 (4 x H200), for the next session, knobs only on the final build: where four-rank
# Broadcast of 32-256 MiB loses to NCCL. NCCL's own choice (NCCL_DEBUG_SUBSYS=TUNING) and
# mccl's; mccl on 16, 24 (default) and 32 channels; MCCL_PROFILE (Simple: time per step
# waiting for flags and moving data) at 64 MiB, PDL off.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
M="timeout 90 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH=$L"
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
P="-b 32M -e 256M -f 2 -t 3 -c 0 -o broadcast"
$M -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING $B/nccl-perf $P --csv $W/b_nccl_1.csv > $W/nccl_tuning.log 2>&1
$M -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING $B/mccl-perf $P --csv $W/b_mccl_1.csv > $W/mccl_tuning.log 2>&1
$M -x NCCL_MAX_NCHANNELS=16 $B/mccl-perf $P --csv $W/b_ch16_1.csv > /dev/null 2>&1
$M -x NCCL_MIN_NCHANNELS=32 $B/mccl-perf $P --csv $W/b_ch32_1.csv > /dev/null 2>&1
$M $B/mccl-perf $P --csv $W/b_mccl_2.csv > /dev/null 2>&1
$M -x MCCL_PROFILE=1 -x MCCL_PDL=0 $B/mccl-perf -b 64M -e 64M -t 1 -w 5 -n 50 -c 0 -o broadcast > $W/prof_64M.log 2>&1
{ python3 bench/summary.py $W b_
  echo "### NCCL TUNING"; grep -a "Broadcast" $W/nccl_tuning.log | sort | uniq -c | head -12
  echo "### mccl TUNING"; grep -a "Broadcast" $W/mccl_tuning.log | sort | uniq -c | head -12
  echo "### profile 64 MiB"; grep -a "mccl profile" $W/prof_64M.log | sort | head -24; } > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call5.tgz" -C "$W" .
