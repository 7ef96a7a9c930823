#!/usr/bin/env bash
# Call 5, two GPUs: where the unaligned AllGather / ReduceScatter of 1 MiB + 48 lose to NCCL
# (call 1: 0.91, 0.81): 1 MiB aligned beside 1 MiB + 48 and 4 MiB + 48, this build and NCCL,
# then this build's step profile (MCCL_PROFILE=1) of each.
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
pack() { tar -czf "$OUT/call5.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
for r in 1 2 3; do
  for s in 1048576 1048624 2097152 2097200 4194352; do
    for v in mccl nccl; do
      bin=$B/mccl-perf; [ $v = nccl ] && bin=$B/nccl-perf
      timeout 40 $M $bin -b $s -e $s -t 1 -w 3 -n 50 -c 0 -o allgather,reducescatter -R 0 --csv $W/S_${v}_$r$s.csv > $W/S_${v}_$r$s.log 2>&1
    done
  done
done
for f in $W/S_*_*.csv; do b=$(basename $f .csv); v=${b#S_}; v=${v%%_*}; r=${b##*_}; r=${r:0:1}; cat $f >> $W/Sm_${v}_$r.tmp; done
for f in $W/Sm_*.tmp; do awk 'NR==1 || !/^lib,/' $f > ${f%.tmp}.csv; rm $f; done
python3 bench/summary.py $W Sm_ > $W/summaryS.txt 2>&1; pack
for s in 1048576 1048624; do
  for op in allgather reducescatter; do
    timeout 40 $M -x MCCL_PROFILE=1 $B/mccl-perf -b $s -e $s -t 1 -w 3 -n 200 -c 0 -o $op -R 0 > $W/prof_${op}_$s.log 2>&1
  done
done
pack
cat $W/summaryS.txt; for f in $W/prof_*.log; do echo "== $f"; grep -iE "rank 0.*(simple|step|wait|move|host us)" $f | head -8; done
