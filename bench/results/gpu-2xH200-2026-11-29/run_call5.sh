#!/usr/bin/env bash
# Call 5 (2 x H200, knobs only): is the joined blocks' loss at 16 MiB and up the user-buffer
# path's? From 8 MiB a Send/Recv both ways (and an AlltoAll's 8 MiB blocks) writes straight
# into the peer's output, so a joined block's Recv half waits while its Send half, 224
# movers, does all the moving. The FIFO path (MCCL_USER_BUFFERS_SENDRECV_BYTES=0,
# MCCL_USER_BUFFERS_ALLTOALL_BYTES=0: nodirect) against the default, on this build and on
# main (old/, oldnodirect); two rounds.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="-b 8M -e 512M -f 2 -t 3 -c 0 -o sendrecv,alltoall"
N="MCCL_USER_BUFFERS_SENDRECV_BYTES=0 MCCL_USER_BUFFERS_ALLTOALL_BYTES=0"
for r in 1 2; do
  [ $SECONDS -lt 450 ] || continue
  run v mccl $r "$P"
  run v nodirect $r "$P" $N
  run v old $r "$P"
  run v oldnodirect $r "$P" $N
done
finish call5 v
