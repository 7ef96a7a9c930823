#!/usr/bin/env bash
# Call 3 (one GPU, MPS): the build with MCCL_MPI_GRAPH_BYTES 65536 by default, the knob unset:
# the preload suite on 2 and 3 processes (its tests expect replays when the knob is unset),
# micro_mpi_tiny by default against MCCL_MPI_GRAPH_BYTES=0, two rounds.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d > $W/mps_start.txt 2>&1
MM="$M -x CUDA_MPS_PIPE_DIRECTORY -x MCCL_SHARED_GPU=2"
timeout 150 $MM $B/mccl_preload_gpu_tests > $W/preload2.log 2>&1
res "preload suite np 2 (MPS, knob unset)" $? $W/preload2.log
gtestLines $W/preload2.log >> $T
timeout 150 ${MM/-np 2/-np 3} $B/mccl_preload_gpu_tests > $W/preload3.log 2>&1
res "preload suite np 3 (MPS, knob unset)" $? $W/preload3.log
gtestLines $W/preload3.log >> $T
for round in 1 2; do
  timeout 60 $MM $B/micro_mpi_tiny 2000 > $W/tiny_default_$round.txt 2>&1 || echo "tiny default $round rc=$?" >> $W/errors.txt
  timeout 60 $MM -x MCCL_MPI_GRAPH_BYTES=0 $B/micro_mpi_tiny 2000 > $W/tiny_launch_$round.txt 2>&1 || echo "tiny launch $round rc=$?" >> $W/errors.txt
done
echo quit | nvidia-cuda-mps-control >> $W/mps_start.txt 2>&1
{
  echo "== micro_mpi_tiny, 2 processes under MPS, us a call (slower rank): default | MCCL_MPI_GRAPH_BYTES=0, rounds 1-2"
  for round in 1 2; do paste $W/tiny_default_$round.txt $W/tiny_launch_$round.txt | grep -E '^(route|flag|kernel) '; done
} >> $T
finish call3
