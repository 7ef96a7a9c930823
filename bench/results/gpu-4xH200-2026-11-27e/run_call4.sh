#!/usr/bin/env bash
# Call 4, four GPUs: the LL128 batched receives alone (ll128RecvBatch in the LL128 kernels'
# reductions and copies; no batched sends, the LL kernels as before) against the build
# before (ab/base) and NCCL: AllReduce, AllGather, ReduceScatter 256 KiB - 8 MiB on four
# ranks, eager and in CUDA graphs, and on two of the GPUs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
pack() { tar -czf "$OUT/call4.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
N=$(nvidia-smi -L | wc -l)
M="mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
O="-t 1 -w 5 -n 40 -c 0 -o allreduce,allgather,reducescatter -b 256K -e 8M -f 2"
run() {  # prefix variant round np extra-args
  local lib=$L; [ "$2" = base ] && lib=$L/ab/base:$L
  local bin=$B/mccl-perf; [ "$2" = nccl ] && bin=$B/nccl-perf
  timeout 90 $M -np $4 -x LD_LIBRARY_PATH=$lib $bin $O $5 --csv $W/$1_$2_$3.csv > $W/$1_$2_$3.log 2>&1
}
for r in 1 2; do
  for v in mccl base nccl; do run E $v $r $N ""; done
  for v in mccl base; do run G $v $r $N "-G 10 -n 10"; done
  pack
done
for v in mccl base nccl; do run T $v 1 2 ""; done
timeout 60 $M -np $N -x LD_LIBRARY_PATH=$L $B/mccl-perf -t 1 -w 3 -n 20 -c 1 -o allreduce,allgather -b 256K -e 4M -f 2 > $W/check4.log 2>&1
for p in E G T; do python3 bench/summary.py $W ${p}_ > $W/summary$p.txt 2>&1; done
pack
cat $W/summaryE.txt $W/summaryG.txt $W/summaryT.txt; grep -iE "wrong|error|fail" $W/check4.log | head -5
