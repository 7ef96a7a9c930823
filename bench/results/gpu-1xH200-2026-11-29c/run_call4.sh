#!/usr/bin/env bash
# Call 4 (one H200): what griddepcontrol.wait costs with memory operations in flight
# (griddep_wait.cu, built here); then the landed build's LL-family launches with
# MCCL_PDL=0 against 2 (ranks as threads sharing the GPU), three rounds: how much of a
# small launch the overlap takes off on one GPU, the baseline for moving LL setup before
# the wait.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
$B/griddep_wait | tee $W/griddep_wait.txt
cp $W/griddep_wait.txt $OUT/
for r in 1 2 3; do
  for v in pdl0 pdl2; do
    tb ll $v $r "-r 2 -b 8 -e 2M -f 4 -n 200 -G 20 -o allreduce,reducescatter,allgather,broadcast,sendrecv" MCCL_PDL=${v#pdl}
  done
done
python3 bench/threads_ab.py $W ll=LL-family --ref pdl0 | tee $OUT/summary.txt
tar -czf "$OUT/call4.tgz" -C "$W" .
