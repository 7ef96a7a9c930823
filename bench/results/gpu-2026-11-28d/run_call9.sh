#!/usr/bin/env bash
# Call 9 (two GPUs, the build of call 6): what made call 8's 128 KiB point-to-point slot
# faster at 64-128 MiB, more units a channel (16 steps a channel, MCCL_SIMPLE_UNIT_STEPS;
# steps still >= 256 KiB) or a deeper FIFO (a 256 KiB slot: 16 slots, steps of 256 KiB).
# Send/Recv, AlltoAll, Gather, Scatter 16 - 256 MiB, three rounds interleaved.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="-b 16M -e 256M -f 2 -t 3 -c 0 -o sendrecv,alltoall,gather,scatter"
for r in 1 2 3; do
  run p mccl $r "$P"
  run p s16 $r "$P" MCCL_SIMPLE_UNIT_STEPS=16
  run p slot128K $r "$P" NCCL_P2P_NVL_CHUNKSIZE=131072
  run p slot256K $r "$P" NCCL_P2P_NVL_CHUNKSIZE=262144
done
finish call9 p
