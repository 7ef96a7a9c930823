#!/usr/bin/env bash
# Call 1 (one GPU): libmccl_mpi's host copies for point-to-point calls on device buffers
# (the GPU machine's Open MPI cannot take them): the preload suite, the new test among it,
# on 2 and 3 processes sharing the GPU; MPI ping-pong latency on host buffers without and
# with the preload (what its look at each buffer costs) and on device buffers through it.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 200 $M -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload2.log 2>&1
res "preload suite np 2" $? $W/preload2.log
gtestLines $W/preload2.log >> $T
timeout 200 ${M/-np 2/-np 3} -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload3.log 2>&1
res "preload suite np 3" $? $W/preload3.log
gtestLines $W/preload3.log >> $T
P="$L/libmccl_mpi.so"
for round in 1 2; do
  timeout 60 $M $B/micro_mpi_pingpong host 4194304 4000 > $W/pp_host_plain_$round.txt 2>&1
  timeout 60 $M -x LD_PRELOAD=$P $B/micro_mpi_pingpong host 4194304 4000 > $W/pp_host_preload_$round.txt 2>&1
done
timeout 90 $M -x LD_PRELOAD=$P $B/micro_mpi_pingpong device 4194304 1000 > $W/pp_device_preload.txt 2>&1
{
  echo "== ping-pong, host buffers: without preload | with preload (2 rounds each)"
  paste $W/pp_host_plain_1.txt $W/pp_host_preload_1.txt $W/pp_host_plain_2.txt $W/pp_host_preload_2.txt
  echo "== ping-pong, device buffers through the preload's host copies"
  cat $W/pp_device_preload.txt
} >> $T
finish call1
