#!/usr/bin/env bash
# Call 5: MCCL_PROFILE of the Simple point-to-point launches at 2 GiB (Gather, Scatter,
# Send/Recv; Broadcast, which takes units, for reference): every block's run time and,
# for the last launch, each channel's start, end and SM. Which rank is which: the lines
# say "rank".
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
for op in gather scatter sendrecv broadcast; do
  $M -x MCCL_PROFILE=1 $B/mccl-perf -b 2G -e 2G -n 4 -w 1 -t 1 -c 0 -o $op > $W/prof_$op.log 2>&1
done
$M $B/mccl-perf -b 2G -e 2G -t 3 -c 0 -o gather,scatter,sendrecv,broadcast > $W/noprof.log 2>&1
tail -n 40 $W/prof_gather.log
tar -czf "$OUT/call5.tgz" -C "$W" .
