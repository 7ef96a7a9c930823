#!/usr/bin/env bash
# Call 5 (2 x H200), for the next step: where one-way transfers lose on the user-buffer path.
# MCCL_PROFILE (the kernel steps' phases, averages at destroy) of Scatter (one way) and
# Send/Recv (both ways) of 64 MiB, the path off (default) and on for every Send/Recv from
# 16 MiB (MCCL_USER_BUFFERS_MIN_BYTES=16777216), programmatic dependent launch off so a
# block's start is its launch's; the eager times of the same runs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
for op in scatter sendrecv; do
  for v in "off:MCCL_USER_BUFFERS_MIN_BYTES=0" "on:MCCL_USER_BUFFERS_MIN_BYTES=16777216"; do
    timeout 60 $M -x MCCL_PROFILE=1 -x MCCL_PDL=0 -x ${v#*:} $B/mccl-perf -b 64M -e 64M -t 1 -w 5 -n 100 -c 0 -o $op > $W/prof_${op}_${v%%:*}.log 2>&1
    timeout 60 $M -x ${v#*:} $B/mccl-perf -b 64M -e 64M -t 3 -w 5 -n 100 -c 0 -o $op > $W/time_${op}_${v%%:*}.log 2>&1
  done
done
for f in $W/prof_*.log $W/time_*.log; do echo "### $(basename $f)"; tr '\r' '\n' < $f | grep -E "^ +[0-9]+ " | head -3; grep -h "mccl profile" $f | sort; done > $W/summary.txt
tar -czf "$OUT/call5.tgz" -C "$W" .
cat $W/summary.txt
