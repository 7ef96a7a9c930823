#!/bin/bash
# run_ab.sh's np 2 part (np2, np2coll), the three settings alternating; from the repository root: bash run_np2.sh OUT (R1: rounds)
out=$1; mkdir -p $out
for round in $(seq ${R0:-1} ${R1:-10}); do
  for s in 0 1 auto; do
    M2="mpirun --allow-run-as-root --bind-to core -np 2 -x MCCL_DEVICE=host -x MCCL_HOST_SHM_STREAM=$s"
    $M2 build/bench/mccl-perf --from-mpi -b 8 -e 65536 -f 2 -t 3 -o sendrecv,exchange,gather,scatter,alltoall --csv $out/np2_s${s}_$round.csv > /dev/null 2>&1
    $M2 build/bench/mccl-perf --from-mpi -b 8 -e 65536 -f 2 -t 3 -o allreduce,broadcast,allgather,reduce,reducescatter --csv $out/np2coll_s${s}_$round.csv > /dev/null 2>&1
  done
done
