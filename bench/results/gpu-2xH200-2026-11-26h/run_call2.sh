#!/usr/bin/env bash
# Call 2: every GPU test on the build of call 1 (PDL for every LL-family and Simple launch):
# single process (default, then LL, LL128 and Simple forced on their subsets), MPI np 2
# (default, LL, LL128), the device API, the preload tests; the chained test with 3 ranks
# sharing the GPUs (MCCL_SHARED_GPU: PDL off there).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32 LD_LIBRARY_PATH=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call2.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
timeout 280 $B/mccl_gpu_tests > $W/single_default.log 2>&1; echo "rc=$?" >> $W/single_default.log
pack
for proto in LL LL128 Simple; do
  f='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.OneThreadGroups*:GpuSingleProcess.GraphCapture*:*Chained*'
  NCCL_PROTO=$proto timeout 100 $B/mccl_gpu_tests --gtest_filter="$f" > $W/single_$proto.log 2>&1; echo "rc=$?" >> $W/single_$proto.log
done
pack
for proto in default LL LL128; do
  p=""; [ $proto != default ] && p=$proto
  NCCL_PROTO=$p MCCL_TEST_QUICK=1 timeout 100 $M -x NCCL_PROTO -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests > $W/mpi_$proto.log 2>&1; echo "rc=$?" >> $W/mpi_$proto.log
done
timeout 60 $M $B/mccl_gpu_devapi_tests > $W/devapi.log 2>&1; echo "rc=$?" >> $W/devapi.log
timeout 60 $M $B/mccl_preload_gpu_tests > $W/preload.log 2>&1; echo "rc=$?" >> $W/preload.log
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 timeout 100 $B/mccl_gpu_tests '--gtest_filter=*Chained*' > $W/chain3.log 2>&1; echo "rc=$?" >> $W/chain3.log
grep -aH "rc=\|^\[  FAILED\|^\[  PASSED\|Failure" $W/*.log | tee $W/summary.txt
pack
