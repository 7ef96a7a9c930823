#!/usr/bin/env bash
# Call 3 (one GPU, after call 2): the host's part of an eager 8-byte AllReduce with and
# without launch graphs (MCCL_PROFILE's averages, two processes under MPS), the preload suite
# on two processes, and 8-byte MPI_Allreduce through libmccl_mpi (tinyAb: its own graphs,
# and launched), this build against ab/base.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
date -u >> $T
mpsStart
Q="-b 8 -e 8 -n 5000 -w 200 -t 1 --no-mpi -c 0 -o allreduce"
run prof on 1 "$Q" MCCL_SHARED_GPU=2 MCCL_PROFILE=1
run prof off 1 "$Q" MCCL_SHARED_GPU=2 MCCL_PROFILE=1 MCCL_LAUNCH_GRAPH_BYTES=0
run prof pdlon 1 "$Q" MCCL_SHARED_GPU=2 MCCL_PROFILE=1 MCCL_PDL=2
run prof pdloff 1 "$Q" MCCL_SHARED_GPU=2 MCCL_PROFILE=1 MCCL_PDL=2 MCCL_LAUNCH_GRAPH_BYTES=0
{
  echo "== MCCL_PROFILE host phases, 8-byte AllReduce (on, off, PDL on, PDL off)"
  for v in on off pdlon pdloff; do echo "-- $v"; grep -h 'mccl profile' $W/prof_${v}_1.log; done
} >> $T
preload 2 200
tinyAb 2 default base
mpsStop
finish call3 prof
