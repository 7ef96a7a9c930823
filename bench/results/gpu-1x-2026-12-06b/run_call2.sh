#!/usr/bin/env bash
# Call 2 (one GPU): after call 1 found micro_mpi_tiny crashing (it declared
# mcclMpiRouteAllreduce without the request argument added on 2026-12-06; the declarations
# now come from one header). micro_mpi_tiny on one process (the floor of each way to finish
# an 8-byte MPI_Allreduce on device buffers, the route's included) and on two sharing the
# GPU (every variant's check; times are time slices); the preload suite on 2 processes (the
# nonblocking test now makes one more call after freeing two communicators, which destroys
# their streams).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 90 ${M/-np 2/-np 1} $B/micro_mpi_tiny > $W/mpi_tiny_np1.txt 2>&1
echo "micro_mpi_tiny np 1: rc=$?" >> $T; cat $W/mpi_tiny_np1.txt | grep -v '^\[' | head -30 >> $T
MCCL_SHARED_GPU=2 timeout 90 $M -x MCCL_SHARED_GPU $B/micro_mpi_tiny 20 > $W/mpi_tiny_np2.txt 2>&1
echo "micro_mpi_tiny np 2 sharing: rc=$?" >> $T; cat $W/mpi_tiny_np2.txt | grep -v '^\[' | head -30 >> $T
cp $T $OUT/tests.txt
timeout 150 $M -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload2.log 2>&1
res "preload suite np 2" $? $W/preload2.log
gtestLines $W/preload2.log >> $T
finish call2
