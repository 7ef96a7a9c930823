#!/usr/bin/env bash
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16
R=$OUT/repeat.txt
for i in 1 2 3; do
  for lib in before after; do
    L=$B; [ $lib = before ] && L=$B/before:$B
    for cfg in "default reducescatter" "LL128 allreduce" "LL128 reducescatter" "LL128 allgather"; do
      set -- $cfg
      E=""; [ $1 = LL128 ] && E="NCCL_PROTO=LL128"
      echo "== round $i $lib $1 $2" >> $R
      s=$(date +%s.%N)
      env $E LD_LIBRARY_PATH=$L timeout 40 $B/mccl-threads-bench -r 2 -b 64K -e 4M -f 4 -n 100 -G 20 -o $2 > /tmp/o.txt 2>&1; rc=$?
      e=$(date +%s.%N)
      sed 's/\x1b\[[0-9;]*m//g' /tmp/o.txt | grep -v "^#" | grep -v "^op " | head -12 >> $R
      echo "rc=$rc wall=$(echo "$e - $s" | bc)" >> $R
    done
  done
done
cat $R | grep -E "==|rc=|rror|imeout" 
