#!/usr/bin/env bash
# One H100 call: the generic kernel's Simple step with its operands in registers ("now")
# against 871cc4f ("before"), MCCL_SIMPLE_KERNEL=0 (every Simple launch in the generic
# kernel), two and three ranks sharing the GPU.
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
T="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleKernels*:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.GraphCapture*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.LoneCalls*"
{
for run in 2:Simple:0:any 3:Simple:0:Tree 3:Simple:1:any 2:default:1:any; do
  IFS=: read nr proto k algo <<< "$run"
  env=(LD_LIBRARY_PATH=$B MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_MAX_NCHANNELS=4 MCCL_SIMPLE_KERNEL=$k)
  [ "$proto" != default ] && env+=(NCCL_PROTO=$proto)
  [ "$algo" != any ] && env+=(NCCL_ALGO=$algo)
  s=$(date +%s)
  env "${env[@]}" timeout 150 $B/mccl_gpu_tests --gtest_filter="$T" > $L/shared_${nr}_${proto}_$k$algo.log 2>&1
  echo "shared[$nr ranks, $proto, MCCL_SIMPLE_KERNEL=$k, algo $algo]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED) ' $L/shared_${nr}_${proto}_$k$algo.log | tr '\n' ' ' | cut -c1-700)"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|took' $L/shared_${nr}_${proto}_$k$algo.log | cut -c1-300
done
s=$(date +%s)
LD_LIBRARY_PATH=$B timeout 200 $B/mccl_gpu_tests > $L/one_rank.log 2>&1
echo "one GPU, one rank, every test: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[  (PASSED|FAILED) ' $L/one_rank.log | tr '\n' ' ')"
grep -a -m8 -E '^\[  FAILED|Failure' $L/one_rank.log | cut -c1-300
} > $L/tests.txt 2>&1
cat $L/tests.txt | cut -c1-300
bench() { local lib=$1; shift; LD_LIBRARY_PATH=$lib timeout 100 $B/mccl-threads-bench "$@" 2>&1 | grep -v '^#'; echo "rc=${PIPESTATUS[0]}"; }
{
for r in 1 2; do
  for k in before now; do
    d=$B; [ $k = before ] && d=$B/before
    echo "== $k r$r generic Simple"
    MCCL_SIMPLE_KERNEL=0 NCCL_PROTO=Simple bench $d -r 2 -b 16K -e 4M -f 4 -o allreduce,reducescatter,allgather,broadcast -G 10 -n 100
    echo "== $k r$r generic Simple tree, 3 ranks"
    MCCL_SIMPLE_KERNEL=0 NCCL_PROTO=Simple NCCL_ALGO=Tree NCCL_MAX_NCHANNELS=8 bench $d -r 3 -b 16K -e 1M -f 4 -o allreduce,broadcast -G 10 -n 100
  done
done
} > $L/threads.txt 2>&1
{
for k in before now; do
  d=$B; [ $k = before ] && d=$B/before
  echo "== $k generic Simple channels 1, allreduce 16K"
  MCCL_SIMPLE_KERNEL=0 NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=1 MCCL_PROFILE=1 bench $d -r 2 -b 16K -e 16K -o allreduce -G 10 -n 100
done
} > $L/profile.txt 2>&1
grep -E "^==|rank 0 Simple:" $L/profile.txt | sed "s/mccl profile: //" | cut -c1-330
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
