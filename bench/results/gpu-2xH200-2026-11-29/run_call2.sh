#!/usr/bin/env bash
# Call 2 (2 x H200): the build landed (MCCL_P2P_BLOCK_BOTH_WAYS=1 by default: joined blocks,
# point-to-point on up to 32 channels, a channel a 64 KiB). Every single-process GPU test on
# the two GPUs (all but the 80-rank one), and the point-to-point ones on three ranks sharing
# them; then
#   p: Send/Recv both ways, AlltoAll, Gather, Scatter (one way: not joined, now up to 32
#      blocks where there were 24) 1 MiB - 1 GiB against main (old/) and NCCL plain;
#   l: AllReduce, ReduceScatter, AllGather 256 KiB - 8 MiB (the LL128 change of b0bf59d,
#      never measured on two GPUs) against NCCL plain;
#   s: the Simple collectives 16 MiB - 1 GiB (AllReduce, Broadcast, AllGather) against main
#      (old/: 3f0fd62, the units' claim on the posting warp) and NCCL plain.
# Three rounds.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
gtests 2 'GpuSingleProcess.*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers' 240
gtests 3 'GpuSingleProcess.PointToPoint*:GpuSingleProcess.SelfSendRecvPairsAndBacklog:GpuSingleProcess.AlltoAll*' 100
P="-b 1M -e 1G -f 4 -t 3 -c 0 -o sendrecv,alltoall,gather,scatter"
A="-b 256K -e 8M -f 2 -t 3 -c 0 -o allreduce,reducescatter,allgather"
S="-b 16M -e 1G -f 4 -t 3 -c 0 -o allreduce,broadcast,allgather"
for r in 1 2 3; do
  [ $SECONDS -lt 500 ] || continue
  run p mccl $r "$P"
  run p old $r "$P"
  run p nccl $r "$P"
  run l mccl $r "$A"
  run l nccl $r "$A"
  run s mccl $r "$S"
  run s old $r "$S"
  run s nccl $r "$S"
done
finish call2 p l s
