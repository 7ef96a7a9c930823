#!/usr/bin/env bash
# Call 2: the sparse connection table under MPI (one process per GPU: head blocks exported
# through CUDA IPC, FIFOs mapped per peer): the MPI GPU tests plain and with
# NCCL_P2P_DISABLE=1 (network connections in the same table), the device API tests, the
# preload GPU tests and the examples under mpirun.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
timeout 280 $M -x LD_LIBRARY_PATH=$L $B/mccl_gpu_mpi_tests > $W/gpu_mpi.log 2>&1; echo "rc=$?" >> $W/gpu_mpi.log
timeout 120 $M -x LD_LIBRARY_PATH=$L -x NCCL_P2P_DISABLE=1 -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests > $W/gpu_mpi_net.log 2>&1; echo "rc=$?" >> $W/gpu_mpi_net.log
timeout 60 $M -x LD_LIBRARY_PATH=$L $B/mccl_preload_gpu_tests > $W/gpu_preload.log 2>&1; echo "rc=$?" >> $W/gpu_preload.log
timeout 50 $M -x LD_LIBRARY_PATH=$L $B/mccl_gpu_devapi_tests > $W/gpu_devapi.log 2>&1; echo "rc=$?" >> $W/gpu_devapi.log
for ex in allreduce_world two_level_reduce cg_solver; do
  timeout 25 $M -x LD_LIBRARY_PATH=$L $B/$ex > $W/ex_$ex.log 2>&1; echo "rc=$?" >> $W/ex_$ex.log
done
grep -H "rc=\|FAILED\|PASSED\|OK \]" $W/*.log > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call2.tgz" -C "$W" .
