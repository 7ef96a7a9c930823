#!/usr/bin/env bash
# Call 6 (two ranks, the build of calls 4-5): (a) LL up to 512 KiB a rank sends
# (MCCL_LL_MAX_BYTES=524288) for ReduceScatter and point-to-point, where call 5 found LL
# now faster than the default's Simple (ReduceScatter 1 MiB) and LL128 (Send/Recv 256-512
# KiB), against the default, three rounds, NCCL plain once a round; (b) the lean LL
# kernel's sizes, 8 B - 64 KiB, new against the landed build (old/), five rounds
# interleaved: whether the small-size differences of calls 2 and 5 (both ways, up to 20 %,
# Broadcast's unchanged path among them) are the host's or the change's.
RUN_TIMEOUT=120
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="-b 64K -e 2M -f 2 -t 3 -c 0 -o reducescatter,sendrecv,alltoall,gather,scatter"
for r in 1 2 3; do
  run p mccl $r "$P"
  run p ll512 $r "$P" MCCL_LL_MAX_BYTES=524288
  run p nccl $r "$P"
done
S="-b 8 -e 64K -f 8 -t 3 -c 0 -o allreduce,reducescatter,allgather,reduce,broadcast"
for r in 1 2 3 4 5; do
  run l mccl $r "$S"
  run l old $r "$S"
done
finish call6 p l
