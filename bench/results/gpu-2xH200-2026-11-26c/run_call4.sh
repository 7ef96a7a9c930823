#!/usr/bin/env bash
# Call 4: the LL/LL128 sizes (32 KiB - 2 MiB) with at most 24 channels (NCCL_MAX_NCHANNELS=24,
# NCCL's own count there) against the planner's up to 32, interleaved twice, NCCL plain and
# registered beside them.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
S="-b 32K -e 2M -f 2 -t 3 -c 0 -o allreduce,reducescatter,reduce,allgather,broadcast,gather,scatter,alltoall,sendrecv"
for r in 1 2; do
  $M $B/mccl-perf $S --csv $W/def_$r.csv > $W/def_$r.log 2>&1 || echo "def failed"
  $M -x NCCL_MAX_NCHANNELS=24 $B/mccl-perf $S --csv $W/max24_$r.csv > $W/max24_$r.log 2>&1 || echo "max24 failed"
done
for R in 0 1; do
  $M $B/nccl-perf -R $R $S --csv $W/nccl_R$R.csv > $W/nccl_R$R.log 2>&1 || echo "nccl R$R failed"
done
tar -czf "$OUT/call4.tgz" -C "$W" .
