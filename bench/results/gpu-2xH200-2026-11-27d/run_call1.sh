#!/usr/bin/env bash
# Call 1, two GPUs: (A) aligned sizes, the Simple kernels of this build against the build
# before (its simple_kernel.cu, .carry/ab/base), alternating; (B) AllGather and
# ReduceScatter whose blocks are no multiple of 16 bytes (sizes 2^k + 48: a rank's block 8
# bytes past one), this build, the build before, NCCL; (C) the GPU tests of both changes on
# the two GPUs, then with three and four ranks sharing them (MCCL_SHARED_GPU=1: correctness
# only, the ranks time-slice).
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
pack() { tar -czf "$OUT/call1.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
mp() { echo "mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$1"; }
# (A)
P="-b 4M -e 1G -f 4 -t 1 -w 3 -n 20 -c 0 -o allreduce,allgather,reducescatter,broadcast,sendrecv"
for r in 1 2; do
  for v in mccl base; do
    lib=$L; [ $v = base ] && lib=$L/ab/base:$L
    timeout 90 $(mp $lib) $B/mccl-perf $P -R 0 --csv $W/A_${v}_$r.csv > $W/A_${v}_$r.log 2>&1
  done
done
python3 bench/summary.py $W A_ > $W/summaryA.txt 2>&1; pack
# (B)
for r in 1 2; do
  for s in 1048624 4194352 16777264 67108912 268435504; do
    for v in mccl base nccl; do
      lib=$L; [ $v = base ] && lib=$L/ab/base:$L
      bin=$B/mccl-perf; [ $v = nccl ] && bin=$B/nccl-perf
      timeout 40 $(mp $lib) $bin -b $s -e $s -t 1 -w 3 -n 20 -c 0 -o allgather,reducescatter -R 0 --csv $W/B_${v}_$r$s.csv > $W/B_${v}_$r$s.log 2>&1
    done
  done
done
for f in $W/B_*_*.csv; do b=$(basename $f .csv); v=${b#B_}; v=${v%%_*}; r=${b##*_}; r=${r:0:1}; cat $f >> $W/Bm_${v}_$r.tmp; done
for f in $W/Bm_*.tmp; do awk 'NR==1 || !/^lib,/' $f > ${f%.tmp}.csv; rm $f; done
python3 bench/summary.py $W Bm_ > $W/summaryB.txt 2>&1; pack
# (C)
F='GpuSingleProcess.Ll128TwoShot*:GpuSingleProcess.SimpleUnaligned*:GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm:GpuSingleProcess.Ll128KernelsAndGeneric*:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol'
LD_LIBRARY_PATH=$L timeout 150 $B/mccl_gpu_tests --gtest_filter="$F" > $W/tests2.log 2>&1; echo "rc=$?" >> $W/tests2.log
pack
F3='GpuSingleProcess.Ll128TwoShot*:GpuSingleProcess.SimpleUnaligned*'
for k in 3 4; do
  MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$k LD_LIBRARY_PATH=$L timeout 100 $B/mccl_gpu_tests --gtest_filter="$F3" > $W/tests$k.log 2>&1; echo "rc=$?" >> $W/tests$k.log
  pack
done
cat $W/summaryA.txt $W/summaryB.txt; grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) |rc=" $W/tests*.log
