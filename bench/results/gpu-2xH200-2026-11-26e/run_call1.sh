#!/usr/bin/env bash
# Call 1: the tree with the identity ring kept off the device (GPU comms of one node copy
# no ring tables) and the receive that completes after its sender ended: every
# single-process GPU test, the MPI GPU tests on two ranks, GPU init (mccl-init-bench --gpu and
# nccl-init-bench, np 2), and a side-by-side check of mccl and NCCL (AllReduce, AllGather, 8 B - 64 MiB).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
LD_LIBRARY_PATH=$L timeout 300 $B/mccl_gpu_tests > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
timeout 240 $M -x LD_LIBRARY_PATH=$L $B/mccl_gpu_mpi_tests > $W/gpu_mpi.log 2>&1; echo "rc=$?" >> $W/gpu_mpi.log
timeout 60 $M -x LD_LIBRARY_PATH=$L -x MCCL_PROFILE_INIT=1 $B/mccl-init-bench --gpu 5 > $W/init_gpu.log 2>&1; echo "rc=$?" >> $W/init_gpu.log
timeout 90 $M $B/nccl-init-bench 5 > $W/init_nccl.log 2>&1; echo "rc=$?" >> $W/init_nccl.log
for lib in mccl nccl; do
  timeout 90 $M -x LD_LIBRARY_PATH=$L $B/$lib-perf -b 8 -e 64M -f 4 -t 1 -o allreduce,allgather -c 1 --csv $W/perf_$lib.csv > $W/perf_$lib.txt 2>&1; echo "rc=$?" >> $W/perf_$lib.txt
done
grep -h "rc=\|FAILED\|PASSED\|wrong\|mismatch" $W/gpu_single.log $W/gpu_mpi.log $W/init_gpu.log $W/init_nccl.log $W/perf_*.txt > $W/summary.txt
grep -hv "mccl-profile" $W/init_gpu.log $W/init_nccl.log >> $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call1.tgz" -C "$W" .
