#!/bin/bash
# A/B: main at ec39395 (/tmp/bh0) vs AlltoAll/Gather/Scatter whole (/tmp/bh), alternating,
# mccl-perf --from-mpi on host communicators (MPI timed in the same processes). np 2 and 4
# in shared memory; "noshm": np 2 with MCCL_HOST_SHM_MAX_BYTES=0 (the MPI route to 256 B,
# the engine above).
out=${1:-/tmp/ab/whole}; mkdir -p $out
OPS=alltoall,gather,scatter,allreduce
for round in 1 2 3 4 5; do
  for v in old new; do
    d=/tmp/bh; [ $v = old ] && d=/tmp/bh0
    mpirun --allow-run-as-root --bind-to core -np 2 -x MCCL_DEVICE=host $d/bench/mccl-perf --from-mpi -b 8 -e 65536 -f 4 -t 5 \
      -o $OPS --csv $out/np2_${v}_$round.csv > /dev/null 2>&1
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x MCCL_DEVICE=host $d/bench/mccl-perf --from-mpi -b 8 -e 65536 -f 4 -t 3 \
      -o $OPS --csv $out/np4_${v}_$round.csv > /dev/null 2>&1
    mpirun --allow-run-as-root --bind-to core -np 2 -x MCCL_DEVICE=host -x MCCL_HOST_SHM_MAX_BYTES=0 $d/bench/mccl-perf --from-mpi -b 8 -e 4096 -f 4 -t 5 \
      -o alltoall,gather,scatter --csv $out/noshm_${v}_$round.csv > /dev/null 2>&1
  done
done
