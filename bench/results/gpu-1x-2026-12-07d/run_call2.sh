#!/usr/bin/env bash
# Call 2 (one GPU, after call 1): launch graphs on two processes under MPS (mccl-perf, one
# context each, as on two GPUs): eager times with the knob at its default ("on") and 0
# ("off"), alternating, two rounds, with and without programmatic dependent launch
# (MCCL_PDL=2; off by default where ranks share a GPU).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
date -u >> $T
mpsStart
P="-b 8 -e 1M -f 8 -n 2000 -w 200 -t 3 --no-mpi -c 0 -o allreduce,allgather,broadcast,reducescatter,sendrecv"
for round in 1 2; do
  run mps on $round "$P" MCCL_SHARED_GPU=2
  run mps off $round "$P" MCCL_SHARED_GPU=2 MCCL_LAUNCH_GRAPH_BYTES=0
  run mpspdl on $round "$P" MCCL_SHARED_GPU=2 MCCL_PDL=2
  run mpspdl off $round "$P" MCCL_SHARED_GPU=2 MCCL_PDL=2 MCCL_LAUNCH_GRAPH_BYTES=0
done
mpsStop
finish call2 mps mpspdl
