#!/usr/bin/env bash
# One H100 call: LL kernels for every operator (LlTypedRt) against the previous libmccl (2026-11-25).
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
T="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.CallsQueuedBehindATimeoutStopWithIt:GpuSingleProcess.LeanAndGeneral*:GpuSingleProcess.Ll128Kernels*:GpuSingleProcess.LoneCalls*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.GraphCapture*:GpuSingleProcess.AlltoAll*"
bench() { # lib, then bench args
  local lib=$1; shift
  LD_LIBRARY_PATH=$lib timeout 100 $B/mccl-threads-bench -r 2 "$@" 2>&1 | grep -v '^#'
  echo "rc=${PIPESTATUS[0]}"
}
{
for r in 1 2; do
  for lib in before now; do
    d=$B; [ $lib = before ] && d=$B/before
    echo "== $lib r$r default tuner"
    bench $d -b 8 -e 256K -f 8 -o allreduce,allreduce_max,allreduce_prod,allreduce_min,reducescatter,reducescatter_max
    echo "== $lib r$r LL forced"
    NCCL_PROTO=LL bench $d -b 256K -e 2M -f 2 -o allreduce,allreduce_max,reducescatter,reducescatter_prod -G 10 -n 100
    echo "== $lib r$r LL128 forced"
    NCCL_PROTO=LL128 bench $d -b 64K -e 4M -f 4 -o allreduce,allreduce_max,reducescatter,reducescatter_min -G 10 -n 100
  done
done
} > $L/threads.txt 2>&1
export LD_LIBRARY_PATH=$B
{
for run in 2:default 2:LL 2:LL128 3:default; do
  nr=${run%%:*} proto=${run#*:}
  env=(MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_MAX_NCHANNELS=$((nr > 2 ? 4 : 16)))
  [ "$proto" != default ] && env+=(NCCL_PROTO=$proto)
  s=$(date +%s)
  env "${env[@]}" timeout 200 $B/mccl_gpu_tests --gtest_filter="$T" > $L/shared_${nr}_$proto.log 2>&1
  echo "shared[$nr ranks, $proto]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED) ' $L/shared_${nr}_$proto.log | tr '\n' ' ' | cut -c1-900)"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|took' $L/shared_${nr}_$proto.log | cut -c1-300
done
s=$(date +%s)
timeout 240 $B/mccl_gpu_tests > $L/one_rank.log 2>&1
echo "one GPU, one rank, every test: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[  (PASSED|FAILED) ' $L/one_rank.log | tr '\n' ' ')"
grep -a -m8 -E '^\[  FAILED|Failure' $L/one_rank.log | cut -c1-300
} > $L/tests.txt 2>&1
cat $L/threads.txt $L/tests.txt
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
