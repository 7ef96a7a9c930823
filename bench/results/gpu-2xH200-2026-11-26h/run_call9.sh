#!/usr/bin/env bash
# Call 9: the final build of 2026-11-26h (PDL for every kernel but the generic one, Simple
# channels) against NCCL in every buffer mode, 8 B - 4 MiB eager and 8 B - 1 MiB in CUDA
# graphs (modes.md), and the 8-byte MPI_Allreduce on device buffers (mpi_tiny.txt).
cd "$(dirname "$0")/../../.."
MODES_MAX=4M MODES_OPS=allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall \
  bash scripts/gpu-sweep.sh modes mpitiny
