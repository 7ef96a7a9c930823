#!/usr/bin/env bash
# Call 2: (a) the point-to-point protocol thresholds (Gather/Scatter one way: LL to 512 KiB a
# peer then Simple; Send/Recv LL128 to 1 MiB) against the session's starting build
# (ab/base), interleaved, 128 KiB - 8 MiB, checked once (-c 1); (b) MCCL_PROFILE at 1-2 MiB
# for the bidirectional patterns (AllGather, ReduceScatter, AllReduce, Send/Recv, AlltoAll)
# against the one-way Gather, to see where the mid sizes' time goes; (c) 512 KiB - 16 MiB,
# every collective and Send/Recv, with more channels (NCCL_MIN_NCHANNELS 24, 32) and more
# flags a slot (MCCL_GPU_SLICES 2, 4) than the planner gives.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT"
L=$PWD/$B
W=$(mktemp -d)
ops=gather,scatter,sendrecv,alltoall
S="-b 128K -e 8M -f 2 -t 3 -o $ops"
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf $S -c 1 > $W/check.log 2>&1 || echo "check failed"
for r in 1 2; do
  $M -x LD_LIBRARY_PATH=$L/ab/base:$L $B/mccl-perf $S -c 0 --csv $W/base_$r.csv > $W/base_$r.log 2>&1 || echo "base failed"
  $M -x LD_LIBRARY_PATH=$L $B/mccl-perf $S -c 0 --csv $W/new_$r.csv > $W/new_$r.log 2>&1 || echo "new failed"
done
for sz in 1M 2M; do
  for op in allgather reducescatter allreduce sendrecv alltoall gather; do
    $M -x LD_LIBRARY_PATH=$L -x MCCL_PROFILE=1 $B/mccl-perf -b $sz -e $sz -n 200 -w 20 -t 1 -c 0 -o $op > $W/prof_${op}_$sz.log 2>&1
  done
done
A="-b 512K -e 16M -f 2 -t 3 -c 0 -o allreduce,reducescatter,reduce,allgather,broadcast,gather,scatter,alltoall,sendrecv"
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf $A --csv $W/mid_def.csv > $W/mid_def.log 2>&1
for c in 24 32; do
  $M -x LD_LIBRARY_PATH=$L -x NCCL_MIN_NCHANNELS=$c $B/mccl-perf $A --csv $W/mid_min$c.csv > $W/mid_min$c.log 2>&1
done
for sl in 2 4; do
  $M -x LD_LIBRARY_PATH=$L -x MCCL_GPU_SLICES=$sl $B/mccl-perf $A --csv $W/mid_sl$sl.csv > $W/mid_sl$sl.log 2>&1
done
$M -x LD_LIBRARY_PATH=$L -x MCCL_GPU_SLICES=2 -x NCCL_MIN_NCHANNELS=24 $B/mccl-perf $A --csv $W/mid_sl2min24.csv > $W/mid_sl2min24.log 2>&1
tar -czf "$OUT/call2.tgz" -C "$W" .
