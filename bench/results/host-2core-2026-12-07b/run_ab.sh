#!/bin/bash
# A/B: small Send/Recv groups on host communicators (old: the library of host-p2p-small
# before the change, ed00eb2, copied to $OLD) against this build (new), alternating within
# each of 7 rounds; mccl-perf --from-mpi times MPI in the same processes.
#   np2: 2 ranks bound to a core each, Send/Recv (sendrecv: a ring shift, exchange: pairs),
#        Gather, Scatter, AlltoAll at every power of two from 8 B to 64 KiB;
#   np2coll: the other collectives, 8 B - 32 KiB (a control: their waits changed too);
#   np4: 4 ranks on the 2 cores (--oversubscribe), every collective and Send/Recv, 8 B - 32 KiB;
#   np4big: 64 KiB - 4 MiB on the engine (a control).
# ROUNDS="1 2 ... 7" by default; more rounds go on with other numbers (ROUNDS="8 9 10").
OLD=${OLD:-/tmp/hostp2p/libold}
out=${1:-/tmp/ab/p2p}; mkdir -p $out
B=${B:-build-host}
ALL=sendrecv,allreduce,broadcast,allgather,reduce,reducescatter,alltoall,gather,scatter
for round in ${ROUNDS:-1 2 3 4 5 6 7}; do
  for v in old new; do
    x=(); [ $v = old ] && x=(-x LD_LIBRARY_PATH=$OLD)
    M2="mpirun --allow-run-as-root --bind-to core -np 2 -x MCCL_DEVICE=host ${x[*]}"
    M4="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x MCCL_DEVICE=host ${x[*]}"
    $M2 $B/bench/mccl-perf --from-mpi -b 8 -e 65536 -f 2 -t 3 -o sendrecv,exchange,gather,scatter,alltoall \
      --csv $out/np2_${v}_$round.csv > /dev/null 2>&1
    $M2 $B/bench/mccl-perf --from-mpi -b 8 -e 32768 -f 8 -t 3 -o allreduce,broadcast,allgather,reduce,reducescatter \
      --csv $out/np2coll_${v}_$round.csv > /dev/null 2>&1
    $M4 $B/bench/mccl-perf --from-mpi -b 8 -e 32768 -f 8 -t 3 -o $ALL --csv $out/np4_${v}_$round.csv > /dev/null 2>&1
    $M4 $B/bench/mccl-perf --from-mpi -b 65536 -e 4194304 -f 4 -t 3 -o allreduce,allgather,sendrecv,alltoall \
      --csv $out/np4big_${v}_$round.csv > /dev/null 2>&1
  done
done
