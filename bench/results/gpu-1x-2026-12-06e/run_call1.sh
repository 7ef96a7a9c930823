#!/usr/bin/env bash
# Call 1 (one GPU): libmccl_mpi's staged point-to-point calls with pinned host copies and
# receives that copy back only the bytes that came (this build) against main at 552144b
# (`old`, the pack's ab/old); the raw copies the staging makes; the preload suite (the new
# short-message checks, the routed collectives' nonblocking fallback as a staged request)
# on 2 and 3 processes sharing the GPU.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
P="$L/libmccl_mpi.so"
OLD="-x LD_LIBRARY_PATH=$L/ab/old:$L"
timeout 60 ${M/-np 2/-np 1} $B/micro_mpi_pingpong copies 4194304 2000 > $W/copies.txt 2>&1
for round in 1 2; do
  for v in new old; do
    x=""; [ $v = old ] && x=$OLD
    timeout 90 $M $x -x LD_PRELOAD=$P $B/micro_mpi_pingpong device0 4194304 2000 > $W/pp_device0_${v}_$round.txt 2>&1
  done
done
for v in new old; do
  x=""; [ $v = old ] && x=$OLD
  timeout 90 $M $x -x LD_PRELOAD=$P $B/micro_mpi_pingpong device 4194304 500 > $W/pp_device_${v}.txt 2>&1
done
timeout 200 $M -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload2.log 2>&1
res "preload suite np 2" $? $W/preload2.log
gtestLines $W/preload2.log >> $T
timeout 200 ${M/-np 2/-np 3} -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload3.log 2>&1
res "preload suite np 3" $? $W/preload3.log
gtestLines $W/preload3.log >> $T
{
  echo "== the staging's copies (one process)"
  cat $W/copies.txt
  echo "== ping-pong, rank 0 on device buffers, rank 1 on host: new | old, round 1 | round 2"
  paste $W/pp_device0_new_1.txt $W/pp_device0_old_1.txt $W/pp_device0_new_2.txt $W/pp_device0_old_2.txt
  echo "== ping-pong, both ranks on device buffers (sharing the GPU): new | old"
  paste $W/pp_device_new.txt $W/pp_device_old.txt
} >> $T
finish call1
