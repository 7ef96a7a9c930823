#!/usr/bin/env bash
# One H100 call: stop-on-error and the shared-GPU stream-queue check (2026-11-25).
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
T="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.CallsQueuedBehindATimeoutStopWithIt:GpuSingleProcess.LeanAndGeneral*:GpuSingleProcess.Ll128Kernels*:GpuSingleProcess.LoneCalls*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.GraphCapture*:GpuSingleProcess.AlltoAll*"
{
for i in 1 2 3; do
  echo "== threads-bench run $i (one stream a rank, 32 queues) $(date -u +%T)"
  MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16 timeout 90 $B/mccl-threads-bench -r 2 -b 8 -e 256K -f 8 -o allreduce,allgather,broadcast,sendrecv 2>&1 | grep -v '^#'
  echo "rc=${PIPESTATUS[0]} $(date -u +%T)"
done
echo "== threads-bench, sum against max and prod (lean LL kernels serve sums only) $(date -u +%T)"
MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16 timeout 120 $B/mccl-threads-bench -r 2 -b 8 -e 256K -f 8 -o allreduce,allreduce_max,allreduce_prod,reducescatter,reducescatter_max 2>&1 | grep -v '^#'
echo "rc=${PIPESTATUS[0]} $(date -u +%T)"
echo "== threads-bench, CUDA_DEVICE_MAX_CONNECTIONS=1 (both ranks' streams on one hardware queue) $(date -u +%T)"
CUDA_DEVICE_MAX_CONNECTIONS=1 MCCL_TIMEOUT=3 NCCL_MAX_NCHANNELS=16 timeout 60 $B/mccl-threads-bench -r 2 -b 8 -e 64 -f 8 -o allreduce -n 200 2>&1 | grep -v '^#' | cut -c1-300
echo "rc=${PIPESTATUS[0]} $(date -u +%T)"
} > $L/threads.txt 2>&1
{
# Where Simple's fixed cost goes at small sizes (thread 0's phases per step, MCCL_PROFILE),
# LL beside it; shared GPU, so no NVLink: the structure (steps, barriers, fences), not the wire.
for proto in Simple LL; do
  for ch in 1 4 16; do
    for b in 16K 1M; do
      for op in allreduce reducescatter; do
        echo "== $proto channels $ch, $op $b"
        NCCL_PROTO=$proto NCCL_MIN_NCHANNELS=$ch NCCL_MAX_NCHANNELS=$ch MCCL_PROFILE=1 MCCL_TIMEOUT=10 timeout 40 \
          $B/mccl-threads-bench -r 2 -b $b -e $b -o $op -G 20 -n 500 2>&1 | grep -v '^#' | cut -c1-400
      done
    done
  done
done
} > $L/profile.txt 2>&1
{
for run in 2:default 2:LL 2:LL128 3:default; do
  nr=${run%%:*} proto=${run#*:}
  env=(MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=$((nr > 2 ? 4 : 16)))
  [ "$proto" != default ] && env+=(NCCL_PROTO=$proto)
  s=$(date +%s)
  env "${env[@]}" timeout 200 $B/mccl_gpu_tests --gtest_filter="$T" > $L/shared_${nr}_$proto.log 2>&1
  echo "shared[$nr ranks, $proto]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED|  SKIPPED) ' $L/shared_${nr}_$proto.log | tr '\n' ' ' | cut -c1-900)"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|took' $L/shared_${nr}_$proto.log | cut -c1-300
done
for i in 1 2 3; do
  MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 NCCL_MAX_NCHANNELS=16 timeout 60 $B/mccl_gpu_tests --gtest_filter='*CallsQueuedBehind*' > $L/queued_$i.log 2>&1
  echo "queued-behind-timeout run $i: rc=$? $(grep -aE '^\[ +(OK|FAILED) ' $L/queued_$i.log | tr '\n' ' ')"
done
s=$(date +%s)
timeout 240 $B/mccl_gpu_tests > $L/one_rank.log 2>&1
echo "one GPU, one rank, every test: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[  (PASSED|FAILED) ' $L/one_rank.log | tr '\n' ' ')"
grep -a -m8 -E '^\[  FAILED|Failure' $L/one_rank.log | cut -c1-300
} > $L/tests.txt 2>&1
cat $L/threads.txt $L/profile.txt $L/tests.txt
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
