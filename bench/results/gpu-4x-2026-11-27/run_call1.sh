#!/usr/bin/env bash
# Call 1 (build of 782e936): the first run on four GPUs. Topology, every collective on plain
# buffers 8 B - 2 GiB beside NCCL plain and registered (one round), the MPI GPU tests with
# four ranks (quick sizes), the single-process GPU tests with four GPUs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
N=$(nvidia-smi -L | wc -l)
M="mpirun --allow-run-as-root --bind-to none -np $N -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call1.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt; nvidia-smi topo -m >> $W/when.txt 2>&1
A="-b 8 -e 2G -f 4 -t 1 -w 3 -n 20 -c 0 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall,gather,scatter"
timeout 150 $M $B/mccl-perf $A -R 0 --csv $W/A_mccl_1.csv > $W/A_mccl.log 2>&1; echo "rc=$?" >> $W/A_mccl.log
timeout 150 $M $B/nccl-perf $A -R 0 --csv $W/A_nccl_1.csv > $W/A_nccl.log 2>&1
timeout 150 $M $B/nccl-perf $A -R 1 --csv $W/A_ncclreg_1.csv > $W/A_ncclreg.log 2>&1
python3 bench/summary.py $W A_ > $W/summary.txt; pack
MCCL_TEST_QUICK=1 timeout 150 $M -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests > $W/mpi4.log 2>&1; echo "rc=$?" >> $W/mpi4.log
pack

LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_tests > $W/single4.log 2>&1; echo "rc=$?" >> $W/single4.log
pack
cat $W/summary.txt; tail -5 $W/mpi4.log $W/single4.log
