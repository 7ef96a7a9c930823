#!/usr/bin/env bash
# Call 4 (one H200): the landed form (DevComm's layout unchanged: the word's target in the
# field that was unused, the word in the abortFlag block). The single-process GPU tests on 2
# ranks sharing the GPU but the chained-results test, which failed in call 3 with the build
# before too and kills the context for the tests after it (it runs last, alone); the unit
# tests of the wait and the preload's test on two processes sharing the GPU;
# micro_word_wait, two rounds; LL sizes against the build before, two rounds.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
ln -sfn ab/old $B/old
gtests 2 "GpuSingleProcess.*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers:GpuSingleProcess.CollectivesChainedOnOneStreamReadEachOthersResults" 250
timeout 60 $B/mccl_unit_tests --gtest_filter='Completion.*' > $W/unit.log 2>&1
res "unit Completion" $? $W/unit.log
MCCL_SHARED_GPU=2 timeout 100 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x MCCL_SHARED_GPU \
  -x MCCL_TIMEOUT -x LD_LIBRARY_PATH=$L $B/mccl_preload_gpu_tests --gtest_filter='PreloadGpu.SmallCalls*' > $W/preload.log 2>&1
res "preload np 2 sharing the GPU" $? $W/preload.log
cp $T $OUT/tests.txt
for r in 1 2; do
  [ $SECONDS -lt 470 ] || continue
  timeout 60 $B/micro_word_wait 2 2000 2,256,16384 > $W/word_$r.txt 2>&1 || echo "word $r rc=$?" >> $W/errors.txt
done
for r in 1 2; do
  for v in old new; do
    [ $SECONDS -lt 520 ] || continue
    tb ll $v $r "-r 2 -b 8 -e 4K -f 8 -n 200 -G 20 -o allreduce,allgather,broadcast,sendrecv"
  done
done
if [ $SECONDS -lt 530 ]; then
  env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=2 MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=16 timeout 45 \
    $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.CollectivesChainedOnOneStreamReadEachOthersResults' > $W/chain_new.log 2>&1
  res "chain new" $? $W/chain_new.log
fi
for f in $W/word_*.txt; do echo "== $(basename $f)"; cat $f; done > $W/micro.txt
cp $W/micro.txt $OUT/
finish call4 ll
