#!/usr/bin/env bash
# Call 10 (two GPUs, the build of call 6): call 9's point-to-point lead taken apart. A
# 128 KiB slot gives 128 KiB steps and 28 slots in flight (NCCL_BUFFSIZE 4 MiB / 128 KiB,
# at most 28); with NCCL_BUFFSIZE=1 MiB the same steps with 8 slots, as the default's 8 of
# 512 KiB; a 256 KiB slot likewise with 16 slots and with 8 (2 MiB). Send/Recv, AlltoAll,
# Gather, Scatter 16 - 256 MiB, two rounds interleaved.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="-b 16M -e 256M -f 2 -t 3 -c 0 -o sendrecv,alltoall,gather,scatter"
for r in 1 2; do
  run p mccl $r "$P"
  run p slot128K $r "$P" NCCL_P2P_NVL_CHUNKSIZE=131072
  run p slot128Kd8 $r "$P" NCCL_P2P_NVL_CHUNKSIZE=131072 NCCL_BUFFSIZE=1048576
  run p slot256K $r "$P" NCCL_P2P_NVL_CHUNKSIZE=262144
  run p slot256Kd8 $r "$P" NCCL_P2P_NVL_CHUNKSIZE=262144 NCCL_BUFFSIZE=2097152
done
finish call10 p
