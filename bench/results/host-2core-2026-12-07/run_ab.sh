#!/bin/bash
# A/B: waits of oversubscribed host ranks yielding the core after 64 empty polls (old: the
# library of main before the change, copied to $OLD) against after 1 (new: build/), alternating
# within each of 5 rounds; mccl-perf --from-mpi times MPI in the same processes.
#   np4: 4 ranks on the 2 cores (--oversubscribe, MCCL_IDLE_YIELD=auto yields soon), 8 B - 32 KiB
#        every collective and Send/Recv; np4big: 64 KiB - 16 MiB (the engine's waits);
#   np2: 2 ranks bound to a core each (not oversubscribed: the late yield, unchanged), a control;
#   cg: mpi_examples/cg_solver on 4 and 2 ranks (its mccl and MPI solvers' times).
OLD=${OLD:-/tmp/libold}
out=${1:-/tmp/ab/yield}; mkdir -p $out
B=${B:-build}
ALL=sendrecv,allreduce,broadcast,allgather,reduce,reducescatter,alltoall,gather,scatter
for round in 1 2 3 4 5; do
  for v in old new; do
    x=(); [ $v = old ] && x=(-x LD_LIBRARY_PATH=$OLD)
    M4="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x MCCL_DEVICE=host ${x[*]}"
    M2="mpirun --allow-run-as-root --bind-to core -np 2 -x MCCL_DEVICE=host ${x[*]}"
    $M4 $B/bench/mccl-perf --from-mpi -b 8 -e 32768 -f 8 -t 3 -o $ALL --csv $out/np4_${v}_$round.csv > /dev/null 2>&1
    $M4 $B/bench/mccl-perf --from-mpi -b 65536 -e 16777216 -f 4 -t 3 -o allreduce,allgather,broadcast,sendrecv,alltoall \
      --csv $out/np4big_${v}_$round.csv > /dev/null 2>&1
    $M2 $B/bench/mccl-perf --from-mpi -b 8 -e 32768 -f 8 -t 3 -o sendrecv,allreduce,allgather --csv $out/np2_${v}_$round.csv \
      > /dev/null 2>&1
    echo "np4 $v $round: $($M4 $B/mpi_examples/cg_solver 4096 4000 2>&1 | grep -i 'mccl.*s' | tail -1)" >> $out/cg.txt
    echo "np2 $v $round: $($M2 $B/mpi_examples/cg_solver 4096 4000 2>&1 | grep -i 'mccl.*s' | tail -1)" >> $out/cg.txt
  done
done
