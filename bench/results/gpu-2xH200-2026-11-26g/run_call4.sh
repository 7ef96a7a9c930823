#!/usr/bin/env bash
# Call 4: the landed sparse table under MPI: the MPI GPU tests with the default table and
# with MCCL_CONN_TABLE=sparse (heads in their own exported blocks, mapped by the other
# process), the network path (NCCL_P2P_DISABLE=1, quick), device API, preload, examples.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call4.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
timeout 230 $M -x LD_LIBRARY_PATH=$L $B/mccl_gpu_mpi_tests > $W/gpu_mpi.log 2>&1; echo "rc=$?" >> $W/gpu_mpi.log
pack
timeout 150 $M -x LD_LIBRARY_PATH=$L -x MCCL_CONN_TABLE=sparse -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests > $W/gpu_mpi_sparse.log 2>&1; echo "rc=$?" >> $W/gpu_mpi_sparse.log
pack
timeout 60 $M -x LD_LIBRARY_PATH=$L -x NCCL_P2P_DISABLE=1 -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests > $W/gpu_mpi_net.log 2>&1; echo "rc=$?" >> $W/gpu_mpi_net.log
timeout 30 $M -x LD_LIBRARY_PATH=$L $B/mccl_gpu_devapi_tests > $W/gpu_devapi.log 2>&1; echo "rc=$?" >> $W/gpu_devapi.log
timeout 30 $M -x LD_LIBRARY_PATH=$L $B/mccl_preload_gpu_tests > $W/gpu_preload.log 2>&1; echo "rc=$?" >> $W/gpu_preload.log
for ex in allreduce_world two_level_reduce cg_solver; do
  timeout 30 $M -x LD_LIBRARY_PATH=$L $B/$ex > $W/ex_$ex.log 2>&1; echo "rc=$?" >> $W/ex_$ex.log
done
grep -H "rc=\|FAILED\|PASSED\|tests ran" $W/*.log | grep -v "OK \]" > $W/summary.txt
cat $W/summary.txt
pack
