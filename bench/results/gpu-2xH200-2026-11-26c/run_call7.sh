#!/usr/bin/env bash
# Call 7: the merged build against NCCL's three modes (-R 0 plain, 1 registered, 2 windows),
# every collective and Send/Recv, 8 B - 2 GiB eager.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
ops=allreduce,reducescatter,reduce,allgather,broadcast,gather,scatter,alltoall,sendrecv
S="-b 8 -e 2G -f 4 -t 3 -c 0 -o $ops"
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf $S --csv $W/mccl_R0.csv > $W/mccl_R0.log 2>&1 || echo "mccl failed"
for R in 0 1 2; do
  $M -x LD_LIBRARY_PATH=$L $B/nccl-perf -R $R $S --csv $W/nccl_R$R.csv > $W/nccl_R$R.log 2>&1 || echo "nccl R$R failed"
done
tar -czf "$OUT/call7.tgz" -C "$W" .
