#!/usr/bin/env bash
# Call 3: the point-to-point family in NCCL's modes after the self copy: mccl and NCCL with
# cudaMalloc buffers (-R 0), ncclMemAlloc + ncclCommRegister (-R 1) and symmetric windows
# (-R 2), 512 KiB - 2 GiB, eager; then the blocks (SMs) each library takes for them
# (NCCL_DEBUG_SUBSYS=TUNING lines of both, rank 0).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
ops=gather,scatter,alltoall,sendrecv
for R in 0 1 2; do
  for lib in mccl nccl; do
    $M $B/$lib-perf -R $R -b 512K -e 2G -f 4 -t 3 -c 0 -o $ops --csv $W/${lib}_R$R.csv > $W/${lib}_R$R.log 2>&1 || echo "$lib R$R failed"
  done
done
for lib in mccl nccl; do
  $M -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING,INIT $B/$lib-perf -b 512K -e 2G -f 4 -n 2 -w 1 -t 1 -c 0 -o $ops > $W/${lib}_tuning.log 2>&1
done
# The self Send/Recv test (its groups 2-4 rewritten after call 2: a lone Send to itself
# had no connection to itself to go through), 2 GPUs and 3 ranks sharing them.
export CUDA_DEVICE_MAX_CONNECTIONS=32
timeout 120 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.SelfSendRecv*' > $W/tests_self_2gpus.log 2>&1; echo "rc=$?" >> $W/tests_self_2gpus.log
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 timeout 120 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.SelfSendRecv*' > $W/tests_self_3.log 2>&1; echo "rc=$?" >> $W/tests_self_3.log
grep -h "rc=\|OK \]\|FAILED \]" $W/tests_self_*.log
tar -czf "$OUT/call3.tgz" -C "$W" .
