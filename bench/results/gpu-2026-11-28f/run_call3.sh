#!/usr/bin/env bash
# Call 3 (two GPUs): the LL-family sizes on NCCL's channel count. NCCL 2.28 takes 24 channels
# (blocks) from 512 KiB on 2 x H200 (gpu-2xH200-2026-11-26c channels.md); the planner takes
# LL and LL128 to 32 (kLlMaxChannels).
#   r: AllReduce and ReduceScatter 256 KiB - 2 MiB on old/ (148f8b5, whose kernels and
#      choices for these are the landed ones): the planner's channels, at most 24, at most 16
#   g: AllGather 512 KiB - 2 MiB total on the call 2 pack's library (the landed planner; its
#      LL and LL128 copy kernels are the landed ones): the planner's channels, at most 24
# Three rounds interleaved, NCCL plain once a round.
RUN_TIMEOUT=90
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
R="-b 256K -e 2M -f 2 -t 3 -c 0 -o allreduce,reducescatter"
G="-b 512K -e 2M -f 2 -t 3 -c 0 -o allgather"
for r in 1 2 3; do
  # old/ by LD_LIBRARY_PATH (the later -x wins), so that summary.py's reference is named mccl
  run r mccl $r "$R" LD_LIBRARY_PATH=$L/old:$L
  run r ctf $r "$R" LD_LIBRARY_PATH=$L/old:$L NCCL_MAX_NCHANNELS=24
  run r csixteen $r "$R" LD_LIBRARY_PATH=$L/old:$L NCCL_MAX_NCHANNELS=16
  run r nccl $r "$R"
  run g mccl $r "$G"
  run g ctf $r "$G" NCCL_MAX_NCHANNELS=24
  run g nccl $r "$G"
done
finish call3 r g
