#!/usr/bin/env bash
# One H100 call: where Simple's time outside its steps goes (finer MCCL_PROFILE stamps), 2026-11-25.
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16 LD_LIBRARY_PATH=$B
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
T="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.CallsQueuedBehindATimeoutStopWithIt:GpuSingleProcess.LeanAndGeneral*:GpuSingleProcess.Ll128Kernels*:GpuSingleProcess.LoneCalls*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.GraphCapture*:GpuSingleProcess.AlltoAll*"
{
for ch in 1 16; do
  for op in allreduce reducescatter allgather broadcast reduce; do
    for sz in 16K 1M; do
      echo "== Simple channels $ch, $op $sz"
      NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=$ch MCCL_PROFILE=1 timeout 60 $B/mccl-threads-bench -r 2 -b $sz -e $sz -o $op -G 10 -n 100 2>&1 | grep -v '^#'
    done
  done
done
} > $L/profile.txt 2>&1
{
for run in 2:Simple 2:default; do
  nr=${run%%:*} proto=${run#*:}
  env=(MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr)
  [ "$proto" != default ] && env+=(NCCL_PROTO=$proto)
  s=$(date +%s)
  env "${env[@]}" timeout 200 $B/mccl_gpu_tests --gtest_filter="$T" > $L/shared_${nr}_$proto.log 2>&1
  echo "shared[$nr ranks, $proto]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED) ' $L/shared_${nr}_$proto.log | tr '\n' ' ' | cut -c1-900)"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|took' $L/shared_${nr}_$proto.log | cut -c1-300
done
} > $L/tests.txt 2>&1
grep -E "^==|graph|^allreduce|^reduce|^allgather|^broadcast|Simple:" $L/profile.txt | sed 's/mccl profile: //' | cut -c1-400
cat $L/tests.txt | cut -c1-300
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
