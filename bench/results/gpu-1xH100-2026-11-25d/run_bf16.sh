#!/usr/bin/env bash
# One H100 call (two ranks as threads sharing the GPU): GPU tests of the Simple kernels with
# 8 vectors in flight in copies; that change ("now") against edec00b ("before") at the
# default tuner; the reductions' time per byte by datatype (float, bf16, half) on LL, LL128
# and Simple, which tells whether the 16-bit LL128 kernels' spills cost anything.
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=20
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
T="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleKernels*:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.GraphCapture*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.AlltoAll*:GpuSingleProcess.LoneCalls*"
{
for run in 2:Simple 3:Simple 2:default; do
  IFS=: read nr proto <<< "$run"
  env=(LD_LIBRARY_PATH=$B MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_MAX_NCHANNELS=4)
  [ "$proto" != default ] && env+=(NCCL_PROTO=$proto)
  s=$(date +%s)
  env "${env[@]}" timeout 150 $B/mccl_gpu_tests --gtest_filter="$T" > $L/shared_${nr}_$proto.log 2>&1
  echo "shared[$nr ranks, $proto]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED) ' $L/shared_${nr}_$proto.log | tr '\n' ' ' | cut -c1-600)"
  grep -a -m8 -E 'Failure|expected|took' $L/shared_${nr}_$proto.log | cut -c1-300
done
} > $L/tests.txt 2>&1
cat $L/tests.txt | cut -c1-300
bench() { local lib=$1; shift; LD_LIBRARY_PATH=$lib timeout 120 $B/mccl-threads-bench -r 2 "$@" 2>&1 | grep -v '^#'; echo "rc=${PIPESTATUS[0]}"; }
{
for r in 1 2; do
  for k in before now; do
    d=$B; [ $k = before ] && d=$B/before
    echo "== $k r$r default tuner"
    bench $d -b 4M -e 256M -f 4 -o allgather,broadcast,sendrecv,allreduce -n 20 -G 0
    echo "== $k r$r Simple 8 channels"
    NCCL_PROTO=Simple NCCL_MIN_NCHANNELS=8 NCCL_MAX_NCHANNELS=8 bench $d -b 1M -e 64M -f 8 -o allgather,broadcast,sendrecv -n 20 -G 0
  done
done
} > $L/ab.txt 2>&1
{
for r in 1 2; do
  for proto in LL128 LL Simple; do
    for t in float bf16 half; do
      echo "== types r$r $proto $t"
      NCCL_PROTO=$proto bench $B -d $t -b 128K -e 4M -f 2 -o allreduce,reducescatter,allreduce_max -n 50 -G 10
    done
  done
done
} > $L/types.txt 2>&1
grep -v "^op " $L/ab.txt | cut -c1-200
grep -v "^op " $L/types.txt | cut -c1-200
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
