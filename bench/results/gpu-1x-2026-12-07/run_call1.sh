#!/usr/bin/env bash
# Call 1 (one GPU, MPS, two and three processes at once): the build with MCCL_MPI_GRAPH_BYTES
# 65536 by default and the knob unset (gpu-1x-2026-12-06f's call 3, never run): the preload
# suite on 2 and 3 processes, micro_mpi_tiny by default against MCCL_MPI_GRAPH_BYTES=0; then
# where a small MPI_Allreduce's host time goes under MCCL_PROFILE (the route's entry, mccl's
# enqueue, plan and launch, the wait; the LL kernel's steps), launched and replayed.
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
cp $T $OUT/tests.txt
for round in 1 2; do
  timeout 60 $MM $B/micro_mpi_tiny 2000 > $W/tiny_default_$round.txt 2>&1 || echo "tiny default $round rc=$?" >> $W/errors.txt
  timeout 60 $MM -x MCCL_MPI_GRAPH_BYTES=0 $B/micro_mpi_tiny 2000 > $W/tiny_launch_$round.txt 2>&1 || echo "tiny launch $round rc=$?" >> $W/errors.txt
done
# The profiles: route alone (launched, then replayed), kernel alone (mcclMpiAllreduce and
# mcclStreamSynchronize), flag for the floor; each process prints its lines at exit.
for round in 1 2; do
  timeout 60 $MM -x MCCL_PROFILE=1 -x MCCL_MPI_GRAPH_BYTES=0 $B/micro_mpi_tiny 2000 route,flag > $W/prof_launch_$round.txt 2>&1 || echo "prof launch $round rc=$?" >> $W/errors.txt
  timeout 60 $MM -x MCCL_PROFILE=1 $B/micro_mpi_tiny 2000 route,flag > $W/prof_replay_$round.txt 2>&1 || echo "prof replay $round rc=$?" >> $W/errors.txt
  timeout 60 $MM -x MCCL_PROFILE=1 $B/micro_mpi_tiny 2000 kernel,flag > $W/prof_kernel_$round.txt 2>&1 || echo "prof kernel $round rc=$?" >> $W/errors.txt
done
echo quit | nvidia-cuda-mps-control >> $W/mps_start.txt 2>&1
{
  echo "== micro_mpi_tiny, 2 processes under MPS, us a call (slower rank): default | MCCL_MPI_GRAPH_BYTES=0, rounds 1-2"
  for round in 1 2; do paste $W/tiny_default_$round.txt $W/tiny_launch_$round.txt | grep -E '^(route|flag|kernel|empty) '; done
  for f in $W/prof_*_*.txt; do echo "== $(basename $f)"; grep -aE '^(route|flag|kernel) |mccl profile' $f | cut -c1-400; done
} >> $T
finish call1
