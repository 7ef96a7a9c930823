#!/usr/bin/env bash
# One H100 call (ranks as threads sharing the GPU): LL128 sums of 16-bit floats with the type's
# own paired adds (__hadd2, "now") against the landed form of call 5 ("before");
# GPU tests with LL128 at 2 and 3 ranks and the default tuner at 2; one rank with every GPU test.

cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=20
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
T="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.Ll128Kernels*:GpuSingleProcess.LeanAndGeneral*:GpuSingleProcess.GraphCapture*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.LoneCalls*:GpuSingleProcess.SimpleKernels*"
{
for run in 2:LL128 3:LL128 2:default; do
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
bench() { local lib=$1; shift; LD_LIBRARY_PATH=$lib timeout 120 $B/mccl-threads-bench "$@" 2>&1 | grep -v '^#'; echo "rc=${PIPESTATUS[0]}"; }
s=$(date +%s)
LD_LIBRARY_PATH=$B timeout 200 $B/mccl_gpu_tests > $L/one_rank.log 2>&1
echo "one GPU, one rank, every test: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[  (PASSED|FAILED) ' $L/one_rank.log | tr '\n' ' ')" >> $L/tests.txt
tail -1 $L/tests.txt
{
for r in 1 2; do
  for proto in LL128; do
    for t in bf16 half; do
      for k in before now; do
        d=$B; [ $k = before ] && d=$B/before
        echo "== $k r$r $proto $t 2 ranks"
        NCCL_PROTO=$proto bench $d -r 2 -d $t -b 128K -e 4M -f 2 -o allreduce,reducescatter,allreduce_max -n 50 -G 10
      done
    done
  done
  for k in before now; do
    d=$B; [ $k = before ] && d=$B/before
    echo "== $k r$r LL128 bf16 3 ranks"
    NCCL_PROTO=LL128 bench $d -r 3 -d bf16 -b 128K -e 2M -f 4 -o allreduce,reducescatter -n 50 -G 10
  done
done
} > $L/types.txt 2>&1
grep -v "^op " $L/types.txt | cut -c1-200
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
