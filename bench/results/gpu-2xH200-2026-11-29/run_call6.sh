#!/usr/bin/env bash
# Call 6 (2 x H200): a rank's Sends and Recvs to itself on 8 channels at most (the copy of
# an AlltoAll's own block, a Gather's or Scatter's root), where they took up to 32 beside
# the peer's 32 joined blocks. Tests: the point-to-point and AlltoAll-family ones on the
# two GPUs and on three ranks sharing them, and the units test on two. Then AlltoAll,
# Gather, Scatter, Send/Recv 1 MiB - 1 GiB against the build before (old/: 9cc08a8) and
# NCCL plain; three rounds.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
FP='GpuSingleProcess.PointToPoint*:GpuSingleProcess.SelfSendRecvPairsAndBacklog:GpuSingleProcess.AlltoAll*:GpuSingleProcess.OneThreadGatherEveryRootAndProtocol'
gtests 2 "$FP:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm" 150
gtests 3 "$FP" 100
P="-b 1M -e 1G -f 4 -t 3 -c 0 -o alltoall,gather,scatter,sendrecv"
for r in 1 2 3; do
  [ $SECONDS -lt 480 ] || continue
  run w mccl $r "$P"
  run w old $r "$P"
  run w nccl $r "$P"
done
finish call6 w
