#!/usr/bin/env bash
# Call 8 (two GPUs, the build of call 6): (a) where the time of ReduceScatter and AllReduce
# of 1 MiB goes (MCCL_PROFILE=1: per-step phases of the Simple and LL kernels, printed at
# destroy), the default and LL forced on NCCL's 24 channels; (b) call 7's point-to-point
# lead again, three rounds interleaved: a 128 KiB slot (NCCL_P2P_NVL_CHUNKSIZE) against the
# default 512 KiB, Send/Recv, AlltoAll, Gather, Scatter 16 - 256 MiB.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for op in reducescatter allreduce; do
  for v in default LL; do
    x=(); [ $v = LL ] && x=(-x NCCL_PROTO=LL -x NCCL_MAX_NCHANNELS=24)
    timeout 60 $M -x MCCL_PROFILE=1 "${x[@]}" $B/mccl-perf -b 1M -e 1M -t 1 -c 0 -o $op > $W/prof_${op}_$v.log 2>&1
    { echo "### $op 1 MiB, $v"; grep -a "mccl profile\|^ *$op\|1048576" $W/prof_${op}_$v.log | cut -c1-900 | head -12; } >> $T
  done
done
P="-b 16M -e 256M -f 2 -t 3 -c 0 -o sendrecv,alltoall,gather,scatter"
for r in 1 2 3; do
  run p mccl $r "$P"
  run p slot128K $r "$P" NCCL_P2P_NVL_CHUNKSIZE=131072
done
finish call8 p
