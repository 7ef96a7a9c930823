#!/usr/bin/env bash
# Call 1 (two GPUs, the build of 4f82fd2): where two-rank mccl is still below NCCL's best
# (AllReduce 1 MiB, Send/Recv and AlltoAll 8-16 MiB, AllGather 64 MiB), the planner's
# choices against forced ones: protocol, channels, the point-to-point slot, the user-buffer
# thresholds. Two rounds of the default, one of each variant, NCCL plain and registered.
cd "$(dirname "$0")/../../.."
RUN_TIMEOUT=60
. bench/device_call.sh
R="-b 512K -e 2M -f 2 -t 3 -c 0 -o allreduce"; R2="-b 768K -e 1536K -f 2 -t 3 -c 0 -o allreduce"
P="-b 4M -e 32M -f 2 -t 3 -c 0 -o sendrecv,alltoall"
G="-b 16M -e 128M -f 2 -t 3 -c 0 -o allgather,broadcast"
for r in 1 2; do
  for a in "$R" "$R2"; do s=r; [ "$a" = "$R2" ] && s=q
    run $s mccl $r "$a"
    [ $r = 1 ] || continue
    run $s simple $r "$a" NCCL_PROTO=Simple
    run $s simple16 $r "$a" NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=16
    run $s simple32 $r "$a" NCCL_PROTO=Simple NCCL_MIN_NCHANNELS=32
    run $s simpleub $r "$a" NCCL_PROTO=Simple MCCL_USER_BUFFERS_ALLREDUCE_BYTES=524288
    run $s ll128 $r "$a" NCCL_PROTO=LL128
    run $s ll128c16 $r "$a" NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=16
    run $s ll128c24 $r "$a" NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=24
    run $s nccl $r "$a"
    run $s ncclR1 $r "$a -R 1"
  done
  run p mccl $r "$P"
  run g mccl $r "$G"
  [ $r = 1 ] || continue
  run p c32 $r "$P" NCCL_MIN_NCHANNELS=32
  run p c16 $r "$P" NCCL_MAX_NCHANNELS=16
  run p chunk1M $r "$P" NCCL_P2P_NVL_CHUNKSIZE=1048576
  run p chunk256K $r "$P" NCCL_P2P_NVL_CHUNKSIZE=262144
  run p ub4M $r "$P" MCCL_USER_BUFFERS_SENDRECV_BYTES=4194304 MCCL_USER_BUFFERS_ALLTOALL_BYTES=4194304
  run p nccl $r "$P"
  run p ncclR1 $r "$P -R 1"
  run g c16 $r "$G" NCCL_MAX_NCHANNELS=16
  run g c32 $r "$G" NCCL_MIN_NCHANNELS=32
  run g buf8M $r "$G" NCCL_BUFFSIZE=8388608
  run g buf2M $r "$G" NCCL_BUFFSIZE=2097152
  run g nccl $r "$G"
  run g ncclR1 $r "$G -R 1"
done
finish call1 r q p g
