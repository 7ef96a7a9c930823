#!/usr/bin/env bash
# One H100 call: Simple's throughput per channel (block) at large sizes, two ranks as
# threads sharing the GPU: channels 1-64, threads, FIFO size and slices; MCCL_PROFILE's
# per-step split (wait / move / post) at 1 and 4 channels.
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=20 NCCL_PROTO=Simple
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
bench() { LD_LIBRARY_PATH=$B timeout 120 $B/mccl-threads-bench -r 2 -G 0 "$@" 2>&1 | grep -v '^#'; echo "rc=${PIPESTATUS[0]}"; }
{
for ch in 1 2 4 8 16 32 64; do
  echo "== channels $ch"
  NCCL_MIN_NCHANNELS=$ch NCCL_MAX_NCHANNELS=$ch bench -b 64M -e 256M -f 4 -o allreduce,allgather,reducescatter,broadcast,sendrecv -n 6
done
} > $L/channels.txt 2>&1
{
for th in 256 384 512; do
  echo "== threads $th channels 4"
  NCCL_NTHREADS=$th NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4 bench -b 256M -e 256M -o allreduce,allgather -n 6
done
for bs in 1048576 2097152 8388608 16777216; do
  for sl in 1 2 4; do
    echo "== buffsize $bs slices $sl channels 4"
    NCCL_BUFFSIZE=$bs MCCL_GPU_SLICES=$sl NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4 bench -b 256M -e 256M -o allreduce,allgather -n 6
  done
done
} > $L/knobs.txt 2>&1
{
for ch in 1 4 16; do
  for op in allreduce allgather; do
    echo "== profile $op 64M channels $ch"
    MCCL_PROFILE=1 NCCL_MIN_NCHANNELS=$ch NCCL_MAX_NCHANNELS=$ch bench -b 64M -e 64M -o $op -n 6
  done
done
} > $L/profile.txt 2>&1
cat $L/channels.txt $L/knobs.txt | cut -c1-200
grep -E "^==|rank 0 Simple" $L/profile.txt | sed "s/mccl profile: //" | cut -c1-400
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
