#!/bin/bash
# A/B/C: how a rank writes its shared-memory slots (host_engine/shm_segment.h,
# ShmStreamChoice), one build, the three settings of MCCL_HOST_SHM_STREAM alternating
# within each round: 0 (ordinary copies: the code before the change), 1 (streaming stores
# from MCCL_HOST_SHM_STREAM_BYTES, 4 KiB), auto (the default: streaming while this rank's
# timed ordinary copies run slower than 5 GB/s). mccl-perf --from-mpi times MPI in the same
# processes.
#   np2: 2 ranks bound to a core each: Send/Recv (sendrecv: a ring shift, exchange: pairs),
#        Gather, Scatter, AlltoAll, every power of two from 8 B to 64 KiB;
#   np2coll: AllReduce, Broadcast, AllGather, Reduce, ReduceScatter, likewise;
#   np4: 4 ranks on the 2 cores (--oversubscribe), every collective and Send/Recv, 4-64 KiB.
# Run from the repository root with the build in $B: bash run_ab.sh OUT; ROUNDS="1 2 ..."
out=${1:-/tmp/ab/stream}; mkdir -p $out
B=${B:-build}
ALL=sendrecv,allreduce,broadcast,allgather,reduce,reducescatter,alltoall,gather,scatter
for round in ${ROUNDS:-$(seq 1 12)}; do
  for v in 0 1 auto; do
    M2="mpirun --allow-run-as-root --bind-to core -np 2 -x MCCL_DEVICE=host -x MCCL_HOST_SHM_STREAM=$v"
    M4="mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x MCCL_DEVICE=host -x MCCL_HOST_SHM_STREAM=$v"
    $M2 $B/bench/mccl-perf --from-mpi -b 8 -e 65536 -f 2 -t 3 -o sendrecv,exchange,gather,scatter,alltoall \
      --csv $out/np2_s${v}_$round.csv > /dev/null 2>&1
    $M2 $B/bench/mccl-perf --from-mpi -b 8 -e 65536 -f 2 -t 3 -o allreduce,broadcast,allgather,reduce,reducescatter \
      --csv $out/np2coll_s${v}_$round.csv > /dev/null 2>&1
    $M4 $B/bench/mccl-perf --from-mpi -b 4096 -e 65536 -f 2 -t 3 -o $ALL --csv $out/np4_s${v}_$round.csv > /dev/null 2>&1
  done
done
