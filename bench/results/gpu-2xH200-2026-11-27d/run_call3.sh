#!/usr/bin/env bash
# Call 3, two GPUs: call 1 had this build's ReduceScatter of 256 MiB - 1 GiB 2.5-2.8 %
# slower than the build before (two rounds): four rounds more, alternating, with
# AllReduce and AllGather beside it.
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
pack() { tar -czf "$OUT/call3.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
P="-b 64M -e 1G -f 4 -t 1 -w 3 -n 20 -c 0 -o reducescatter,allreduce,allgather"
for r in 1 2 3 4; do
  for v in mccl base; do
    lib=$L; [ $v = base ] && lib=$L/ab/base:$L
    timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$lib $B/mccl-perf $P -R 0 --csv $W/R_${v}_$r.csv > $W/R_${v}_$r.log 2>&1
  done
done
python3 bench/summary.py $W R_ > $W/summaryR.txt 2>&1; pack
cat $W/summaryR.txt
