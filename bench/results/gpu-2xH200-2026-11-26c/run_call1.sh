#!/usr/bin/env bash
# Call 1: mid sizes (128 KiB - 16 MiB) with each protocol forced on mccl (NCCL_PROTO = LL,
# LL128, Simple; LL128 also at 16 channels), the default planner, and NCCL in its three
# modes (-R 0 plain, 1 registered, 2 windows), every collective and Send/Recv, eager.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
ops=allreduce,reducescatter,reduce,allgather,broadcast,gather,scatter,alltoall,sendrecv
S="-b 128K -e 16M -f 2 -t 3 -c 0 -o $ops"
$M $B/mccl-perf $S --csv $W/mccl_def.csv > $W/mccl_def.log 2>&1 || echo "mccl def failed"
for P in LL LL128 Simple; do
  $M -x NCCL_PROTO=$P $B/mccl-perf $S --csv $W/mccl_$P.csv > $W/mccl_$P.log 2>&1 || echo "mccl $P failed"
done
$M -x NCCL_PROTO=LL128 -x NCCL_MAX_NCHANNELS=16 $B/mccl-perf $S --csv $W/mccl_LL128c16.csv > $W/mccl_LL128c16.log 2>&1 || echo "mccl LL128c16 failed"
for R in 0 1 2; do
  $M $B/nccl-perf -R $R $S --csv $W/nccl_R$R.csv > $W/nccl_R$R.log 2>&1 || echo "nccl R$R failed"
done
$M $B/mccl-perf $S --csv $W/mccl_def2.csv > $W/mccl_def2.log 2>&1 || echo "mccl def2 failed"
tar -czf "$OUT/call1.tgz" -C "$W" .
