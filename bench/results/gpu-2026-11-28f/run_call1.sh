#!/usr/bin/env bash
# Call 1 (two GPUs, the build of 148f8b5, knobs only): the planner's open choices.
#   p:  Send/Recv, AlltoAll, Gather, Scatter 1 MiB - 1 GiB on 16 channels a direction
#       (NCCL_MAX_NCHANNELS=16: 32 blocks, NCCL's count) against the planner's 24 (48 blocks)
#   a:  AllReduce 256 KiB - 4 MiB with LL to 1 MiB (MCCL_LL_MAX_BYTES) against the default
#       (LL128 at 1 MiB)
#   g:  AllGather 512 KiB - 8 MiB total with LL128 to 1 MiB sent (MCCL_LL128_MAX_BYTES) or
#       LL to 1 MiB sent against the default (Simple from 2 MiB total)
# NCCL plain once a round in each set.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="-b 1M -e 1G -f 4 -t 3 -c 0 -o sendrecv,alltoall,gather,scatter"
A="-b 256K -e 4M -f 2 -t 3 -c 0 -o allreduce"
G="-b 512K -e 8M -f 2 -t 3 -c 0 -o allgather"
for r in 1 2 3; do
  run a mccl $r "$A"
  run a llone $r "$A" MCCL_LL_MAX_BYTES=1048576
  run a nccl $r "$A"
  run g mccl $r "$G"
  run g lltwo $r "$G" MCCL_LL128_MAX_BYTES=1048576
  run g llone $r "$G" MCCL_LL_MAX_BYTES=1048576
  run g nccl $r "$G"
done
for r in 1 2; do
  run p mccl $r "$P"
  run p csixteen $r "$P" NCCL_MAX_NCHANNELS=16
  run p nccl $r "$P"
done
finish call1 a g p
