#!/usr/bin/env bash
# Call 6: the LL and LL128 sizes (128 KiB - 2 MiB) at mccl's channels (up to 32) against at
# most 24 (NCCL's count there, NCCL_MAX_NCHANNELS=24), interleaved, two rounds; NCCL alongside.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
ops=allreduce,allgather,broadcast,reduce,reducescatter,alltoall,sendrecv
for round in 1 2; do
  for ch in 0 24; do
    $M -x NCCL_MAX_NCHANNELS=$ch $B/mccl-perf -b 128K -e 2M -f 2 -t 3 -c 0 -o $ops --csv $W/ch${ch}_$round.csv > /dev/null 2>&1
    $M -x NCCL_MAX_NCHANNELS=$ch $B/mccl-perf -b 128K -e 2M -f 2 -t 3 -c 0 -G 10 -o $ops --csv $W/g_ch${ch}_$round.csv > /dev/null 2>&1
  done
done
$M $B/nccl-perf -b 128K -e 2M -f 2 -t 3 -c 0 -o $ops --csv $W/nccl.csv > /dev/null 2>&1
$M $B/nccl-perf -b 128K -e 2M -f 2 -t 3 -c 0 -G 10 -o $ops --csv $W/g_nccl.csv > /dev/null 2>&1
for g in "" g_; do
  echo "== ${g:-eager }us: up to 32 channels (2 rounds) | at most 24 (2 rounds) | NCCL"
  paste -d, $W/${g}ch0_1.csv $W/${g}ch0_2.csv $W/${g}ch24_1.csv $W/${g}ch24_2.csv $W/${g}nccl.csv |
    awk -F, 'NR>1 {printf "%-13s %8s  %7s %7s | %7s %7s | %7s\n", $2, $3, $4, $11, $18, $25, $32}'
done
tar -czf "$OUT/ch.tgz" -C "$W" .
