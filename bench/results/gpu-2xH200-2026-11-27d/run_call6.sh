#!/usr/bin/env bash
# Call 6, four GPUs: the build with two hops by default (four ranks or more, from 1 MiB):
# AllReduce 256 KiB - 8 MiB against NCCL (and MCCL_LL128_TWO_SHOT=0), 2 rounds; the GPU tests
# of the change on the four GPUs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
pack() { tar -czf "$OUT/call6.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
N=$(nvidia-smi -L | wc -l)
M="mpirun --allow-run-as-root --bind-to none -np $N -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
P="-b 256K -e 8M -f 2 -t 1 -w 3 -n 30 -c 1 -o allreduce"
for r in 1 2; do
  timeout 60 $M $B/mccl-perf $P -R 0 --csv $W/F_mccl_$r.csv > $W/F_mccl_$r.log 2>&1
  timeout 60 $M -x MCCL_LL128_TWO_SHOT=0 $B/mccl-perf $P -R 0 --csv $W/F_onehop_$r.csv > $W/F_onehop_$r.log 2>&1
  timeout 60 $M $B/nccl-perf $P -R 0 --csv $W/F_nccl_$r.csv > $W/F_nccl_$r.log 2>&1
done
python3 bench/summary.py $W F_ > $W/summaryF.txt 2>&1; pack
F='GpuSingleProcess.Ll128TwoShot*:GpuSingleProcess.SimpleUnaligned*:GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.LargeBuffers:GpuSingleProcess.CollectivesChainedOnOneStream*'
LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_tests --gtest_filter="$F" > $W/tests4.log 2>&1; echo "rc=$?" >> $W/tests4.log
pack
cat $W/summaryF.txt; grep -E "check|wrong|FAIL" $W/F_mccl_1.log | head -5; grep -hE "^\[       OK|^\[  (PASSED|FAILED|SKIPPED) |rc=" $W/tests4.log
