#!/usr/bin/env bash
# Call 4 (one H200, two ranks as threads sharing it): cold code or not? A group of two calls
# (one launch of two Simple works) with the marks of each block's first and second work
# (two_works_marks_not_landed.diff, on start_marks_not_landed.diff; mccl-threads-bench's
# allreduce2 / broadcast2 ops). The second work runs the same code just after the first.
# Experiment build: only the Simple kernel and the two host files were rebuilt over the
# objects of call 2's build (its LL, generic and wide kernels carry the 32-bit divisions).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
TB=$B/mccl-threads-bench
for spec in "allreduce2 4M" "allreduce 4M" "broadcast2 4M" "broadcast 4M" "allreduce2 256K" "broadcast2 256K"; do
  set -- $spec
  for ch in 16 4; do
    echo "== Simple $1 $2 channels=$ch"
    NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=$ch MCCL_PDL=0 MCCL_PROFILE=1 timeout 60 $TB -r 2 -b $2 -e $2 -n 200 -G 0 -o $1 2>&1 | grep -v "^#" | grep -E "^[a-z]|Simple block start|second work|Simple:" | grep -v "rank 1" | cut -c1-420
  done
done 2>&1 | tee $OUT/profile.txt
