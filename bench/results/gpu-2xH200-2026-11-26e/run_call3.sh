#!/usr/bin/env bash
# Call 3: the network path made on first need (no UCX worker at init for a GPU
# communicator) and the pooled host flag blocks. GPU init both orders beside NVIDIA's NCCL
# (as call 2); every single-process GPU test; the MPI GPU tests on two ranks, plain and
# with NCCL_P2P_DISABLE=1 (every peer over the UCX proxy: the worker made on the first
# connection, MCCL_TEST_QUICK=1); the preload's GPU tests; a small-size mccl/NCCL check.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
for round in 1 2; do
  for order in "" --id-first; do
    timeout 60 $M -x LD_LIBRARY_PATH=$L -x MCCL_PROFILE_INIT=1 $B/mccl-init-bench --gpu 7 $order > $W/init_gpu${order}_r$round.log 2>&1
    echo "rc=$?" >> $W/init_gpu${order}_r$round.log
  done
  timeout 90 $M $B/nccl-init-bench 7 > $W/init_nccl_r$round.log 2>&1; echo "rc=$?" >> $W/init_nccl_r$round.log
done
LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_tests > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
timeout 150 $M -x LD_LIBRARY_PATH=$L $B/mccl_gpu_mpi_tests > $W/gpu_mpi.log 2>&1; echo "rc=$?" >> $W/gpu_mpi.log
timeout 200 $M -x LD_LIBRARY_PATH=$L -x NCCL_P2P_DISABLE=1 -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests > $W/gpu_mpi_net.log 2>&1; echo "rc=$?" >> $W/gpu_mpi_net.log
timeout 100 $M -x LD_LIBRARY_PATH=$L $B/mccl_preload_gpu_tests > $W/gpu_preload.log 2>&1; echo "rc=$?" >> $W/gpu_preload.log
for lib in mccl nccl; do
  timeout 60 $M -x LD_LIBRARY_PATH=$L $B/$lib-perf -b 8 -e 1M -f 8 -t 1 -o allreduce,allgather,sendrecv -c 1 --csv $W/perf_$lib.csv > $W/perf_$lib.txt 2>&1; echo "rc=$?" >> $W/perf_$lib.txt
done
{ for f in $W/init_*.log; do echo "== $(basename $f)"; grep -v "mccl-profile" $f; done
  grep -H "rc=\|FAILED\|PASSED\|wrong\|mismatch" $W/gpu_*.log $W/perf_*.txt; } > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call3.tgz" -C "$W" .
