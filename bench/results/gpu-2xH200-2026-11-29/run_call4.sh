#!/usr/bin/env bash
# Call 4 (2 x H200, knobs only): where joined blocks lost to main's 48 (Send/Recv 16-64 MiB,
# AlltoAll 64-512 MiB), the step and unit choices on 32 channels: MCCL_SIMPLE_UNIT_STEPS 2
# and 8 against the default (4; 128 KiB steps from 32 MiB), and main (old/); two rounds.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="-b 8M -e 512M -f 2 -t 3 -c 0 -o sendrecv,alltoall"
for r in 1 2; do
  [ $SECONDS -lt 450 ] || continue
  run u mccl $r "$P"
  run u stwo $r "$P" MCCL_SIMPLE_UNIT_STEPS=2
  run u seight $r "$P" MCCL_SIMPLE_UNIT_STEPS=8
  run u old $r "$P"
done
finish call4 u
