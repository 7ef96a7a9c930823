#!/usr/bin/env bash
# Call 4 (four GPUs): the committed build's GPU tests (f614e2c): every single-process test
# on four GPUs, every MPI test at np 4 (MCCL_TEST_QUICK), the device-API tests at np 2,
# the README example.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
res() { echo "$1: rc=$2 $(grep -aE '^.{0,12}(PASSED|FAILED|SKIPPED)' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T; grep -a -m12 -E 'rank [0-9]+:|Failure|expected|Which is|FAILED' "$3" | tr -d '\033' | cut -c1-300 >> $T; }
timeout 280 $B/mccl_gpu_tests > $W/t_single4.log 2>&1; res "single process, 4 GPUs" $? $W/t_single4.log
timeout 170 $M -np 4 -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests > $W/t_mpi4.log 2>&1; res "MPI np 4 (quick)" $? $W/t_mpi4.log
timeout 50 $M -np 2 $B/mccl_gpu_devapi_tests > $W/t_devapi.log 2>&1; res "device API np 2" $? $W/t_devapi.log
timeout 30 $M -np 4 $B/allreduce_world > $W/t_example.log 2>&1; echo "example: rc=$? $(tail -1 $W/t_example.log)" >> $T
cat $T
tar -czf "$OUT/call4.tgz" -C "$W" .
