#!/usr/bin/env bash
# Call 1 (2 x H200): a joined block's Recv half that only waits (every Recv on the
# user-buffer path) keeps MCCL_P2P_DIRECT_RECV_THREADS and the Send half the rest. Tests:
# every single-process GPU test on the two GPUs; the point-to-point and AlltoAll-family
# ones on three ranks sharing them. Then Send/Recv both ways and AlltoAll 4 MiB - 1 GiB by
# 2x: the default (64 threads wait, r64), 32 and 128, even halves (0, the rule before),
# main (old/: 7127ff7), NCCL 2.28.3 plain and registered; two rounds.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
FP='GpuSingleProcess.PointToPoint*:GpuSingleProcess.SelfSendRecvPairsAndBacklog:GpuSingleProcess.AlltoAll*:GpuSingleProcess.OneThreadGatherEveryRootAndProtocol'
gtests 2 '*' 200
gtests 3 "$FP" 100
P="-b 4M -e 1G -f 2 -t 3 -c 0 -o sendrecv,alltoall"
for r in 1 2; do
  [ $SECONDS -lt 500 ] || continue
  run u mccl $r "$P"
  run u r32 $r "$P" MCCL_P2P_DIRECT_RECV_THREADS=32
  run u r128 $r "$P" MCCL_P2P_DIRECT_RECV_THREADS=128
  run u even $r "$P" MCCL_P2P_DIRECT_RECV_THREADS=0
  run u old $r "$P"
  run u nccl $r "$P"
  run u ncclreg $r "$P -R 1"
done
finish call1 u
