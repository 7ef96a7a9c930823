#!/bin/bash
# A/B: main (bh0) vs this change (bh), alternating, mccl-perf --from-mpi on host comms
out=/tmp/ab/$1; mkdir -p $out
for round in 1 2 3 4 5; do
  for v in old new; do
    d=/tmp/bh; [ $v = old ] && d=/tmp/bh0
    mpirun --allow-run-as-root --bind-to core -np 2 -x MCCL_DEVICE=host $d/bench/mccl-perf --from-mpi -b 8 -e 65536 -f 4 -t 5 \
      -o sendrecv,exchange,alltoall,gather,scatter,allreduce --csv $out/np2_${v}_$round.csv > /dev/null 2>&1
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x MCCL_DEVICE=host $d/bench/mccl-perf --from-mpi -b 8 -e 65536 -f 4 -t 3 \
      -o sendrecv,exchange,alltoall,gather,scatter,allreduce --csv $out/np4_${v}_$round.csv > /dev/null 2>&1
  done
done
