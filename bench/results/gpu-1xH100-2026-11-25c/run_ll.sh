#!/usr/bin/env bash
# One H100 call: the LL kernels with MCCL_PROFILE's sums in shared memory ("now") against
# f79e73d ("before"), two ranks as threads sharing the GPU; LL128 and LL forced, default tuner.
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
T="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.Ll128Kernels*:GpuSingleProcess.LeanAndGeneral*:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.GraphCapture*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.AlltoAll*"
{
for run in 2:LL128 3:LL128 2:LL 2:default; do
  IFS=: read nr proto <<< "$run"
  env=(LD_LIBRARY_PATH=$B MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_MAX_NCHANNELS=$((nr > 2 ? 4 : 16)))
  [ "$proto" != default ] && env+=(NCCL_PROTO=$proto)
  s=$(date +%s)
  env "${env[@]}" timeout 150 $B/mccl_gpu_tests --gtest_filter="$T" > $L/shared_${nr}_$proto.log 2>&1
  echo "shared[$nr ranks, $proto]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED) ' $L/shared_${nr}_$proto.log | tr '\n' ' ' | cut -c1-700)"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|took' $L/shared_${nr}_$proto.log | cut -c1-300
done
} > $L/tests.txt 2>&1
cat $L/tests.txt | cut -c1-300
bench() { local lib=$1; shift; LD_LIBRARY_PATH=$lib timeout 100 $B/mccl-threads-bench "$@" 2>&1 | grep -v '^#'; echo "rc=${PIPESTATUS[0]}"; }
{
for r in 1 2; do
  for k in before now; do
    d=$B; [ $k = before ] && d=$B/before
    echo "== $k r$r LL128 forced"
    NCCL_PROTO=LL128 bench $d -r 2 -b 64K -e 4M -f 4 -o allreduce,reducescatter,allgather,broadcast,sendrecv -G 10 -n 100
    echo "== $k r$r LL forced"
    NCCL_PROTO=LL bench $d -r 2 -b 8 -e 1M -f 8 -o allreduce,allgather -G 10 -n 100
    echo "== $k r$r default tuner"
    bench $d -r 2 -b 8 -e 4M -f 8 -o allreduce,reducescatter,allgather -G 10 -n 100
  done
done
} > $L/threads.txt 2>&1
{
for k in before now; do
  d=$B; [ $k = before ] && d=$B/before
  echo "== $k LL128 allreduce 1M profile"
  NCCL_PROTO=LL128 MCCL_PROFILE=1 bench $d -r 2 -b 1M -e 1M -o allreduce -G 10 -n 100
done
} > $L/profile.txt 2>&1
grep -E "^==|rank 0 LL" $L/profile.txt | sed "s/mccl profile: //" | cut -c1-330
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
