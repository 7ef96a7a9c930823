#!/usr/bin/env bash
# Call 1 (2 x H200): MCCL_P2P_BLOCK_BOTH_WAYS (a peer's Sends and Recvs on one channel in
# one block, half its threads each way, as NCCL's blocks). Tests: the new test on the two
# GPUs and on three ranks sharing them; the point-to-point tests with the knob on, the same.
# Then Send/Recv both ways (two ranks: the ring shift is a pair) and AlltoAll, 1 MiB - 1 GiB:
# main (old/), this build by default (new), with the knob on the planner's 24 channels
# (both: 24 blocks) and on NCCL's 32 (both32), and NCCL 2.28.3 plain; two rounds.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
# (The new test sets the knob itself and unsets it at its end: it runs on its own.)
FP='GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.SelfSendRecvPairsAndBacklog:GpuSingleProcess.PointToPointUnitsBesideCollectiveUnitsInAnyCallOrder:GpuSingleProcess.AlltoAll*'
for nr in 2 3; do
  gtests $nr GpuSingleProcess.PointToPointBothWaysInOneBlock 60
  MCCL_P2P_BLOCK_BOTH_WAYS=1 gtests $nr "$FP" 100
done
P="-b 1M -e 1G -f 4 -t 3 -c 0 -o sendrecv,alltoall"
for r in 1 2; do
  [ $SECONDS -lt 480 ] || continue
  run p old $r "$P"
  run p mccl $r "$P"
  run p both $r "$P" MCCL_P2P_BLOCK_BOTH_WAYS=1
  run p bothtt $r "$P" MCCL_P2P_BLOCK_BOTH_WAYS=1 NCCL_MIN_NCHANNELS=32
  run p nccl $r "$P"
done
finish call1 p
