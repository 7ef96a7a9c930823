#!/usr/bin/env bash
# Call 3 (one H200): call 2's first failing test (an illegal address in the 12 MiB Simple
# round of the chained-results test, MCCL_PDL=1), this build against the build before
# (ab/old, the same test binary), three times each, interleaved; then the LL sizes of call 2
# again against the build before, three more rounds (call 2 had this build 1-3 % slower in
# graphs at 8 B - 4 KiB).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for r in 1 2 3; do
  for v in new old; do
    lp=$L; [ $v = old ] && lp=$L/ab/old:$L
    env LD_LIBRARY_PATH=$lp MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16 timeout 90 \
      $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.CollectivesChainedOnOneStreamReadEachOthersResults' > $W/chain_${v}_$r.log 2>&1
    res "chain $v $r" $? $W/chain_${v}_$r.log
  done
done
ln -sfn ab/old $B/old
for r in 1 2 3; do
  for v in old new; do
    [ $SECONDS -lt 500 ] || continue
    tb ll $v $r "-r 2 -b 8 -e 4K -f 8 -n 200 -G 20 -o allreduce,allgather,broadcast,sendrecv,reducescatter"
  done
done
finish call3 ll
