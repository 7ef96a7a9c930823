#!/usr/bin/env bash
# Call 6, four GPUs: the landed build's four-rank AllReduce phases for the next step:
# MCCL_PROFILE with programmatic dependent launch off (MCCL_PDL=0, so a block's start is its
# launch's), 512 KiB (one hop), 1 and 2 MiB (two hops), and one hop forced at 1 MiB; eager
# times of the same runs with and without PDL.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
pack() { tar -czf "$OUT/call6.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
N=$(nvidia-smi -L | wc -l)
M="mpirun --allow-run-as-root --bind-to none -np $N -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
for s in 512K 1M 2M; do
  for v in "pdl0:MCCL_PDL=0" "pdl1:MCCL_PDL=1"; do
    timeout 60 $M -x MCCL_PROFILE=1 -x ${v#*:} $B/mccl-perf -b $s -e $s -t 1 -w 5 -n 200 -c 0 -o allreduce > $W/prof_${s}_${v%%:*}.log 2>&1
  done
done
timeout 60 $M -x MCCL_PROFILE=1 -x MCCL_PDL=0 -x MCCL_LL128_TWO_SHOT=0 $B/mccl-perf -b 1M -e 1M -t 1 -w 5 -n 200 -c 0 -o allreduce > $W/prof_1M_onehop.log 2>&1
pack
for f in $W/prof_*.log; do echo "### $(basename $f)"; grep -E "^ +[0-9]+ " $f | head -2; grep -h "mccl profile" $f | grep -E "rank [0-3] (LL|,)" | sort; done > $W/summary.txt
pack
cat $W/summary.txt
