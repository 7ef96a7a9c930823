#!/usr/bin/env bash
# One H100 call: the Simple kernels with the ring order in shared memory and the Io in
# registers ("now") against the commit before ("before", 0491aa2), two ranks sharing the GPU.
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
{
for run in 2:Simple 3:Simple; do
  nr=${run%%:*} proto=${run#*:}
  s=$(date +%s)
  LD_LIBRARY_PATH=$B MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_MAX_NCHANNELS=4 NCCL_PROTO=$proto timeout 150 $B/mccl_gpu_tests \
    --gtest_filter="GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleKernels*:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.GraphCapture*" > $L/shared_${nr}_$proto.log 2>&1
  echo "shared[$nr ranks, $proto]: rc=$? $(( $(date +%s) - s )) s $(grep -aE '^\[ *(OK|PASSED|FAILED) ' $L/shared_${nr}_$proto.log | tr '\n' ' ' | cut -c1-900)"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|took' $L/shared_${nr}_$proto.log | cut -c1-300
done
} > $L/tests.txt 2>&1
cat $L/tests.txt | cut -c1-300
bench() { local lib=$1; shift; LD_LIBRARY_PATH=$lib timeout 100 $B/mccl-threads-bench "$@" 2>&1 | grep -v '^#'; echo "rc=${PIPESTATUS[0]}"; }
{
for r in 1 2 3; do
  for k in before now; do
    d=$B; [ $k = before ] && d=$B/before
    echo "== $k r$r Simple forced"
    NCCL_PROTO=Simple bench $d -r 2 -b 16K -e 4M -f 4 -o allreduce,reducescatter,allgather,broadcast,sendrecv -G 10 -n 100
    echo "== $k r$r Simple forced, 3 ranks"
    NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=8 bench $d -r 3 -b 16K -e 1M -f 4 -o reducescatter,allgather -G 10 -n 100
  done
done
} > $L/threads.txt 2>&1
{
for k in before now; do
  d=$B; [ $k = before ] && d=$B/before
  for op in allreduce reducescatter allgather; do
    echo "== $k Simple channels 1, $op 16K"
    NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=1 MCCL_PROFILE=1 bench $d -r 2 -b 16K -e 16K -o $op -G 10 -n 100
  done
done
} > $L/profile.txt 2>&1
grep -E "^==|rank 0 Simple:" $L/profile.txt | sed "s/mccl profile: //" | cut -c1-330
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
