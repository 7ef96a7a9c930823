#!/usr/bin/env bash
# Call 2, four GPUs: LL and LL128 receives that read every peer's lines at once
# (ll_batch.cuh, ll128RecvBatch) against the build before (ab/base) and NCCL, on four ranks
# and on two of the GPUs, eager 8 B - 8 MiB and in CUDA graphs on four; the GPU tests
# of the LL family in call 3 (the device tool's 64 MiB: the test binary is carried alone).
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
pack() { tar -czf "$OUT/call2.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
N=$(nvidia-smi -L | wc -l)
M="mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
O="-t 1 -w 5 -n 40 -c 0 -o allreduce,allgather,reducescatter,alltoall"
run() {  # prefix variant round np extra-args
  local lib=$L; [ "$2" = base ] && lib=$L/ab/base:$L
  local bin=$B/mccl-perf; [ "$2" = nccl ] && bin=$B/nccl-perf
  timeout 90 $M -np $4 -x LD_LIBRARY_PATH=$lib $bin $O $5 --csv $W/$1_$2_$3.csv > $W/$1_$2_$3.log 2>&1
}
for r in 1 2; do
  for v in mccl base nccl; do
    run S $v $r $N "-b 8 -e 32K -f 8"
    run E $v $r $N "-b 64K -e 8M -f 2"
    run T $v $r 2 "-b 64K -e 8M -f 2"
    run U $v $r 2 "-b 8 -e 32K -f 8"
  done
  for v in mccl base; do run G $v $r $N "-b 8 -e 8M -f 4 -G 10 -n 10"; done
  pack
done
for p in S E T U G; do python3 bench/summary.py $W ${p}_ > $W/summary$p.txt 2>&1; done
pack
cat $W/summaryE.txt $W/summaryT.txt $W/summaryS.txt $W/summaryU.txt $W/summaryG.txt
