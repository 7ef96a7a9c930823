#!/usr/bin/env bash
# Call 4: the self Send/Recv test and the point-to-point family's tests with every launch in
# the generic kernel (MCCL_SIMPLE_KERNEL=0: its selfCopy branch), 2 GPUs and 3 ranks
# sharing them; the MPI GPU tests (np 2).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-} CUDA_DEVICE_MAX_CONNECTIONS=32
W=$(mktemp -d)
F='GpuSingleProcess.SelfSendRecv*:GpuSingleProcess.AlltoAll*:GpuSingleProcess.PointToPoint*'
MCCL_SIMPLE_KERNEL=0 timeout 200 $B/mccl_gpu_tests --gtest_filter="$F" > $W/generic_2gpus.log 2>&1; echo "rc=$?" >> $W/generic_2gpus.log
MCCL_SIMPLE_KERNEL=0 MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 timeout 200 $B/mccl_gpu_tests --gtest_filter="$F" > $W/generic_3.log 2>&1; echo "rc=$?" >> $W/generic_3.log
mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH timeout 250 $B/mccl_gpu_mpi_tests > $W/mpi.log 2>&1; echo "rc=$?" >> $W/mpi.log
grep -h "rc=\|OK \]\|FAILED \]" $W/*.log
tar -czf "$OUT/call4.tgz" -C "$W" .
