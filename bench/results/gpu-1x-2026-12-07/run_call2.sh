#!/usr/bin/env bash
# Call 2 (one GPU, MPS): the whole MPI GPU suite (mccl_gpu_mpi_tests, 14 tests) on two and
# three processes running at once on the GPU under MPS, where until 2026-12-06 they took it
# in 2 ms time slices; the device-API test on two processes; and small collectives between
# two processes under MPS (mccl-perf, eager and in graphs, 8 B - 1 MiB): a one-GPU baseline,
# flags through the GPU's L2, nothing against NCCL.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d > $W/mps_start.txt 2>&1
M="$M -x CUDA_MPS_PIPE_DIRECTORY"
SECONDS=0
mpitests '*' 240
mv $W/mpi.log $W/mpi_np2.log
echo "(np 2: ${SECONDS} s)" >> $T
cp $T $OUT/tests.txt
SECONDS=0
NP=3 M=${M/-np 2/-np 3} mpitests '*' 150
mv $W/mpi.log $W/mpi_np3.log
echo "(np 3: ${SECONDS} s)" >> $T
cp $T $OUT/tests.txt
timeout 60 $M -x MCCL_SHARED_GPU=2 $B/mccl_gpu_devapi_tests > $W/devapi.log 2>&1
res "devapi np 2 (MPS)" $? $W/devapi.log
gtestLines $W/devapi.log >> $T
RUN_TIMEOUT=60
run small mccl 1 "-b 8 -e 1M -f 8 -o allreduce,allgather,broadcast,sendrecv -t 3" MCCL_SHARED_GPU=2
run smallgraph mccl 1 "-b 8 -e 1M -f 8 -o allreduce,allgather,broadcast,sendrecv -G 10 -t 3" MCCL_SHARED_GPU=2
echo quit | nvidia-cuda-mps-control >> $W/mps_start.txt 2>&1
finish call2
