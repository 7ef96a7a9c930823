#!/usr/bin/env bash
# Call 1 (one H200, main at ec39395): the GPU path after the host-side changes of
# 2026-12-04/05 (shared-memory Send/Recv, idle yield, mcclStreamSynchronize, mcclMpiComm's
# cache, enqueue checks, group op-list reuse): the unit tests with a GPU, every single-process
# GPU test on 2 ranks as threads sharing the GPU, the preload tests on two processes sharing
# it, and the 8-byte floor (micro_mpi_tiny np 1; mccl-threads-bench small sizes) for the record.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 90 $B/mccl_unit_tests > $W/unit.log 2>&1
res "unit" $? $W/unit.log
gtests 2 "*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" 300
MCCL_SHARED_GPU=2 timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x MCCL_SHARED_GPU \
  -x MCCL_TIMEOUT -x LD_LIBRARY_PATH=$L $B/mccl_preload_gpu_tests > $W/preload.log 2>&1
res "preload np 2 sharing the GPU" $? $W/preload.log
grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/preload.log >> $T
timeout 60 mpirun --allow-run-as-root -np 1 -x LD_LIBRARY_PATH=$L $B/micro_mpi_tiny 2000 > $W/tiny_np1.txt 2>&1
[ $SECONDS -lt 500 ] && tb ll new 1 "-r 2 -b 8 -e 64K -f 8 -n 200 -G 20 -o allreduce,allgather,broadcast,sendrecv"
cp $W/tiny_np1.txt $OUT/
finish call1 ll
