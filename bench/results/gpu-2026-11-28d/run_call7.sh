#!/usr/bin/env bash
# Call 7 (two GPUs, the build of call 6): point-to-point steps below 256 KiB (a slot of
# 128 / 192 KiB by NCCL_P2P_NVL_CHUNKSIZE: at 16 MiB both ways 64 steps of 256 KiB are too
# few for units on 24 channels, 128 of 128 KiB are not), Send/Recv and AlltoAll 4 - 64 MiB;
# ReduceScatter and AllReduce 512 KiB - 2 MiB on LL with NCCL's 24 channels (and 16) and on
# Simple with 16. Two rounds of the default, one of each variant, NCCL plain and registered.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="-b 4M -e 64M -f 2 -t 3 -c 0 -o sendrecv,alltoall"
R="-b 512K -e 2M -f 2 -t 3 -c 0 -o reducescatter,allreduce"
for r in 1 2; do
  run p mccl $r "$P"
  run r mccl $r "$R"
  [ $r = 1 ] || continue
  run p slot128K $r "$P" NCCL_P2P_NVL_CHUNKSIZE=131072
  run p slot192K $r "$P" NCCL_P2P_NVL_CHUNKSIZE=196608
  run p ncclR1 $r "$P -R 1"
  run r llc24 $r "$R" NCCL_PROTO=LL NCCL_MAX_NCHANNELS=24
  run r llc16 $r "$R" NCCL_PROTO=LL NCCL_MAX_NCHANNELS=16
  run r simple16 $r "$R" NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=16
  run r nccl $r "$R"
done
finish call7 p r
