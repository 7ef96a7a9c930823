#!/usr/bin/env bash
# Call 5 (two GPUs, the machine of call 4): issue 12's MPI_Allreduce of 8 bytes on device
# buffers through libmccl_mpi and its pieces (micro_mpi_tiny), the landed build (ab/old), two
# runs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="timeout 120 mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L/ab/old:$L"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
for r in 1 2; do $M $B/micro_mpi_tiny 2000 > $W/mpi_tiny_$r.txt 2>&1; echo "rc=$?" >> $W/mpi_tiny_$r.txt; done
cat $W/mpi_tiny_*.txt > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call5.tgz" -C "$W" .
