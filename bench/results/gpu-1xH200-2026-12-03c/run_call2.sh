#!/usr/bin/env bash
# Call 2 (one H200, ranks sharing it): a rank's copies to itself on the copy engines beside
# the kernel (MCCL_SELF_COPY_ENGINE_BYTES, default 1 MiB) against the kernel's blocks (=0),
# same build, same call: AlltoAll, Gather, Scatter 1 MiB - 1 GiB total on two ranks as
# threads, eager and in graphs, three rounds interleaved; the tests that pair copies to
# itself (in the kernel and on the engines, in graphs), on two and three ranks, and the
# user-buffer MPI test (AlltoAll on Simple) on two processes.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
F='GpuSingleProcess.SelfSendRecvPairsAndBacklog:GpuSingleProcess.AlltoAllFamilyInGraphCapture:GpuSingleProcess.AlltoAllGatherScatterAlltoAllv:GpuSingleProcess.OneThreadGatherEveryRootAndProtocol:GpuSingleProcess.PointToPointUnitsBesideCollectiveUnitsInAnyCallOrder:GpuSingleProcess.PointToPointPatterns'
gtests 2 "$F" 200
gtests 3 "$F" 240
mpitests 'GpuMpi.UserBuffersRegisteredAndPlainOutputs:GpuMpi.SendRecvUnitsByAgreement' 150
A="-r 2 -b 1M -e 1G -f 4 -n 20 -G 5 -o alltoall,gather,scatter"
RUN_TIMEOUT=240
for round in 1 2 3; do
  tb sc kernel $round "$A" MCCL_SELF_COPY_ENGINE_BYTES=0
  tb sc engines $round "$A"
done
{
  cat $T
  python3 bench/threads_ab.py $W sc --ref kernel
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call2_summary.txt 2>&1
tar -czf $OUT/call2.tgz -C $W .
cat $OUT/call2_summary.txt
