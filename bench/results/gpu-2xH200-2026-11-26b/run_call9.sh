#!/usr/bin/env bash
# Call 9: the session's last build, every collective and Send/Recv 8 B - 2 GiB eager with
# cudaMalloc buffers, against NCCL in its three modes (-R 0 plain, 1 registered, 2 windows).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
ops=allreduce,allgather,reducescatter,broadcast,reduce,gather,scatter,alltoall,sendrecv
$M $B/mccl-perf -b 8 -e 2G -f 4 -t 3 -c 0 -o $ops --csv $W/mccl_R0.csv > $W/mccl_R0.log 2>&1 || echo "mccl failed"
for R in 0 1 2; do
  $M $B/nccl-perf -R $R -b 8 -e 2G -f 4 -t 3 -c 0 -o $ops --csv $W/nccl_R$R.csv > $W/nccl_R$R.log 2>&1 || echo "nccl R$R failed"
done
tar -czf "$OUT/call9.tgz" -C "$W" .
