#!/bin/bash
# A/B: main at 7c104c2 (/tmp/bh0) against self Send/Recv pairs as copies (/tmp/bh),
# alternating, mccl-perf --from-mpi on host communicators (MPI timed in the same
# processes): np 2 (bound to a core each) and np 4 (2 cores, unbound), the calls that send
# a rank's block to itself (AlltoAll, Gather, Scatter) from 64 KiB, where the engine runs them.
out=${1:-/tmp/ab/self}; mkdir -p $out
OPS=alltoall,gather,scatter,sendrecv
for round in 1 2 3 4; do
  for v in old new; do
    d=/tmp/bh; [ $v = old ] && d=/tmp/bh0
    mpirun --allow-run-as-root --bind-to core -np 2 -x MCCL_DEVICE=host $d/bench/mccl-perf --from-mpi -b 65536 -e 16777216 -f 4 -t 5 \
      -o $OPS --csv $out/np2_${v}_$round.csv > /dev/null 2>&1
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x MCCL_DEVICE=host $d/bench/mccl-perf --from-mpi -b 65536 -e 16777216 -f 4 -t 3 \
      -o $OPS --csv $out/np4_${v}_$round.csv > /dev/null 2>&1
  done
done
