#!/usr/bin/env bash
# Call 3 (2 x H200): the landed build's point-to-point against NCCL's modes, 2 MiB - 1 GiB
# by 2x: mccl plain (-R 0) and registered (-R 1), main (old/) plain, NCCL 2.28.3 plain,
# registered and on windows (-R 2); Send/Recv both ways, AlltoAll, Gather, Scatter; two
# rounds.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="-b 2M -e 1G -f 2 -t 3 -c 0 -o sendrecv,alltoall,gather,scatter"
for r in 1 2; do
  [ $SECONDS -lt 450 ] || continue
  run q mccl $r "$P"
  run q mreg $r "$P -R 1"
  run q old $r "$P"
  run q nccl $r "$P"
  run q ncclreg $r "$P -R 1"
  run q ncclwin $r "$P -R 2"
done
finish call3 q
