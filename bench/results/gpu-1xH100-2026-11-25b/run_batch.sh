#!/usr/bin/env bash
# One H100 call: Simple steps scheduled a batch at a time (kStepBatch), against the same tree without it (2026-11-25).
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
    echo "== $lib r$r Simple forced"
    NCCL_PROTO=Simple bench $d -b 16K -e 16M -f 4 -o allreduce,reducescatter,allgather,broadcast,reduce,allreduce_max -G 10 -n 100
    echo "== $lib r$r Simple forced, 4 channels"
    NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=4 bench $d -b 16K -e 1M -f 8 -o allreduce,reducescatter -G 10 -n 100
    echo "== $lib r$r default tuner"
    bench $d -b 8 -e 4M -f 8 -o allreduce,reducescatter,allgather -G 10 -n 100
  done
done
} > $L/threads.txt 2>&1
{
for ch in 1 16; do
  for op in allreduce reducescatter allgather; do
    for sz in 16K 1M; do
      echo "== Simple channels $ch, $op $sz"
      NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=$ch MCCL_PROFILE=1 bench $B -b $sz -e $sz -o $op -G 10 -n 100
    done
  done
done
} > $L/profile.txt 2>&1
export LD_LIBRARY_PATH=$B
{
for run in 2:default 2:Simple 3:default; do
  nr=${run%%:*} proto=${run#*:}
  env=(MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_MAX_NCHANNELS=$((nr > 2 ? 4 : 16)))
  [ "$proto" != default ] && env+=(NCCL_PROTO=$proto)
  s=$(date +%s)
  env "${env[@]}" timeout 200 $B/mccl_gpu_tests --gtest_filter="$T" > $L/shared_${nr}_$proto.log 2>&1
  echo "shared[$nr ranks, $proto]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED) ' $L/shared_${nr}_$proto.log | tr '\n' ' ' | cut -c1-900)"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|took' $L/shared_${nr}_$proto.log | cut -c1-300
done
# Many steps a block (batches of 32 and their boundaries, empty steps): small FIFOs, one channel.
for nr in 2 3; do
  s=$(date +%s)
  MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_PROTO=Simple NCCL_BUFFSIZE=65536 NCCL_MAX_NCHANNELS=1 timeout 200 \
    $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.GraphCapture*:GpuSingleProcess.TwoCommunicators*' > $L/shared_${nr}_smallfifo.log 2>&1
  echo "shared[$nr ranks, Simple, NCCL_BUFFSIZE=65536, 1 channel]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED) ' $L/shared_${nr}_smallfifo.log | tr '\n' ' ' | cut -c1-600)"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|took' $L/shared_${nr}_smallfifo.log | cut -c1-300
done
s=$(date +%s)
timeout 240 $B/mccl_gpu_tests > $L/one_rank.log 2>&1
echo "one GPU, one rank, every test: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[  (PASSED|FAILED) ' $L/one_rank.log | tr '\n' ' ')"
grep -a -m8 -E '^\[  FAILED|Failure' $L/one_rank.log | cut -c1-300
} > $L/tests.txt 2>&1
cat $L/tests.txt | cut -c1-300; grep -E "^==|Simple:" $L/profile.txt | sed "s/mccl profile: //" | cut -c1-420
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
