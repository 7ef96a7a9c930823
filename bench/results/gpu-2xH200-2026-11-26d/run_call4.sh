#!/usr/bin/env bash
# Call 4: where the LL reductions at 512 KiB - 1 MiB spend their time (MCCL_PROFILE, LL
# phases), with each protocol forced once; mccl's registered (-R 1) and window (-R 2) modes
# against NCCL's same modes, 8 B - 128 MiB, every collective and Send/Recv.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
ops=allreduce,reducescatter,reduce,allgather,broadcast,gather,scatter,alltoall,sendrecv
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
for sz in 512K 1M; do
  for op in reducescatter allreduce reduce allgather; do
    $M -x MCCL_PROFILE=1 $B/mccl-perf -b $sz -e $sz -n 300 -w 20 -t 1 -c 0 -o $op > $W/prof_${op}_$sz.log 2>&1
    $M -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING $B/nccl-perf -b $sz -e $sz -n 50 -w 5 -t 1 -c 0 -o $op 2>&1 | grep -i "tuning\|algo\|$op" | head -5 > $W/nccl_tuning_${op}_$sz.log
  done
done
for p in LL LL128 Simple; do
  $M -x NCCL_PROTO=$p $B/mccl-perf -b 256K -e 2M -f 2 -t 3 -c 0 -o reducescatter,allreduce,reduce --csv $W/proto_$p.csv > $W/proto_$p.log 2>&1
done
S="-b 8 -e 128M -f 4 -t 3 -c 0 -o $ops"
for R in 0 1 2; do
  $M $B/mccl-perf -R $R $S --csv $W/mccl_R$R.csv > $W/mccl_R$R.log 2>&1 || echo "mccl R$R failed"
  $M $B/nccl-perf -R $R $S --csv $W/nccl_R$R.csv > $W/nccl_R$R.log 2>&1 || echo "nccl R$R failed"
done
tar -czf "$OUT/call4.tgz" -C "$W" .
