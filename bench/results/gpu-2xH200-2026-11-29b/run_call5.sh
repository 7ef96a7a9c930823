#!/usr/bin/env bash
# Call 5 (2 x H200): call 4 measured AlltoAll of 16 MiB 12 % slower with the Recv half that
# waits than with even halves (one round; calls 1's two rounds had it level). Send/Recv and
# AlltoAll 8 - 32 MiB, the default and even halves alternating, six rounds of -t 5.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="-b 8M -e 32M -f 2 -t 5 -c 0 -o alltoall,sendrecv"
for r in 1 2 3 4 5 6; do
  [ $SECONDS -lt 400 ] || continue
  run a mccl $r "$P"
  run a even $r "$P" MCCL_P2P_DIRECT_RECV_THREADS=0
done
finish call5 a
