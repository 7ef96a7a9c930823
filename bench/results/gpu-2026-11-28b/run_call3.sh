#!/usr/bin/env bash
# Call 3 (four GPUs): where four-rank Send/Recv and AlltoAll of 1 GiB go, for the next
# session: NCCL's own account of its channels (NCCL_DEBUG=INFO, INIT,P2P,TUNING) and kernel
# launch; mccl's per-step profile (MCCL_PROFILE, the landed build ab/old).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L/ab/old:$L
M="timeout 100 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
for op in sendrecv alltoall; do
  $M -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,P2P,TUNING,COLL $B/nccl-perf -b 1G -e 1G -t 1 -w 2 -n 5 -c 0 -o $op > $W/nccl_$op.log 2>&1
  $M -x MCCL_PROFILE=1 -x MCCL_PDL=0 $B/mccl-perf -b 1G -e 1G -t 1 -w 2 -n 10 -c 0 -o $op > $W/mccl_$op.log 2>&1
  $M -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING,COLL $B/mccl-perf -b 1G -e 1G -t 1 -w 1 -n 2 -c 0 -o $op > $W/mcclinfo_$op.log 2>&1
done
{ for op in sendrecv alltoall; do
    echo "### NCCL $op"; grep -a -iE "channel|nthreads|p2p|NCCL INFO (Send|Recv|AllToAll)" $W/nccl_$op.log | grep -a "^[^ ]* *[^ ]*:[0-9]*:[0-9]* \[0\]\|rank 0\|\[0\]" | sort | uniq -c | sort -rn | head -25
    echo "### mccl $op"; grep -a "mccl profile" $W/mccl_$op.log | sort | head -12
    echo "### mccl $op NCCL_DEBUG"; grep -a -iE "channel|nthreads|plan" $W/mcclinfo_$op.log | head -12
  done; } > $W/summary.txt 2>&1
cat $W/summary.txt | cut -c1-400
tar -czf "$OUT/call3.tgz" -C "$W" .
