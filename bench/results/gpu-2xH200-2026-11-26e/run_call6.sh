#!/usr/bin/env bash
# Call 6: the network path's destroy drains what the kernels posted (GpuNet::drain). The
# test that hung in calls 4 and 5 (MemoryComesBackAfterDestroy: a communicator used, then
# destroyed, then more made), NCCL_P2P_DISABLE=1, repeated 15 times in one run: this tree,
# then main at 16e9ed6 (.carry/ab/old) for comparison.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
T="-x NCCL_P2P_DISABLE=1 -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests --gtest_filter=*MemoryComesBack* --gtest_repeat=15"
timeout 150 $M -x LD_LIBRARY_PATH=$L $T > $W/net_new.log 2>&1; echo "rc=$?" >> $W/net_new.log
timeout 100 $M -x LD_LIBRARY_PATH=$L/ab/old:$L $T > $W/net_old.log 2>&1; echo "rc=$?" >> $W/net_old.log
for v in new old; do echo "$v: $(grep -c 'OK \]' $W/net_$v.log) passed, $(grep -c 'FAILED  \]' $W/net_$v.log) failed lines, $(grep 'rc=' $W/net_$v.log)"; done > $W/summary.txt
grep -h "MCCL_TIMEOUT\|gave up" $W/net_*.log | head -4 >> $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call6.tgz" -C "$W" .
