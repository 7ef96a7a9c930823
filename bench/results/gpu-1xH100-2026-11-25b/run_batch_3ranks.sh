#!/usr/bin/env bash
# One H100 call: Simple steps scheduled a batch at a time, 3 ranks on the one GPU, against the same tree without it (2026-11-25).
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=32 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=8
L=$OUT/log; mkdir -p $L
nvidia-smi -L > $L/device.txt; date -u >> $L/device.txt
bench() { # lib, then bench args
  local lib=$1; shift
  LD_LIBRARY_PATH=$lib timeout 120 $B/mccl-threads-bench -r 3 "$@" 2>&1 | grep -v '^#'
  echo "rc=${PIPESTATUS[0]}"
}
{
for r in 1 2; do
  for lib in before now; do
    d=$B; [ $lib = before ] && d=$B/before
    echo "== $lib r$r Simple forced, 3 ranks"
    NCCL_PROTO=Simple bench $d -b 16K -e 4M -f 4 -o allreduce,reducescatter,allgather,broadcast -G 10 -n 100
  done
done
echo "== now profile 3 ranks, Simple, 1 channel, allreduce 48K"
NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=1 MCCL_PROFILE=1 LD_LIBRARY_PATH=$B timeout 60 $B/mccl-threads-bench -r 3 -b 48K -e 48K -o allreduce -G 10 -n 100 2>&1 | grep -v '^#'
echo "== before profile 3 ranks, Simple, 1 channel, allreduce 48K"
NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=1 MCCL_PROFILE=1 LD_LIBRARY_PATH=$B/before timeout 60 $B/mccl-threads-bench -r 3 -b 48K -e 48K -o allreduce -G 10 -n 100 2>&1 | grep -v '^#'
} > $L/threads3.txt 2>&1
grep -E "^==|Simple:|^allreduce|^reduce|^allgather|^broadcast|rc=" $L/threads3.txt | sed 's/mccl profile: //' | cut -c1-400
tar -C $OUT -czf $OUT/logs.tgz log && rm -rf $L
