#!/usr/bin/env bash
# Call 5 (two GPUs, 4cbe485): the two points call 4 left below NCCL on a fast-NCCL host.
# ReduceScatter 256 KiB - 4 MiB under each protocol forced (the planner gives it LL to
# 384 KiB sent, then Simple; it never takes LL128); Send/Recv (both ways) 8 - 32 MiB by
# steps a channel (MCCL_SIMPLE_UNIT_STEPS: at 16 MiB 4 give 256 KiB steps, 2.7 a channel
# in fixed ranges). Two rounds of the default, one of each variant, NCCL plain, registered.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
R="-b 256K -e 4M -f 2 -t 3 -c 0 -o reducescatter,allreduce"
P="-b 8M -e 32M -f 2 -t 3 -c 0 -o sendrecv,alltoall"
for r in 1 2; do
  run r mccl $r "$R"
  run p mccl $r "$P"
  [ $r = 1 ] || continue
  run r ll $r "$R" NCCL_PROTO=LL
  run r ll128 $r "$R" NCCL_PROTO=LL128
  run r simple $r "$R" NCCL_PROTO=Simple
  run r ll128c16 $r "$R" NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=16
  run r nccl $r "$R"; run r ncclR1 $r "$R -R 1"
  for s in 2 3 6 8; do run p s$s $r "$P" MCCL_SIMPLE_UNIT_STEPS=$s; done
  run p nccl $r "$P"; run p ncclR1 $r "$P -R 1"
done
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING timeout 60 $M -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS $B/nccl-perf -b 1M -e 1M -t 1 -c 0 -o reducescatter,allreduce > $W/nccl_tuning.log 2>&1
{ echo "### NCCL's choices at 1 MiB"; grep -aE "AllReduce|ReduceScatter" $W/nccl_tuning.log | grep -ai "algo\|proto\|channel" | head -8; } >> $T
finish call5 r p
