#!/usr/bin/env bash
# One H100 call: the Simple kernels (simple_kernel.cu) against the generic kernel, one build
# (MCCL_SIMPLE_KERNEL=1 / 0), two and three ranks as threads sharing the GPU (2026-11-25).
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16 LD_LIBRARY_PATH=$B
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
T="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.SimpleKernels*:GpuSingleProcess.LeanAndGeneral*:GpuSingleProcess.LoneCalls*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.GraphCapture*:GpuSingleProcess.AlltoAll*"
{
for run in 2:Simple 3:Simple 2:default; do
  nr=${run%%:*} proto=${run#*:}
  env=(MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_MAX_NCHANNELS=$((nr > 2 ? 4 : 16)))
  [ "$proto" != default ] && env+=(NCCL_PROTO=$proto)
  s=$(date +%s)
  env "${env[@]}" timeout 150 $B/mccl_gpu_tests --gtest_filter="$T" > $L/shared_${nr}_$proto.log 2>&1
  echo "shared[$nr ranks, $proto]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED) ' $L/shared_${nr}_$proto.log | tr '\n' ' ' | cut -c1-900)"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|took' $L/shared_${nr}_$proto.log | cut -c1-300
done
for nr in 2 3; do
  s=$(date +%s)
  MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_PROTO=Simple NCCL_ALGO=Ring NCCL_BUFFSIZE=65536 NCCL_MAX_NCHANNELS=1 timeout 120 \
    $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.GraphCapture*' > $L/shared_${nr}_smallfifo.log 2>&1
  echo "shared[$nr ranks, Simple ring, NCCL_BUFFSIZE=65536, 1 channel]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED) ' $L/shared_${nr}_smallfifo.log | tr '\n' ' ' | cut -c1-600)"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|took' $L/shared_${nr}_smallfifo.log | cut -c1-300
done
} > $L/tests.txt 2>&1
cat $L/tests.txt | cut -c1-300
bench() { timeout 100 $B/mccl-threads-bench -r 2 "$@" 2>&1 | grep -v '^#'; echo "rc=${PIPESTATUS[0]}"; }
{
for r in 1 2; do
  for k in 0 1; do
    echo "== kernel$k r$r Simple forced"
    MCCL_SIMPLE_KERNEL=$k NCCL_PROTO=Simple bench -b 16K -e 16M -f 4 -o allreduce,reducescatter,allgather,broadcast,sendrecv -G 10 -n 100
    echo "== kernel$k r$r Simple forced, 4 channels"
    MCCL_SIMPLE_KERNEL=$k NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=4 bench -b 16K -e 4M -f 4 -o allreduce,reducescatter -G 10 -n 100
    echo "== kernel$k r$r default tuner"
    MCCL_SIMPLE_KERNEL=$k bench -b 1M -e 16M -f 2 -o allreduce,reducescatter,allgather -G 10 -n 100
  done
done
} > $L/threads.txt 2>&1
{
for r in 1 2; do
  for k in 0 1; do
    echo "== kernel$k r$r Simple forced, 3 ranks"
    MCCL_SIMPLE_KERNEL=$k NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=8 timeout 100 $B/mccl-threads-bench -r 3 -b 16K -e 4M -f 4 -o allreduce,reducescatter,allgather,broadcast -G 10 -n 100 2>&1 | grep -v '^#'
  done
done
} > $L/threads3.txt 2>&1
{
for k in 0 1; do
  for op in allreduce reducescatter allgather; do
    for sz in 16K 1M; do
      echo "== kernel$k Simple channels 1, $op $sz"
      MCCL_SIMPLE_KERNEL=$k NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=1 MCCL_PROFILE=1 bench -b $sz -e $sz -o $op -G 10 -n 100
    done
  done
done
} > $L/profile.txt 2>&1
grep -E "^==|Simple:" $L/profile.txt | sed "s/mccl profile: //" | cut -c1-420
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
