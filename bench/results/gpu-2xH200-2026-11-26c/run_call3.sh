#!/usr/bin/env bash
# Call 3: how many channels (blocks) NCCL 2.28.3 takes per collective and size in each mode
# (-R 0 plain, 1 registered, 2 symmetric windows): its own NCCL_DEBUG=INFO TUNING lines
# ("Bytes -> Algo ... channel{Lo..Hi}", "[Symmetric] ... nchannels"), 128 KiB - 2 GiB.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
ops=allreduce,reducescatter,reduce,allgather,broadcast,gather,scatter,alltoall,sendrecv
for R in 0 1 2; do
  $M -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,TUNING,P2P $B/nccl-perf -R $R -b 128K -e 2G -f 2 -n 2 -w 1 -t 1 -c 0 -o $ops > $W/nccl_tuning_R$R.log 2>&1 || echo "R$R failed"
done
$M -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING $B/mccl-perf -b 128K -e 2G -f 2 -n 2 -w 1 -t 1 -c 0 -o $ops > $W/mccl_tuning.log 2>&1 || echo "mccl failed"
tar -czf "$OUT/call3.tgz" -C "$W" .
