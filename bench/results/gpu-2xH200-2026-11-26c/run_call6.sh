#!/usr/bin/env bash
# Call 6: 8 B - 512 KiB in a CUDA graph (-G 20), the merged build against the build before
# this session's kernel change (ab/prev). First, call 5's merged build against ab/tiny again,
# interleaved twice, 16 KiB - 2 MiB (call 5's one merged run had AllGather's LL sizes at 9.5
# us with 9.4 us of host time a call), and MCCL_PROFILE on an AllGather of 64 KiB for each.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
ops=allreduce,reducescatter,reduce,allgather,broadcast,gather,scatter,alltoall,sendrecv
A="-b 16K -e 2M -f 2 -t 3 -c 0 -o $ops"
for r in 1 2; do
  $M -x LD_LIBRARY_PATH=$L/ab/tiny:$L $B/mccl-perf $A --csv $W/tiny_$r.csv > $W/tiny_$r.log 2>&1 || echo "tiny failed"
  $M -x LD_LIBRARY_PATH=$L $B/mccl-perf $A --csv $W/merged_$r.csv > $W/merged_$r.log 2>&1 || echo "merged failed"
done
for v in tiny merged; do
  LP=$L; [ $v = tiny ] && LP=$L/ab/tiny:$L
  $M -x LD_LIBRARY_PATH=$LP -x MCCL_PROFILE=1 $B/mccl-perf -b 64K -e 64K -n 500 -w 50 -t 1 -c 0 -o allgather,reducescatter > $W/prof_$v.log 2>&1
done
G="-b 8 -e 512K -f 4 -t 3 -c 0 -G 20 -o allreduce,reducescatter,allgather,broadcast,sendrecv"
$M -x LD_LIBRARY_PATH=$L/ab/prev:$L $B/mccl-perf $G --csv $W/prev_graph.csv > $W/prev_graph.log 2>&1 || echo "prev graph failed"
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf $G --csv $W/merged_graph.csv > $W/merged_graph.log 2>&1 || echo "merged graph failed"
tar -czf "$OUT/call6.tgz" -C "$W" .
