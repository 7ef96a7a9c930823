#!/usr/bin/env bash
# Call 5 (call 3 was not run: its test binary was the build before), four GPUs: the GPU tests
# of the LL family on call 4's build, on the four GPUs, on two of them, and
# with five ranks sharing the four (LL128 reductions read three batches of ranks).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
pack() { tar -czf "$OUT/call5.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
F='GpuSingleProcess.Ll*:GpuSingleProcess.LeanAndGeneral*:GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol:GpuSingleProcess.AlltoAll*:GpuSingleProcess.CallsQueuedBehindATimeout*'
LD_LIBRARY_PATH=$L timeout 240 $B/mccl_gpu_tests --gtest_filter="$F" > $W/tests4.log 2>&1; echo "rc=$?" >> $W/tests4.log
pack
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=5 LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.Ll*:GpuSingleProcess.LeanAndGeneral*:GpuSingleProcess.EveryTypeOpAndForm' > $W/tests5.log 2>&1; echo "rc=$?" >> $W/tests5.log
pack
CUDA_VISIBLE_DEVICES=0,1 LD_LIBRARY_PATH=$L timeout 120 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.Ll*:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol' > $W/tests2.log 2>&1; echo "rc=$?" >> $W/tests2.log
pack
grep -hE "^\[       OK|^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|rc=" $W/tests4.log $W/tests5.log $W/tests2.log
