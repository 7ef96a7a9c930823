#!/usr/bin/env bash
# Call 2: GPU init, both orders (the fromMpi communicator made first in each repetition, as
# call 1, and the unique-id one first: --id-first), with MCCL_PROFILE_INIT's new parts of
# datapath-setup; NVIDIA's NCCL beside it; then the 8-byte MPI_Allreduce pieces
# (micro_mpi_tiny) on this build.
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
timeout 120 $M -x LD_LIBRARY_PATH=$L $B/micro_mpi_tiny 2000 > $W/mpi_tiny.txt 2>&1; echo "rc=$?" >> $W/mpi_tiny.txt
for f in $W/init_*.log; do echo "== $(basename $f)"; grep -v "mccl-profile" $f; done > $W/summary.txt
cat $W/mpi_tiny.txt >> $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call2.tgz" -C "$W" .
