#!/usr/bin/env bash
# Call 7 (the Simple kernel joins an unaligned first operand's vectors from the two
# aligned ones it straddles, combineShifted; its element loop four elements a thread in
# flight): three ranks on GPUs 0-2, where a rank's block of a power-of-two total is no
# multiple of 16 bytes: the single-process tests of every collective, type, operator and
# form (and with two GPUs), then 64 KiB - 256 MiB beside NCCL.
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 3 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L -x CUDA_VISIBLE_DEVICES=0,1,2"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call7.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
F='GpuSingleProcess.TreesAndBinomialTreesWhereNcclAlgoAsks:GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm:GpuSingleProcess.LargeBuffers'
CUDA_VISIBLE_DEVICES=0,1,2 LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_tests --gtest_filter="$F" > $W/single3.log 2>&1; echo "rc=$?" >> $W/single3.log
CUDA_VISIBLE_DEVICES=0,1 LD_LIBRARY_PATH=$L timeout 100 $B/mccl_gpu_tests --gtest_filter="$F" > $W/single2.log 2>&1; echo "rc=$?" >> $W/single2.log
pack
T="-b 64K -e 256M -f 4 -t 1 -w 3 -n 20 -c 0 -o allgather,reducescatter,allreduce,broadcast,reduce"
timeout 90 $M $B/mccl-perf $T -R 0 --csv $W/T_mccl_1.csv > $W/T_mccl_1.log 2>&1
timeout 90 $M $B/nccl-perf $T -R 0 --csv $W/T_nccl_1.csv > $W/T_nccl_1.log 2>&1
python3 bench/summary.py $W T_ > $W/summaryT.txt; pack
cat $W/summaryT.txt; grep -aE "OK|PASSED|FAILED|rc=" $W/single3.log $W/single2.log
