#!/usr/bin/env bash
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=5 NCCL_MAX_NCHANNELS=16
P=$OUT/variant.txt; T=$OUT/variant_tests.txt
clean() { sed 's/\x1b\[[0-9;]*m//g' | grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran|OK \]|Failure|rank [0-9]:|SKIPPED" | tail -20; }
for round in 1 2; do
for op in allgather sendrecv broadcast allreduce reducescatter; do
  for lib in cur var; do
    L=$B; [ $lib = cur ] && L=$B/cur:$B
    echo "== $lib LL128 $op" >> $P
    NCCL_PROTO=LL128 LD_LIBRARY_PATH=$L timeout 25 $B/mccl-threads-bench -r 2 -b 64K -e 4M -f 4 -n 100 -G 20 -o $op 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep -v "^#" | grep -v "^op " | cut -c1-200 | tail -5 >> $P
  done
done
done
for lib in cur var; do
  L=$B; [ $lib = cur ] && L=$B/cur:$B
  for cfg in "allgather 2M" "allreduce 256K" "reducescatter 1M"; do
    set -- $cfg
    echo "== profile $lib LL128 $1 $2" >> $P
    NCCL_PROTO=LL128 MCCL_PROFILE=1 LD_LIBRARY_PATH=$L timeout 20 $B/mccl-threads-bench -r 2 -b $2 -e $2 -n 500 -G 0 -o $1 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep "rank 0 LL\|^$1" >> $P
  done
done
echo "== var tests (static binary = var build) LL128" >> $T
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 NCCL_PROTO=LL128 timeout 100 $B/mccl_gpu_tests --gtest_filter='*EveryTypeOpAndForm*:*Ll128*:*AlltoAll*:*PointToPoint*' 2>&1 | clean >> $T
cat $P; cat $T
