#!/usr/bin/env bash
# LL128 kernels: tests + before/after sweep on one H100 (two ranks as threads sharing it).
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=10
T=$OUT/tests.txt; P=$OUT/sweep.txt; F=$OUT/profile.txt
clean() { sed 's/\x1b\[[0-9;]*m//g' | grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran|OK \]|Failure|rank [0-9]:|SKIPPED" | tail -40; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt; date -u >> $OUT/device.txt
for proto in default LL128; do
  for op in sendrecv allgather broadcast allreduce reducescatter; do
    for lib in before after; do
      L=$B; [ $lib = before ] && L=$B/before:$B
      echo "== $lib proto=$proto op=$op" >> $P
      if [ $proto = default ]; then E=""; else E="NCCL_PROTO=LL128"; fi
      env $E NCCL_MAX_NCHANNELS=16 LD_LIBRARY_PATH=$L timeout 30 $B/mccl-threads-bench -r 2 -b 64K -e 4M -f 4 -n 100 -G 20 -o $op 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep -v "^#" | tail -8 >> $P
    done
  done
done
for lib in before after; do
  L=$B; [ $lib = before ] && L=$B/before:$B
  for cfg in "allgather 256K" "allgather 2M" "sendrecv 1M" "allreduce 256K" "allreduce 4M"; do
    set -- $cfg
    echo "== profile $lib LL128 $1 $2" >> $F
    NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=16 MCCL_PROFILE=1 LD_LIBRARY_PATH=$L timeout 30 $B/mccl-threads-bench -r 2 -b $2 -e $2 -n 500 -G 0 -o $1 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | tail -14 >> $F
  done
done
echo "== tests 2 ranks, NCCL_PROTO=LL128" >> $T
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 NCCL_MAX_NCHANNELS=16 NCCL_PROTO=LL128 timeout 110 $B/mccl_gpu_tests --gtest_filter='*EveryTypeOpAndForm*:*PointToPoint*:*AlltoAll*:*Lean*:*Ll128*:*GraphCapture*:*TwoCommunicators*:*Gather*' 2>&1 | clean >> $T
echo "== tests 3 ranks, NCCL_PROTO=LL128" >> $T
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=4 timeout 80 $B/mccl_gpu_tests --gtest_filter='*EveryTypeOpAndForm*:*Ll128*:*PointToPoint*:*AlltoAll*' 2>&1 | clean >> $T
echo "== tests 2 ranks, NCCL_PROTO=LL128 NCCL_NTHREADS=256" >> $T
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 NCCL_PROTO=LL128 NCCL_NTHREADS=256 timeout 60 $B/mccl_gpu_tests --gtest_filter='*EveryTypeOpAndForm*:*Ll128*:*AlltoAll*' 2>&1 | clean >> $T
echo "== tests 2 ranks, default" >> $T
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 NCCL_MAX_NCHANNELS=16 timeout 200 $B/mccl_gpu_tests 2>&1 | clean >> $T
cat $T; cat $P
