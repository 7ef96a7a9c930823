#!/usr/bin/env bash
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=5 NCCL_MAX_NCHANNELS=16 NCCL_PROTO=LL128
R=$OUT/hang.txt
for i in 1 2 3 4; do
  for lib in after before; do
    L=$B; [ $lib = before ] && L=$B/before:$B
    for G in 0 20; do
      echo "== round $i $lib G=$G" >> $R
      LD_LIBRARY_PATH=$L timeout 25 $B/mccl-threads-bench -r 2 -b 1M -e 4M -f 4 -n 100 -G $G -o allgather > /tmp/o.txt 2>&1; rc=$?
      sed 's/\x1b\[[0-9;]*m//g' /tmp/o.txt | grep -v "^#" | grep -v "^op " | cut -c1-300 | tail -6 >> $R
      echo "rc=$rc" >> $R
    done
  done
done
grep -E "==|rc=" $R | paste - - 
