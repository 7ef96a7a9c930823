#!/usr/bin/env bash
# Call 4: a variant of the lean LL kernel (ReduceScatter loading its peers' lines before the connection
# lookup; not landed: README) against the landed build (.carry/before), interleaved; the
# windows' point-to-point slowdown of call 2 with and without the copy engines run first;
# then the GPU tests of the new build (scripts/gpu-sweep.sh tests).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
for round in 1 2; do
  for lib in before new; do
    dir=$PWD/$B; [ $lib = before ] && dir=$PWD/$B/before:$PWD/$B
    LD_LIBRARY_PATH=$dir:${LD_LIBRARY_PATH:-} $M $B/mccl-perf -b 8 -e 256K -f 8 -G 10 -t 3 -c 0 \
      -o reducescatter,allreduce,allgather --csv $W/graph_${lib}_$round.csv > /dev/null 2>&1
    LD_LIBRARY_PATH=$dir:${LD_LIBRARY_PATH:-} $M $B/mccl-perf -b 8 -e 256K -f 8 -t 3 -c 0 \
      -o reducescatter,allreduce,allgather --csv $W/eager_${lib}_$round.csv > /dev/null 2>&1
  done
done
for m in graph eager; do
  echo "== $m: before (2 rounds) | new (2 rounds), us"
  paste -d, $W/${m}_before_1.csv $W/${m}_before_2.csv $W/${m}_new_1.csv $W/${m}_new_2.csv |
    awk -F, 'NR>1 {printf "%-14s %8s  %7s %7s | %7s %7s\n", $2, $3, $4, $11, $18, $25}'
done
export LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
echo "== windows, point to point, 32 MiB - 2 GiB: alone; after AllGather and Broadcast on the copy engines; copy engines off"
$M $B/mccl-perf -R 2 -b 32M -e 2G -f 4 -t 3 -c 0 -o sendrecv,alltoall --csv $W/p2p_alone.csv > /dev/null 2>&1
$M $B/mccl-perf -R 2 -b 32M -e 2G -f 4 -t 3 -c 0 -o broadcast,allgather,sendrecv,alltoall --csv $W/p2p_after_ce.csv > /dev/null 2>&1
$M -x MCCL_WIN_CE_MIN_BYTES=0 $B/mccl-perf -R 2 -b 32M -e 2G -f 4 -t 3 -c 0 -o broadcast,allgather,sendrecv,alltoall --csv $W/p2p_no_ce.csv > /dev/null 2>&1
$M $B/mccl-perf -R 0 -b 32M -e 2G -f 4 -t 3 -c 0 -o sendrecv,alltoall --csv $W/p2p_plain.csv > /dev/null 2>&1
for f in p2p_plain p2p_alone p2p_after_ce p2p_no_ce; do echo "-- $f"; awk -F, 'NR>1 {printf "%-10s %11s %9s\n", $2, $3, $4}' $W/$f.csv; done
tar -czf "$OUT/ab.tgz" -C "$W" .
OUT=$OUT/sweep scripts/gpu-sweep.sh tests 2>&1 | grep -a -E "gpu_single|gpu_mpi|Failure|rank [0-9]+:" | head -30
