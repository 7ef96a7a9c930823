#!/usr/bin/env bash
# One H100 call: the Simple kernels' copies with 8 vectors in flight a thread ("now")
# against 4 ("before"), channels 1, 4, 16, two ranks as threads sharing the GPU.
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=20 NCCL_PROTO=Simple
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
bench() { local lib=$1; shift; LD_LIBRARY_PATH=$lib timeout 120 $B/mccl-threads-bench -r 2 -G 0 "$@" 2>&1 | grep -v '^#'; echo "rc=${PIPESTATUS[0]}"; }
{
for r in 1 2; do
  for ch in 1 4 16; do
    for k in before now; do
      d=$B; [ $k = before ] && d=$B/before
      echo "== $k r$r channels $ch"
      NCCL_MIN_NCHANNELS=$ch NCCL_MAX_NCHANNELS=$ch bench $d -b 256M -e 256M -o allreduce,allgather,reducescatter,broadcast,sendrecv -n 6
    done
  done
done
} > $L/ab.txt 2>&1
{
for k in before now; do
  d=$B; [ $k = before ] && d=$B/before
  for op in allgather allreduce; do
    echo "== $k profile $op 64M channels 1"
    MCCL_PROFILE=1 NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1 bench $d -b 64M -e 64M -o $op -n 6
  done
done
} > $L/profile.txt 2>&1
cat $L/ab.txt | grep -v "^op " | cut -c1-200
grep -E "^==|rank 0 Simple" $L/profile.txt | sed "s/mccl profile: //" | cut -c1-250
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
