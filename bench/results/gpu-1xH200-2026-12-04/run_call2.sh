#!/usr/bin/env bash
# Call 2 (one H200, two ranks sharing it as threads): the LL channel cap and the lean
# kernel's several-line form against main (ab/main: 32 channels, one-line copies, four-line
# reductions), and the knobs around them: new (24 channels, up to 8 lines a thread), new32
# (MCCL_LL_MAX_CHANNELS=32), lines1/2/4 (MCCL_LL_LEAN_LINES), cb8k
# (MCCL_LL_CHANNEL_BYTES=8192: NCCL's 16 blocks at 128 KiB); 8 KiB - 1 MiB, three rounds
# interleaved. Then the GPU tests call 1 left out on two ranks (GpuPlainDirect.*: its
# 80-rank ConnectionTableMemoryFollowsConnectedPeers ran past the call's limit).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
A="-r 2 -b 8K -e 1M -f 2 -n 100 -G 10 -o allreduce,reducescatter,allgather,broadcast,sendrecv"
for round in 1 2 3; do
  tb ll main $round "$A"
  tb ll new $round "$A"
  tb ll new32 $round "$A" MCCL_LL_MAX_CHANNELS=32
  tb ll lines1 $round "$A" MCCL_LL_LEAN_LINES=1
  tb ll lines2 $round "$A" MCCL_LL_LEAN_LINES=2
  tb ll lines4 $round "$A" MCCL_LL_LEAN_LINES=4
  tb ll cb8k $round "$A" MCCL_LL_CHANNEL_BYTES=8192
done
gtests 2 'GpuPlainDirect.*' 150
{
  cat $T
  python3 bench/threads_ab.py $W ll --ref main
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call2_summary.txt 2>&1
tar -czf $OUT/call2.tgz -C $W .
cat $OUT/call2_summary.txt
