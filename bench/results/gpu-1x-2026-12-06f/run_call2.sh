#!/usr/bin/env bash
# Call 2 (one GPU, two and three processes at once under MPS): libmccl_mpi's small blocking
# calls replaying CUDA graphs (MCCL_MPI_GRAPH_BYTES=65536; 0, the default until this has run)
# against launching their kernel each call (MCCL_MPI_GRAPH_BYTES=0), micro_mpi_tiny's 8-byte MPI_Allreduce ways,
# interleaved rounds; the preload suite under MPS on 2 and 3 processes.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d > $W/mps_start.txt 2>&1
MM="$M -x CUDA_MPS_PIPE_DIRECTORY -x MCCL_SHARED_GPU=2"
G="-x MCCL_MPI_GRAPH_BYTES=65536"
for round in 1 2 3; do
  for v in graphs launch; do
    x=$G; [ $v = launch ] && x="-x MCCL_MPI_GRAPH_BYTES=0"
    timeout 120 $MM $x $B/micro_mpi_tiny 2000 > $W/tiny_${v}_$round.txt 2>&1 || echo "tiny $v $round rc=$?" >> $W/errors.txt
  done
done
timeout 240 $MM $G $B/mccl_preload_gpu_tests > $W/preload2.log 2>&1
res "preload suite np 2 (MPS)" $? $W/preload2.log
gtestLines $W/preload2.log >> $T
timeout 240 ${MM/-np 2/-np 3} $G $B/mccl_preload_gpu_tests > $W/preload3.log 2>&1
res "preload suite np 3 (MPS)" $? $W/preload3.log
gtestLines $W/preload3.log >> $T
timeout 120 $MM -x MCCL_MPI_GRAPH_BYTES=0 $B/mccl_preload_gpu_tests --gtest_filter='*Small*:*Repeated*' > $W/preload2_nographs.log 2>&1
res "preload small and repeated, MCCL_MPI_GRAPH_BYTES=0, np 2 (MPS)" $? $W/preload2_nographs.log
gtestLines $W/preload2_nographs.log >> $T
echo quit | nvidia-cuda-mps-control >> $W/mps_start.txt 2>&1
{
  echo "== micro_mpi_tiny, 2 processes under MPS, us a call (slower rank): graphs | launch, rounds 1-3"
  for round in 1 2 3; do paste $W/tiny_graphs_$round.txt $W/tiny_launch_$round.txt; done
} >> $T
finish call2
