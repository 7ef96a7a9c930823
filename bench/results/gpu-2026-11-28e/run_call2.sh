#!/usr/bin/env bash
# Call 2 (two ranks): every collective and Send/Recv 16 KiB - 4 MiB, the default protocols
# and LL forced, the build of call 1 (mccl) against the landed build (old/: dc83a09, lines
# read one after the other), three rounds interleaved, NCCL plain once a round.
RUN_TIMEOUT=120
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="-b 16K -e 4M -f 2 -t 3 -c 0 -o allreduce,reducescatter,allgather,broadcast,reduce,sendrecv"
for r in 1 2 3; do
  run s mccl $r "$P"
  run s old $r "$P"
  run s mcclLL $r "$P" NCCL_PROTO=LL
  run s oldLL $r "$P" NCCL_PROTO=LL
  run s nccl $r "$P"
done
finish call2 s
