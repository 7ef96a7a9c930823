#!/usr/bin/env bash
# Call 1 (one H200, two ranks as threads sharing it): where a Simple block's first
# microseconds go. A build with start marks (MCCL_PROFILE, not landed: start_marks_not_landed.diff)
# prints, per block of a launch's first work, the time from the block's start to: the
# parameters in shared memory, the PDL wait, thread 0's and thread 32's connection loads,
# the ring table, the block barrier, the offers or units agreed, the first step.
# With PDL off and on; and the LL-family kernels' block start to first setup, PDL off and on.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
TB=$B/mccl-threads-bench
for pdl in 0 1; do
  for spec in "reducescatter 2M" "allgather 4M" "allreduce 4M" "allreduce 2M" "sendrecv 4M" "broadcast 4M"; do
    set -- $spec
    echo "== Simple $1 $2 PDL=$pdl"
    NCCL_PROTO=Simple MCCL_PDL=$pdl MCCL_PROFILE=1 timeout 60 $TB -r 2 -b $2 -e $2 -n 200 -G 0 -o $1 2>&1 | grep -v "^#" | grep -E "^[a-z]|Simple start|Simple:" | cut -c1-400
  done
  for spec in "allreduce 1M LL128" "allreduce 64K LL" "allreduce 8 LL"; do
    set -- $spec
    echo "== $3 $1 $2 PDL=$pdl"
    NCCL_PROTO=$3 MCCL_PDL=$pdl MCCL_PROFILE=1 timeout 60 $TB -r 2 -b $2 -e $2 -n 200 -G 0 -o $1 2>&1 | grep -v "^#" | grep -E "^[a-z]|LL:" | cut -c1-400
  done
done 2>&1 | tee $OUT/profile.txt
